#!/usr/bin/env python3
"""Writes a copy of a safetensors file with its layout damaged.

Usage: damage-safetensors.py IN.safetensors OUT.safetensors MODE

MODE is one of:
  overlap   the second tensor in data order starts 2 bytes early, inside
            the first one (same size, so the file keeps its length)
  gap       every tensor after the first moves 2 bytes later, leaving
            2 bytes between the first two
  trailing  4 bytes appended after the last tensor
"""
import json
import struct
import sys


def main() -> int:
    src, dst, mode = sys.argv[1], sys.argv[2], sys.argv[3]
    with open(src, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    body = data[8 + n:]
    names = sorted((k for k in header if k != "__metadata__"),
                   key=lambda k: header[k]["data_offsets"][0])
    if mode == "overlap":
        begin, end = header[names[1]]["data_offsets"]
        header[names[1]]["data_offsets"] = [begin - 2, end - 2]
    elif mode == "gap":
        for name in names[1:]:
            begin, end = header[name]["data_offsets"]
            header[name]["data_offsets"] = [begin + 2, end + 2]
        cut = json.loads(data[8:8 + n])[names[0]]["data_offsets"][1]
        body = body[:cut] + b"\0\0" + body[cut:]
    elif mode == "trailing":
        body += b"tail"
    else:
        print(f"unknown mode {mode}", file=sys.stderr)
        return 2
    text = json.dumps(header, separators=(",", ":")).encode()
    with open(dst, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        f.write(body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
