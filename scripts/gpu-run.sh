#!/usr/bin/env bash
# The one script the GPU machine runs. It builds nothing: it takes a build
# folder made elsewhere (runtime-only configuration, carried to the machine)
# and runs
#   1. every GPU test (ctest label "gpu", STRATA_REQUIRE_GPU=1 so that a
#      missing device fails instead of skipping), output shown on failure;
#      first, the compiled plans those tests load must be of this source's
#      plan format (else exit 2, naming the stale ones);
#   2. every benchmark binary bench/strata-bench-* (each writes JSON);
#   3. with --memcheck, every GPU test executable (or those whose name
#      matches REGEX) once more under compute-sanitizer's memcheck tool;
# and prints a summary table last. Logs and JSON go to $OUT when it is set
# (else to <build>/gpu-run-logs). New tests and benchmarks join by being
# built: nothing here names a kernel.
#
# usage: scripts/gpu-run.sh [--build-dir DIR] [--tests REGEX]
#                           [--memcheck[=REGEX]] [--no-tests] [--no-bench]
#                           [--bench-args "ARGS"]
# --tests keeps the GPU tests whose ctest name matches REGEX (ctest -R);
# a REGEX that selects none fails the run.
set -uo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$repo/build-rt"
memcheck=""
run_tests=1
run_bench=1
bench_args=""
tests_regex=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build="$(cd "$2" && pwd)"; shift ;;
    --tests) tests_regex="$2"; shift ;;
    --memcheck) memcheck="." ;;
    --memcheck=*) memcheck="${1#--memcheck=}" ;;
    --no-tests) run_tests=0 ;;
    --no-bench) run_bench=0 ;;
    --bench-args) bench_args="$2"; shift ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "gpu-run.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done

# Shared libraries the build needs that the GPU machine may lack (the
# tokenizer's libonig.so.5) travel in <build>/lib.
[ -d "$build/lib" ] && export LD_LIBRARY_PATH="$build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if [ ! -f "$build/CMakeCache.txt" ]; then
  echo "gpu-run.sh: no build folder at $build (configure and build it first," \
       "then carry it)" >&2
  exit 2
