#!/usr/bin/env python3
"""Reads a `strata bench --output json` document from stdin and prints it
one section per line, each result on its own line, so that FileCheck can
match a section or a row as a whole. Fails unless the input is one valid
JSON object with a "results" list.

Usage: strata-bench ... --output json | bench-json-lines.py
"""
import json
import sys


def main() -> int:
    doc = json.load(sys.stdin)
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), list):
        print("expected a JSON object with a results list")
        return 1
    for key, value in doc.items():
        if key != "results":
            print(f"{json.dumps(key)}: {json.dumps(value)}")
    print('"results": [')
    for row in doc["results"]:
        print(json.dumps(row))
    print("]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
