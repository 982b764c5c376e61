#!/usr/bin/env bash
# Longer fuzzing runs than ctest's short ones (docs/testing.md). Configures
# and builds the sanitizer build when needed.
#
#   scripts/fuzz.sh [-t SECONDS] [-j JOBS] [-k] [TARGET...]
#                                        fuzz (default: every target, 300 s
#                                        each, one job); -k keeps going
#                                        after a finding (saving each)
#   scripts/fuzz.sh --replay FILE_OR_DIR... --target TARGET
#                                        run inputs once (a finding, a
#                                        regression or a pending input)
#   scripts/fuzz.sh --pending            replay tests/fuzz/pending/*/ (inputs
#                                        that still fail, awaiting a fix;
#                                        exit code 1 while any does)
#   scripts/fuzz.sh --list               the targets
#
# Targets: model-yaml, model-compile, hf-config, json, safetensors, plan,
# plan-run, cli-args (the header of each tests/fuzz/Fuzz*.cpp says what it
# reads and checks). Each run keeps its corpus in
# $STRATA_SAN_BUILD_DIR/fuzz-long/TARGET/corpus (it grows from run to run;
# delete it to start over from the seeds) and writes what it finds to
# .../TARGET/artifacts/ (crash-*, leak-*, oom-*, timeout-*), with the log of
# the last run in .../TARGET/last-run.log. A new seed is drawn each run.
#
#   STRATA_SAN_BUILD_DIR  the sanitizer build folder (default: build-san)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
san=${STRATA_SAN_BUILD_DIR:-$root/build-san}
targets_all=(model-yaml model-compile hf-config json safetensors plan
             plan-run cli-args)
driver=$root/tests/fuzz/run_fuzzer.py

seconds=300
jobs=1
mode=fuzz
keep_going=()
target=""
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    -t) seconds=$2; shift 2 ;;
    -j) jobs=$2; shift 2 ;;
    -k) keep_going=(--keep-going); shift ;;
    --replay) mode=replay; shift ;;
    --target) target=$2; shift 2 ;;
    --pending) mode=pending; shift ;;
    --list) printf '%s\n' "${targets_all[@]}"; exit 0 ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"
               exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) args+=("$1"); shift ;;
  esac
done

if [ ! -f "$san/build.ninja" ]; then
  STRATA_BUILD_DIR=$san \
  STRATA_CMAKE_ARGS="-DSTRATA_ENABLE_CUDA=OFF -DSTRATA_SANITIZE=ON -DSTRATA_ENABLE_FUZZERS=ON" \
    "$root/scripts/setup.sh"
fi
cmake --build "$san" -j "$(nproc)"
fuzzer() { echo "$san/tests/fuzz/fuzz-$1"; }

case $mode in
  replay)
    [ -n "$target" ] || { echo "fuzz.sh: --replay needs --target" >&2; exit 2; }
    exec python3 "$driver" replay --fuzzer "$(fuzzer "$target")" "${args[@]}" ;;
  pending)
    status=0
    for dir in "$root"/tests/fuzz/pending/*/; do
      [ -d "$dir" ] || { echo "fuzz.sh: no pending inputs"; break; }
      t=$(basename "$dir")
      echo "== pending inputs of $t"
      python3 "$driver" replay --fuzzer "$(fuzzer "$t")" "$dir" || status=1
    done
    exit $status ;;
esac

[ ${#args[@]} -gt 0 ] || args=("${targets_all[@]}")
status=0
for t in "${args[@]}"; do
  dict=$root/tests/fuzz/dict/$t.dict
  case $t in
    model-compile) dict=$root/tests/fuzz/dict/model-yaml.dict ;;
    safetensors) dict=$root/tests/fuzz/dict/json.dict ;;
  esac
  dict_args=()
  [ -f "$dict" ] && dict_args=(--dict "$dict")
  echo "== fuzzing $t for $seconds s ($jobs job(s))"
  python3 "$driver" fuzz --fuzzer "$(fuzzer "$t")" \
    --work "$san/fuzz-long/$t" --keep-corpus \
    --seeds "$san/tests/fuzz/seeds/$t" "${dict_args[@]}" \
    --seconds "$seconds" --jobs "$jobs" "${keep_going[@]}" || status=1
done
exit $status