fi
# The engine and oracle tests load compiled plans (STRATA_PLAN_DIR, else
# <build>/plans). A folder of another plan format fails each of them with
# the same message; say it once, before any test runs.
if [ "$run_tests" = 1 ]; then
  plan_dir="${STRATA_PLAN_DIR:-$build/plans}"
  want="$(sed -n 's/^constexpr uint32_t kPlanFormatVersion = \([0-9]*\);.*/\1/p' \
    "$repo/runtime/plan/Plan.h")"
  stale=()
  for plan in "$plan_dir"/*.splan; do
    [ -f "$plan" ] || continue
    got="$(od -An -tu4 -j8 -N4 "$plan" | tr -d ' ')"
    [ "$got" = "$want" ] || stale+=("$(basename "$plan") (format ${got:-?})")
  done
  if [ ${#stale[@]} -gt 0 ]; then
    echo "gpu-run.sh: plans in $plan_dir are not of this build's format" \
         "$want: ${stale[*]}; recompile them (ninja strata-test-plans" \
         "strata-oracle-plans in a full build) and carry them" >&2
    exit 2
  fi
fi

logs="${OUT:-$build/gpu-run-logs}"
mkdir -p "$logs"
summary="$logs/summary.md"
: > "$summary"

# ctest files hold the absolute path the build was configured at; when the
# folder was carried elsewhere, make that path lead here.
configured="$(sed -n 's/^CMAKE_CACHEFILE_DIR:INTERNAL=//p' "$build/CMakeCache.txt")"
if [ -n "$configured" ] && [ "$configured" != "$build" ] && [ ! -e "$configured" ]; then
  mkdir -p "$(dirname "$configured")" && ln -s "$build" "$configured" &&
    echo "note: linked $configured -> $build (build folder was relocated)"
fi

echo "== device"
nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.mem,temperature.gpu \
  --format=csv 2>&1 | tee "$logs/device.txt"

status=0
test_line="not run"
if [ "$run_tests" = 1 ]; then
  echo "== GPU tests (ctest -L gpu)"
  # --no-tests=error: a filter that selects nothing (or that ctest cannot
  # parse) fails the run instead of passing it.
  STRATA_REQUIRE_GPU=1 ctest --test-dir "$build" -L gpu \
    ${tests_regex:+-R "$tests_regex"} --no-tests=error --output-on-failure \
    --timeout 600 2>&1 | tee "$logs/gpu-tests.log"
  [ "${PIPESTATUS[0]}" = 0 ] || status=1
  test_line="$(grep -E 'tests passed|No tests were found' "$logs/gpu-tests.log" | tail -1)"
  [ -n "$test_line" ] || { test_line="ctest did not finish"; status=1; }
fi

memcheck_lines=()
if [ -n "$memcheck" ]; then
  sanitizer="$(command -v compute-sanitizer ||
    ls /usr/local/cuda/bin/compute-sanitizer \
       /usr/local/cuda/compute-sanitizer/compute-sanitizer 2>/dev/null | head -1)"
  sanitizer="${sanitizer:-compute-sanitizer}"
  echo "== memcheck ($sanitizer)"
  : > "$logs/memcheck.log"
  while IFS= read -r exe; do
    name="$(basename "$exe")"
    [[ "$name" =~ $memcheck ]] || continue
    echo "-- $name" | tee -a "$logs/memcheck.log"
    STRATA_REQUIRE_GPU=1 "$sanitizer" --tool memcheck --error-exitcode 99 \
      --leak-check full "$exe" 2>&1 | tee -a "$logs/memcheck.log"
    rc="${PIPESTATUS[0]}"
    errors="$(grep -Eo 'ERROR SUMMARY: [0-9]+ error' "$logs/memcheck.log" | tail -1)"
    if [ "$rc" = 0 ]; then
      memcheck_lines+=("| memcheck $name | pass (${errors:-no summary}) |")
    else
      memcheck_lines+=("| memcheck $name | FAIL rc=$rc (${errors:-no summary}) |")
      status=1
    fi
  done < <(find "$build/tests/gpu" -type f -perm -u+x -name 'gpu-*' | sort)
  [ ${#memcheck_lines[@]} -gt 0 ] ||
    memcheck_lines+=("| memcheck | no GPU test executable matched '$memcheck' |")
fi

bench_rows=()
if [ "$run_bench" = 1 ]; then
  : > "$logs/bench.log"
  while IFS= read -r exe; do
    name="$(basename "$exe")"
    echo "== benchmark $name" | tee -a "$logs/bench.log"
    # shellcheck disable=SC2086
    "$exe" --json "$logs/$name.json" $bench_args 2>&1 | tee -a "$logs/bench.log"
    rc="${PIPESTATUS[0]}"
    [ "$rc" = 0 ] || { status=1; bench_rows+=("| $name | FAILED rc=$rc |"); }
  done < <(find "$build/bench" -maxdepth 2 -type f -perm -u+x -name 'strata-bench-*' | sort)
  # The table rows of every benchmark, header once.
  mapfile -t table < <(grep -E '^\|' "$logs/bench.log")
fi

{
  echo "## gpu-run summary ($(date -u +%Y-%m-%dT%H:%MZ))"
  echo
  echo "| step | result |"
  echo "|---|---|"
  echo "| GPU tests | $test_line |"
  for line in "${memcheck_lines[@]}"; do echo "$line"; done
  for line in "${bench_rows[@]}"; do echo "$line"; done
  echo "| overall | $([ $status = 0 ] && echo PASS || echo FAIL) |"
  if [ "$run_bench" = 1 ] && [ ${#table[@]} -gt 0 ]; then
    echo
    printf '%s\n' "${table[0]}" "${table[1]}"
    printf '%s\n' "${table[@]}" | grep -vE '^\| case |^\|---'
  fi
} > "$summary"
echo
cat "$summary"
exit $status
