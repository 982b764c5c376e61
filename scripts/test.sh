#!/usr/bin/env bash
# Sets everything up, builds, and runs every test with ctest. GPU tests
# report themselves as skipped on a machine without a CUDA device.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${STRATA_BUILD_DIR:-$root/build}
"$root/scripts/setup.sh"
cmake --build "$build" -j "$(nproc)"
cd "$build"
ctest --output-on-failure -j "$(nproc)"
