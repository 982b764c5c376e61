#!/usr/bin/env bash
# Sets everything up, builds, and runs the main job on the embedded default
# model (models/tiny-llama.yaml): import it and print its IR.
# Extra arguments go to `strata compile` (e.g. another model file).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${STRATA_BUILD_DIR:-$root/build}
"$root/scripts/setup.sh" >&2
cmake --build "$build" -j "$(nproc)" --target strata >&2
if [ $# -eq 0 ]; then
  set -- "$root/models/tiny-llama.yaml"
fi
exec "$build/tools/strata" compile --emit=ir "$@"
