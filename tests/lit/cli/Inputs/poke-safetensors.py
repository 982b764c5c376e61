#!/usr/bin/env python3
"""Writes a copy of a safetensors file with one element's bits replaced.

Usage: poke-safetensors.py IN.safetensors OUT.safetensors TENSOR INDEX BITS

BITS is the element's new bit pattern in hexadecimal (0x7fc0 is a bf16
NaN, 0x7f800000 an f32 infinity); its width is the tensor's dtype's.
"""
import json
import struct
import sys

WIDTH = {"BF16": 2, "F16": 2, "F32": 4}


def main() -> int:
    src, dst, name, index, bits = sys.argv[1:6]
    with open(src, "rb") as f:
        data = bytearray(f.read())
    (n,) = struct.unpack("<Q", data[:8])
    info = json.loads(data[8:8 + n])[name]
    width = WIDTH[info["dtype"]]
    at = 8 + n + info["data_offsets"][0] + int(index) * width
    data[at:at + width] = int(bits, 16).to_bytes(width, "little")
    with open(dst, "wb") as f:
        f.write(data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
