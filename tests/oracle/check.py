#!/usr/bin/env python3
"""Checks strata against one transformers reference fixture.

Usage:
  check.py --strata PATH --fixture DIR --work DIR
  check.py --strata-run PATH (--plan PLAN | --plan-dir DIR)
           [--device cpu|cuda] --fixture DIR --work DIR

DIR holds config.json, model.safetensors and expected.json (written by
scripts/hf-oracle.py).

With --strata (the full tool, CPU backend) the config is converted with
`strata import-hf` and every case runs through `strata run MODEL.yaml`.

With --strata-run (runtime only) the plan was made beforehand (`strata
import-hf DIR -o M.yaml`, `strata compile M.yaml --emit=fused -o PLAN`) and
every case runs through `strata-run PLAN --weights DIR/model.safetensors
--device D`. --plan-dir names the folder of the plan
`oracle-NAME.fused.splan` (NAME: the fixture folder's name); the
environment variable STRATA_PLAN_DIR overrides it. A missing plan fails.
With --device cuda and no CUDA device (`strata-run --list-devices`) the
check is skipped (exit 77), or fails when STRATA_REQUIRE_GPU is set to
anything but 0.

For every case of expected.json:

  --prompt-ids P --max-new-tokens 1 --logits-out A
      the logits of the prompt's last position, against prompt_logits;
  --prompt-ids P --max-new-tokens N --logits-out B
      the greedy continuation, which must equal `continuation` token for
      token, and the logits of its last step, against final_logits.

A logits row passes when max|strata - expected| / max|expected| is at most
the fixture's logit_tolerance. Prints one line per check and exits 1 when
any fails (2 when the fixture itself is unusable, 77 when skipped).
"""
import argparse
import json
import os
import re
import subprocess
import sys

SKIP = 77


def run(cmd):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    text = proc.stdout.decode("utf-8", errors="replace")
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited with {proc.returncode}:\n{text}")
    return text


def tokens_of(output):
    for line in output.splitlines():
        m = re.match(r"^tokens:([0-9 ]*)( \(stopped: .*\))?$", line)
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


def gpu_required():
    value = os.environ.get("STRATA_REQUIRE_GPU")
    return value is not None and value != "0"


def parse_args():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    tool = parser.add_mutually_exclusive_group(required=True)
    tool.add_argument("--strata", help="the strata tool (import-hf + run)")
    tool.add_argument("--strata-run", help="the runtime-only strata-run")
    parser.add_argument("--plan", help="the compiled plan (with --strata-run)")
    parser.add_argument("--tokenizer",
                        help="with --strata: a folder with a tokenizer.json "
                             "to import with the checkpoint, so that a text "
                             "prompt is checked too")
    parser.add_argument("--plan-dir",
                        help="folder of oracle-NAME.fused.splan (with "
                             "--strata-run; STRATA_PLAN_DIR overrides it)")
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--fixture", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    if args.strata and (args.plan or args.plan_dir or args.device != "cpu"):
        parser.error("--plan, --plan-dir and --device go with --strata-run "
                     "(strata run here imports the config itself and runs "
                     "on the CPU)")
    if args.strata_run and not (args.plan or args.plan_dir):
        parser.error("--strata-run needs --plan or --plan-dir")
    return args


def checkpoint_with_tokenizer(fixture, tokenizer, work):
    """The fixture as a checkpoint folder that also holds a tokenizer (links
    in the work folder), so that import-hf writes its tokenizer entry."""
    if not tokenizer:
        return fixture
    # Only a model with a row for every id of the tokenizer can use it.
    with open(os.path.join(fixture, "config.json")) as f:
        vocab = json.load(f)["vocab_size"]
    with open(os.path.join(tokenizer, "tokenizer.json")) as f:
        t = json.load(f)
    ids = list(t["model"]["vocab"].values()) + [a["id"] for a in
                                                t["added_tokens"]]
    if max(ids) >= vocab:
        return fixture
    folder = os.path.join(work, "checkpoint")
    os.makedirs(folder, exist_ok=True)
    for source, names in ((fixture, ("config.json", "model.safetensors")),
                          (tokenizer, ("tokenizer.json",
                                       "tokenizer_config.json"))):
        for file in names:
            link = os.path.join(folder, file)
            if os.path.lexists(link):
                os.remove(link)
            os.symlink(os.path.abspath(os.path.join(source, file)), link)
    return folder


