#!/usr/bin/env python3
"""Reads a `strata bench --ablate-passes --output json` document from stdin
and prints, for FileCheck, the verdict and one line per plan: its label,
its greedy-token verdict, its decode launches, the fusions it left out and
the tests it ran (each with whether it carries a change against the
reference). Fails unless the input is one valid JSON object with an
"ablation" section.

Usage: strata bench MODEL --ablate-passes --output json | ablation-json-lines.py
"""
import json
import sys


def main() -> int:
    doc = json.load(sys.stdin)
    ablation = doc.get("ablation") if isinstance(doc, dict) else None
    if not isinstance(ablation, dict):
        print("expected a JSON object with an ablation section")
        return 1
    print("reference:", ablation["reference"])
    print("greedy_tokens_identical:", json.dumps(ablation["greedy_tokens_identical"]))
    for plan in ablation["plans"]:
        tests = ", ".join(
            r["test"] + " batch " + str(r["batch"]) + (" change" if "change_vs_reference" in r else "")
            for r in plan["results"])
        print("plan %s | %s | %d launches | left out %s | %s"
              % (plan["label"], plan["greedy_tokens"], plan["launches_per_decode_step"],
                 json.dumps(plan["fusions"]["left_out"]), tests))
    return 0


if __name__ == "__main__":
    sys.exit(main())
