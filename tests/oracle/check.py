#!/usr/bin/env python3
"""Checks strata's CPU backend against one reference fixture.

Usage: check.py --strata PATH --fixture DIR --work DIR

DIR holds config.json, model.safetensors and expected.json (written by
scripts/hf-oracle.py). The config is converted with `strata import-hf`,
then for every case of expected.json:

  strata run MODEL --prompt-ids P --max-new-tokens 1 --logits-out A
      the logits of the prompt's last position, against prompt_logits;
  strata run MODEL --prompt-ids P --max-new-tokens N --logits-out B
      the greedy continuation, which must equal `continuation` token for
      token, and the logits of its last step, against final_logits.

A logits row passes when max|strata - expected| / max|expected| is at most
the fixture's logit_tolerance. Prints one line per check and exits 1 when
any fails (2 when the fixture itself is unusable).
"""
import argparse
import json
import os
import re
import subprocess
import sys


def run(cmd):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    text = proc.stdout.decode("utf-8", errors="replace")
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited with {proc.returncode}:\n{text}")
    return text


def tokens_of(output):
    for line in output.splitlines():
        m = re.match(r"^tokens:(.*)$", line)
        if m:
            return [int(t) for t in m.group(1).split()]
    raise RuntimeError(f"no 'tokens:' line in:\n{output}")


def logits_of(path):
    with open(path) as f:
        rows = json.load(f)["rows"]
    if len(rows) != 1:
        raise RuntimeError(f"{path}: expected one logits row, got {len(rows)}")
    return rows[0]


def rel_error(got, want):
    if len(got) != len(want):
        return float("inf")
    scale = max(abs(v) for v in want)
    return max(abs(a - b) for a, b in zip(got, want)) / scale


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--strata", required=True)
    parser.add_argument("--fixture", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    name = os.path.basename(os.path.normpath(args.fixture))
    try:
        with open(os.path.join(args.fixture, "expected.json")) as f:
            expected = json.load(f)
        tol = float(expected["logit_tolerance"])
        cases = expected["cases"]
        n = int(expected["continuation_tokens"])
    except (OSError, ValueError, KeyError) as e:
        print(f"{name}: error: unusable fixture: {e}")
        return 2
    if not cases:
        print(f"{name}: error: the fixture has no cases")
        return 2

    os.makedirs(args.work, exist_ok=True)
    model = os.path.join(args.work, "model.yaml")
    failures = 0
    try:
        run([args.strata, "import-hf", args.fixture, "-o", model])
        for i, case in enumerate(cases):
            ids = ",".join(str(t) for t in case["prompt"])
            first = os.path.join(args.work, f"case{i}-prompt.json")
            last = os.path.join(args.work, f"case{i}-final.json")
            run([args.strata, "run", model, "--prompt-ids", ids,
                 "--max-new-tokens", "1", "--logits-out", first])
            out = run([args.strata, "run", model, "--prompt-ids", ids,
                       "--max-new-tokens", str(n), "--logits-out", last])
            got = tokens_of(out)
            want = case["continuation"]
            same = got == want
            diverge = next((k for k, (a, b) in enumerate(zip(got, want))
                            if a != b), min(len(got), len(want)))
            e1 = rel_error(logits_of(first), case["prompt_logits"])
            e2 = rel_error(logits_of(last), case["final_logits"])
            ok = same and e1 <= tol and e2 <= tol
            failures += not ok
            print(f"{name} case {i} (prompt of {len(case['prompt'])}): "
                  f"{'PASS' if ok else 'FAIL'}: continuation "
                  f"{'equal' if same else f'differs at token {diverge}'}; "
                  f"logits max rel error {e1:.2e} (prompt), {e2:.2e} (last "
                  f"step), tolerance {tol:.0e}; smallest margin "
                  f"{case['min_margin_rel']:.3f}")
            if not same:
                print(f"  expected {want}\n  got      {got}")
    except RuntimeError as e:
        print(f"{name}: FAIL: {e}")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
