#!/usr/bin/env bash
# Writes the King James Bible (public domain), as Debian's bible-kjv package
# prints it, into the text files the default model is trained and measured
# on (docs/kjv-model.md):
#
#   OUT/train.txt    61 books, for training
#   OUT/heldout.txt  Ruth, Ecclesiastes, Jonah, Philippians, 1 John: never
#                    trained on; their perplexity is the model's figure
#
# One verse per line without its reference ("Ge1:1 In the beginning" becomes
# "In the beginning"), books in canonical order, one empty line between
# books. Installs bible-kjv when it is missing.
#
#   scripts/kjv-corpus.sh [OUT]   (default: <repo>/.cache/kjv)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:-$root/.cache/kjv}

if ! command -v bible >/dev/null; then
  echo "kjv-corpus: installing bible-kjv" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q bible-kjv
fi

mkdir -p "$out"
raw=$(mktemp)
trap 'rm -f "$raw"' EXIT
bible -f "Gen1:1-Rev22:21" > "$raw"

# The book is the reference's prefix before chapter:verse ("1Jn3:16" -> 1Jn).
awk -v train="$out/train.txt" -v heldout="$out/heldout.txt" '
  BEGIN { split("Ruth Eccl Jonah Phi 1Jn", h, " "); for (i in h) held[h[i]] = 1 }
  {
    ref = $1
    if (ref !~ /^[1-3]?[A-Za-z]+[0-9]+:[0-9]+$/) {
      printf "kjv-corpus: line %d does not start with a verse reference: %s\n", NR, $0 > "/dev/stderr"
      exit 1
    }
    book = ref
    sub(/[0-9]+:[0-9]+$/, "", book)
    text = substr($0, length(ref) + 2)
    sub(/[ \t\r]+$/, "", text)
    file = (book in held) ? heldout : train
    if (book != last) {
      if (file in started) print "" > file
      started[file] = 1
      books[file]++
      last = book
    }
    print text > file
    verses[file]++
  }
  END {
    printf "kjv-corpus: train.txt %d books %d verses, heldout.txt %d books %d verses\n", books[train], verses[train], books[heldout], verses[heldout] > "/dev/stderr"
  }' "$raw"
wc -c "$out/train.txt" "$out/heldout.txt" >&2
