#!/usr/bin/env python3
"""Runs a libFuzzer target for ctest and scripts/fuzz.sh.

  run_fuzzer.py fuzz   --fuzzer BIN --work DIR [--seeds DIR] [--dict FILE]
                       [--seconds N] [--runs N] [--seed N] [--keep-corpus]
                       [--keep-going] [--jobs N]
  run_fuzzer.py replay --fuzzer BIN [--expect KIND] FILE_OR_DIR...

`fuzz` searches from the seeds for --seconds or --runs, whichever ends
first, with the corpus, the files of findings and the log under DIR.
`replay` runs each given input once (every file of a directory). Both use
the same limits, so that a single allocation beyond --malloc-limit-mb
(default 512) or a resident size beyond 2048 MB is a finding like a crash,
a sanitizer report, a leak or a hang (an input running longer than
--timeout seconds, default 10).

Exit code 0 when nothing was found, else 1 after naming the finding and
how to reproduce it: libFuzzer's own codes differ by kind (77 for a leak or
an out-of-memory, the GPU tests' code for "skipped"; 70 for a timeout). With
--expect KIND (crash, ubsan, oom, leak or timeout), replay succeeds only
when every input gives a finding of that kind: the driver's self-test.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

# What libFuzzer and the sanitizers print, by kind of finding; where two
# match at the same place (an ASan report that is an allocation failure),
# the earlier entry names it.
KINDS = [
    ("timeout", re.compile(r"ERROR: libFuzzer: timeout")),
    ("oom", re.compile(r"ERROR: libFuzzer: out-of-memory|"
                       r"ERROR: AddressSanitizer: (requested allocation size|"
                       r"out of memory|allocation-size-too-big)")),
    ("leak", re.compile(r"ERROR: LeakSanitizer")),
    ("ubsan", re.compile(r"runtime error: ")),
    ("crash", re.compile(r"ERROR: AddressSanitizer|ERROR: libFuzzer: "
                         r"deadly signal|fuzz invariant failed")),
]


def limits(args):
    return ["-rss_limit_mb=2048", "-malloc_limit_mb=%d" % args.malloc_limit_mb,
            "-timeout=%d" % args.timeout]


def classify(output):
    """The kind of the first report in the output: a slow report (symbolizing
    a large binary) can be followed by a timeout report of its own."""
    first = None
    for kind, pattern in KINDS:
        m = pattern.search(output)
        if m and (first is None or m.start() < first[0]):
            first = (m.start(), kind)
    return first[1] if first else "crash"


def run(cmd):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    return proc.returncode, proc.stdout.decode("utf-8", errors="replace")


def fuzz(args):
    corpus = os.path.join(args.work, "corpus")
    artifacts = os.path.join(args.work, "artifacts")
    if not args.keep_corpus and os.path.isdir(corpus):
        shutil.rmtree(corpus)
    os.makedirs(corpus, exist_ok=True)
    os.makedirs(artifacts, exist_ok=True)
    cmd = [args.fuzzer] + limits(args) + [
        "-max_total_time=%d" % args.seconds,
        "-artifact_prefix=" + artifacts + "/",
        "-print_final_stats=1",
    ]
    if args.runs:
        cmd.append("-runs=%d" % args.runs)
    if args.seed:
        cmd.append("-seed=%d" % args.seed)
    if args.dict:
        cmd.append("-dict=" + args.dict)
    if args.keep_going:
        # Fork mode: each finding is saved and the search goes on.
        cmd += ["-fork=%d" % args.jobs, "-ignore_crashes=1", "-ignore_ooms=1",
                "-ignore_timeouts=1"]
    elif args.jobs > 1:
        cmd.append("-fork=%d" % args.jobs)
    cmd.append(corpus)
    if args.seeds and os.path.isdir(args.seeds):
        cmd.append(args.seeds)
    print("+ " + " ".join(cmd), flush=True)
    before = set(os.listdir(artifacts))
    code, output = run(cmd)
    with open(os.path.join(args.work, "last-run.log"), "w") as f:
        f.write(output)
    files = sorted(os.path.join(artifacts, n)
                   for n in set(os.listdir(artifacts)) - before)
    if code == 0 and not files:
        # The final stats, or a fork-mode run's last status line.
        stats = [l for l in output.splitlines()
                 if l.startswith("stat::number_of_executed_units") or l.startswith("#")]
        print("fuzz: nothing found (%s)" % (stats[-1] if stats else "no stats"))
        return 0
    # A --keep-going run's log is long; its findings are in the files.
    lines = output.splitlines(keepends=True)
    sys.stdout.write("".join(lines[-300:]))
    kind = classify(output) if code != 0 else "see the inputs"
    print("fuzz: FINDING (%s) by %s" % (kind, os.path.basename(args.fuzzer)))
    for path in files:
        print("fuzz: input saved as %s\nfuzz: reproduce with: %s %s" % (path, args.fuzzer, path))
    return 1


def replay(args):
    inputs = []
    for item in args.inputs:
        if os.path.isdir(item):
            inputs += sorted(os.path.join(item, n) for n in os.listdir(item)
                             if os.path.isfile(os.path.join(item, n)))
        elif os.path.isfile(item):
            inputs.append(item)
        else:
            print("replay: no such input: %s" % item)
            return 1
    if not inputs:
        print("replay: no inputs given")
        return 1
    failures = 0
    for path in inputs:
        code, output = run([args.fuzzer] + limits(args) + [path])
        kind = classify(output) if code != 0 else None
        if args.expect:
            ok = kind == args.expect
            verdict = "found %s as expected" % kind if ok else \
                "expected a finding of kind %s, got %s" % (args.expect, kind or "none")
        else:
            ok = code == 0
            verdict = "ok" if ok else "FINDING (%s)" % kind
        print("replay: %s: %s" % (path, verdict))
        if not ok:
            failures += 1
            sys.stdout.write(output)
    print("replay: %d of %d inputs failed" % (failures, len(inputs)))
    return 1 if failures else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["fuzz", "replay"])
    ap.add_argument("--fuzzer", required=True)
    ap.add_argument("--timeout", type=int, default=10)
    ap.add_argument("--malloc-limit-mb", type=int, default=512)
    ap.add_argument("--work")
    ap.add_argument("--seeds")
    ap.add_argument("--dict")
    ap.add_argument("--seconds", type=int, default=10,
                    help="stop after this long")
    ap.add_argument("--runs", type=int, default=0,
                    help="stop after this many inputs (0: no limit); with a "
                    "fixed --seed the run is then the same on every machine")
    ap.add_argument("--keep-going", action="store_true",
                    help="save each finding and go on searching")
    ap.add_argument("--seed", type=int, default=0,
                    help="libFuzzer's random seed (0: a new one each run)")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--keep-corpus", action="store_true")
    ap.add_argument("--expect", choices=[k for k, _ in KINDS])
    ap.add_argument("inputs", nargs="*")
    args = ap.parse_intermixed_args()
    if args.mode == "fuzz":
        if not args.work:
            ap.error("fuzz needs --work")
        return fuzz(args)
    return replay(args)


if __name__ == "__main__":
    sys.exit(main())
