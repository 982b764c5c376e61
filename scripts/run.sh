#!/usr/bin/env bash
# Sets everything up, builds, and runs the main job on the default model,
# models/kjv (a small Llama trained on the King James Bible,
# docs/kjv-model.md): compiles it to an executable plan, prints what the
# fusion passes chose, and streams a greedy continuation of a prompt on the
# CPU backend.
#
#   scripts/run.sh [MODEL.yaml] [strata-run options]
#
# MODEL.yaml runs another model file; one without a tokenizer gets a prompt
# of token ids. Options go to strata-run after the defaults, so they
# override them: --device cuda (on a Hopper GPU), --prompt TEXT,
# --max-new-tokens N, --temperature T ...
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${STRATA_BUILD_DIR:-$root/build}
model=$root/models/kjv/model.yaml
if [ $# -gt 0 ] && [[ $1 != -* ]]; then
  model=$1
  shift
fi
"$root/scripts/setup.sh" >&2
cmake --build "$build" -j "$(nproc)" --target strata strata-run >&2

plan=$build/run/main.splan
mkdir -p "$build/run"
"$build/tools/strata" compile "$model" --emit=fused -o "$plan"
"$build/tools/strata" inspect --summary "$plan"
echo
if grep -q '^tokenizer:' "$model"; then
  prompt=(--prompt "In the beginning God created")
else
  prompt=(--prompt-ids 1,2,3,4,5)
fi
exec "$build/tools/strata-run" "$plan" "${prompt[@]}" --max-new-tokens 48 "$@"
