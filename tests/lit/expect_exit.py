#!/usr/bin/env python3
"""Runs a command and succeeds only if it exits with the expected code.

Usage: expect_exit.py CODE COMMAND [ARGS...]

The command's stdout and stderr are passed through (stderr to stdout, so a
FileCheck after the pipe sees both in order). lit's internal shell has no
`$?`, and `not` accepts any non-zero code; tools here promise exact codes
(docs/cli.md), so tests check them exactly. A crash (death by signal) never
matches.
"""
import subprocess
import sys


def main() -> int:
    if len(sys.argv) < 3:
        print("usage: expect_exit.py CODE COMMAND [ARGS...]", file=sys.stderr)
        return 2
    expected = int(sys.argv[1])
    proc = subprocess.run(sys.argv[2:], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    sys.stdout.write(proc.stdout.decode("utf-8", errors="replace"))
    sys.stdout.flush()
    if proc.returncode != expected:
        how = f"signal {-proc.returncode}" if proc.returncode < 0 else f"exit code {proc.returncode}"
        print(f"expect_exit: expected exit code {expected}, got {how}: {' '.join(sys.argv[2:])}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
