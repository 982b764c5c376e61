#!/usr/bin/env python3
"""Checks the default models (models/kjv, models/kjv-draft; docs/kjv-model.md)
against what PyTorch computed on the same weights (expected.json, written
from scripts/hf-perplexity.py's output when the models were trained):

1. the target's greedy continuation of expected.json's prompt contains its
   phrase ("the heaven and the earth");
2. each model's perplexity over jonah.txt (the book of Jonah, held out of
   training) is PyTorch's within expected.json's tolerance (1%), and so is
   its token count;
and, before both, that the weights are the ones those figures belong to
(expected.json's sha256).

Two modes, like tests/oracle/check.py:

  --strata PATH --models DIR
      `strata run DIR/kjv/model.yaml` and `strata perplexity`, CPU backend;
  --strata-run PATH --plan-dir DIR --models DIR --device cpu|cuda
      the plans kjv.fused.splan (generation) and NAME.score.splan (scoring,
      --all-token-logits) from DIR (or $STRATA_PLAN_DIR), with
      --weights DIR/NAME/model.safetensors.

With --device cuda and no CUDA device the check is skipped (exit 77), or
fails when STRATA_REQUIRE_GPU is set to anything but 0.
"""
import argparse
import hashlib
import json
import os
import subprocess
import sys

SKIP = 77
HERE = os.path.dirname(os.path.abspath(__file__))


def run(cmd):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = proc.stdout.decode("utf-8", errors="replace")
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", errors="replace")
        raise RuntimeError(f"{' '.join(cmd)} exited with {proc.returncode}:\n"
                           f"{out}{err}")
    return out


def gpu_required():
    value = os.environ.get("STRATA_REQUIRE_GPU")
    return value is not None and value != "0"


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    tool = parser.add_mutually_exclusive_group(required=True)
    tool.add_argument("--strata")
    tool.add_argument("--strata-run")
    parser.add_argument("--models", required=True,
                        help="the folder holding kjv/ and kjv-draft/")
    parser.add_argument("--plan-dir")
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--expected", default=os.path.join(HERE,
                                                           "expected.json"))
    parser.add_argument("--text", default=os.path.join(HERE, "jonah.txt"))
    args = parser.parse_args()
    if args.strata and args.device != "cpu":
        parser.error("--strata runs on the CPU backend only")
    with open(args.expected) as f:
        expected = json.load(f)
    label = f"kjv ({args.device})"

    if args.strata_run:
        plan_dir = os.environ.get("STRATA_PLAN_DIR") or args.plan_dir
        if not plan_dir:
            parser.error("--strata-run needs --plan-dir or STRATA_PLAN_DIR")
        if args.device == "cuda":
            devices = run([args.strata_run, "--list-devices"]).strip()
            if devices.startswith("no CUDA device"):
                if gpu_required():
                    print(f"{label}: FAIL: {devices} (STRATA_REQUIRE_GPU is "
                          f"set)")
                    return 1
                print(f"{label}: SKIPPED: {devices}")
                return SKIP

    def generate(prompt, tokens):
        options = ["--prompt", prompt, "--max-new-tokens", str(tokens)]
        if args.strata:
            return run([args.strata, "run",
                        os.path.join(args.models, "kjv", "model.yaml")]
                       + options)
        return run([args.strata_run,
                    os.path.join(plan_dir, "kjv.fused.splan"), "--weights",
                    os.path.join(args.models, "kjv", "model.safetensors"),
                    "--device", args.device] + options)

    def perplexity(name):
        if args.strata:
            cmd = [args.strata, "perplexity",
                   os.path.join(args.models, name, "model.yaml")]
        else:
            cmd = [args.strata_run,
                   os.path.join(plan_dir, f"{name}.score.splan"), "--weights",
                   os.path.join(args.models, name, "model.safetensors"),
                   "--device", args.device, "--perplexity"]
        if args.strata:
            cmd += ["--file"]
        return json.loads(run(cmd + [args.text, "--json"]))

    failures = 0
    # The figures belong to one set of weights: other weights (a retrained
    # model) need a new expected.json, not a looser tolerance.
    for name, want in expected["models"].items():
        path = os.path.join(args.models, name, "model.safetensors")
        try:
            with open(path, "rb") as f:
                digest = hashlib.sha256(f.read()).hexdigest()
        except OSError as e:
            print(f"{label}: FAIL: cannot read {path}: {e.strerror}")
            failures += 1
            continue
        if digest != want["safetensors_sha256"]:
            print(f"{label}: FAIL: {path} is not the file expected.json's "
                  f"figures were computed from (sha256 {digest}, expected "
                  f"{want['safetensors_sha256']}); write expected.json from "
                  f"the report.json of the run that made it")
            failures += 1
    if failures:
        return 1
    text = generate(expected["prompt"], expected["max_new_tokens"])
    if expected["phrase"] in text:
        print(f"{label}: {expected['prompt']!r} -> {text!r}")
    else:
        print(f"{label}: FAIL: the continuation of {expected['prompt']!r} "
              f"does not contain {expected['phrase']!r}: {text!r}")
        failures += 1

    tolerance = expected["tolerance"]
    for name, want in expected["models"].items():
        got = perplexity(name)
        ref = want["pytorch"]
        rel = abs(got["perplexity"] - ref["perplexity"]) / ref["perplexity"]
        line = (f"{label}: {name} perplexity {got['perplexity']:.3f}, "
                f"PyTorch {ref['perplexity']:.3f} ({100 * rel:.2f}%, "
                f"tolerance {100 * tolerance:g}%) over {got['tokens']} tokens")
        if got["tokens"] != ref["tokens"] or rel > tolerance:
            print(f"{line}: FAIL (PyTorch scored {ref['tokens']} tokens)")
            failures += 1
        else:
            print(line)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
