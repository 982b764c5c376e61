#!/usr/bin/env bash
# Sets everything up, builds, and runs the main job on the embedded default
# model (models/tiny-llama.yaml): import it, print its IR, and generate 32
# tokens from a short prompt on the CPU backend.
# An argument names another model file.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${STRATA_BUILD_DIR:-$root/build}
"$root/scripts/setup.sh" >&2
cmake --build "$build" -j "$(nproc)" --target strata >&2
model=${1:-$root/models/tiny-llama.yaml}
"$build/tools/strata" compile --emit=ir "$model"
exec "$build/tools/strata" run "$model" --prompt-ids 1,2,3,4,5 \
  --max-new-tokens 32
