#!/usr/bin/env python3
"""Checks a `--logits-out` file against the tokens `strata run` printed.

Usage: check-logits.py LOGITS.json RUN-OUTPUT VOCAB

Every row must hold VOCAB finite numbers that are not all equal, and its
argmax (ties to the lowest id, as greedy decoding breaks them) must be the
last token printed for that sequence. Prints one line per row.
"""
import json
import math
import re
import sys


def main() -> int:
    logits_path, run_path, vocab = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with open(logits_path) as f:
        data = json.load(f)
    rows = data["rows"]
    if data["vocab_size"] != vocab:
        print(f"vocab_size {data['vocab_size']} != {vocab}")
        return 1
    lines = [l for l in open(run_path).read().splitlines()
             if re.match(r"^(tokens|sequence \d+):", l)]
    if len(lines) != len(rows):
        print(f"{len(rows)} logits rows for {len(lines)} printed sequences")
        return 1
    for i, (row, line) in enumerate(zip(rows, lines)):
        if len(row) != vocab or not all(math.isfinite(v) for v in row):
            print(f"row {i}: expected {vocab} finite values")
            return 1
        if min(row) == max(row):
            print(f"row {i}: all values equal")
            return 1
        best = max(range(vocab), key=lambda t: (row[t], -t))
        last = int(line.split()[-1])
        print(f"row {i}: argmax {best}, last token {last}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