def check_text_prompt(strata, model, label, n):
    """A text prompt gives the tokens its ids give: text -> ids (strata
    tokenize, with BOS) -> the same continuation as --prompt-ids. Returns
    the number of failures (0 or 1); nothing to check without a tokenizer."""
    with open(model) as f:
        if "\ntokenizer:" not in f.read():
            return 0
    text = "the cat sat on the mat"
    ids = run([strata, "tokenize", model, "--text", text, "--special"])
    ids = ",".join(ids.split())
    from_text = tokens_of(run([strata, "run", model, "--prompt", text,
                               "--print-ids", "--max-new-tokens", str(n)]))
    from_ids = tokens_of(run([strata, "run", model, "--prompt-ids", ids,
                              "--max-new-tokens", str(n)]))
    ok = from_text == from_ids and len(from_ids) > 0
    print(f"{label} text prompt: {'PASS' if ok else 'FAIL'}: '{text}' is "
          f"ids {ids}; continuation {from_text} from the text, {from_ids} "
          f"from the ids")
    return 0 if ok else 1


def main():
    args = parse_args()
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
    if args.strata:
        label = name
        model = os.path.join(args.work, "model.yaml")
        command = [args.strata, "run", model]
    else:
        plan = args.plan
        if not plan:
            folder = os.environ.get("STRATA_PLAN_DIR") or args.plan_dir
            plan = os.path.join(folder, f"oracle-{name}.fused.splan")
        label = f"{name} ({args.device})"
        command = [args.strata_run, plan, "--weights",
                   os.path.join(args.fixture, "model.safetensors"),
                   "--device", args.device]
    failures = 0
    try:
        if args.strata_run and args.device == "cuda":
            devices = run([args.strata_run, "--list-devices"]).strip()
            if devices.startswith("no CUDA device"):
                if gpu_required():
                    print(f"{label}: FAIL: {devices} (STRATA_REQUIRE_GPU is "
                          f"set)")
                    return 1
                print(f"{label}: SKIPPED: {devices}")
                return SKIP
        # After the device check: without a device the test is skipped
        # whether or not the plans were built.
        if args.strata_run and not os.path.isfile(plan):
            print(f"{label}: FAIL: no plan file {plan} (the full build makes "
                  f"it: target strata-oracle-plans; or set STRATA_PLAN_DIR)")
            return 1
        if args.strata:
            run([args.strata, "import-hf", checkpoint_with_tokenizer(
                args.fixture, args.tokenizer, args.work), "-o", model])
            failures += check_text_prompt(args.strata, model, label, n)
        for i, case in enumerate(cases):
            ids = ",".join(str(t) for t in case["prompt"])
            first = os.path.join(args.work, f"case{i}-prompt.json")
            last = os.path.join(args.work, f"case{i}-final.json")
            run(command + ["--prompt-ids", ids, "--max-new-tokens", "1",
                           "--logits-out", first])
            out = run(command + ["--prompt-ids", ids, "--max-new-tokens",
                                 str(n), "--logits-out", last])
            got = tokens_of(out)
            want = case["continuation"]
            same = got == want
            diverge = next((k for k, (a, b) in enumerate(zip(got, want))
                            if a != b), min(len(got), len(want)))
            e1 = rel_error(logits_of(first), case["prompt_logits"])
            e2 = rel_error(logits_of(last), case["final_logits"])
            ok = same and e1 <= tol and e2 <= tol
            failures += not ok
            print(f"{label} case {i} (prompt of {len(case['prompt'])}): "
                  f"{'PASS' if ok else 'FAIL'}: continuation "
                  f"{'equal' if same else f'differs at token {diverge}'}; "
                  f"logits max rel error {e1:.2e} (prompt), {e2:.2e} (last "
                  f"step), tolerance {tol:.0e}; smallest margin "
                  f"{case['min_margin_rel']:.3f}")
            if not same:
                print(f"  expected {want}\n  got      {got}")
    except (RuntimeError, OSError) as e:
        print(f"{label}: FAIL: {e}")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
