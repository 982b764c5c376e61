#!/usr/bin/env python3
"""Writes a float32 copy of a bf16 safetensors file.

Usage: widen-safetensors.py IN.safetensors OUT.safetensors

Every BF16 tensor becomes an F32 tensor of the same values (a bf16 value
is the upper half of the float32 with the same value, so the widening is
exact); other tensors are copied. The tensors keep their order.
"""
import json
import struct
import sys


def main() -> int:
    src, dst = sys.argv[1], sys.argv[2]
    with open(src, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    body = data[8 + n:]
    out_header, chunks, offset = {}, [], 0
    names = [k for k in header if k != "__metadata__"]
    names.sort(key=lambda k: header[k]["data_offsets"][0])
    if "__metadata__" in header:
        out_header["__metadata__"] = header["__metadata__"]
    for name in names:
        info = dict(header[name])
        begin, end = info["data_offsets"]
        raw = body[begin:end]
        if info["dtype"] == "BF16":
            halves = struct.unpack(f"<{len(raw) // 2}H", raw)
            raw = struct.pack(f"<{len(halves)}I", *(h << 16 for h in halves))
            info["dtype"] = "F32"
        info["data_offsets"] = [offset, offset + len(raw)]
        offset += len(raw)
        out_header[name] = info
        chunks.append(raw)
    text = json.dumps(out_header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(dst, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for c in chunks:
            f.write(c)
    return 0


if __name__ == "__main__":
    sys.exit(main())
