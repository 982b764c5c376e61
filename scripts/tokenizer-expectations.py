#!/usr/bin/env python3
"""Writes the ids Hugging Face's Rust tokenizers (the `tokenizers` Python
package) gives for a tokenizer test corpus: the reference the tokenizer
corpus tests trust over the JavaScript port where the two disagree.

  scripts/tokenizer-expectations.py --cache DIR CORPUS.json [CORPUS-NAME.json ...]
      [--families llama3,qwen3,llama2] [--out-dir DIR]

DIR is the cache of scripts/fetch-tokenizers.sh (DIR/FAMILY/tokenizer.json).
For tests/unit/tokenizer/corpus<SUFFIX>.json it writes
expected-rust<SUFFIX>.json (in --out-dir, default: beside the corpus):
for each family and case, the ids without and with special tokens, and
the decoded text of the latter with and without skipping special tokens.
"""
import argparse
import json
import os
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cache", required=True)
    parser.add_argument("--families", default="llama3,qwen3,llama2")
    parser.add_argument("--out-dir")
    parser.add_argument("corpora", nargs="+")
    args = parser.parse_args()
    try:
        import tokenizers
    except ImportError:
        print("tokenizer-expectations: the Python package `tokenizers` is "
              "needed", file=sys.stderr)
        return 1
    loaded = {}
    for family in args.families.split(","):
        path = os.path.join(args.cache, family, "tokenizer.json")
        if not os.path.exists(path):
            print(f"tokenizer-expectations: {path} is missing", file=sys.stderr)
            return 1
        loaded[family] = tokenizers.Tokenizer.from_file(path)
    for corpus_path in args.corpora:
        name = os.path.basename(corpus_path)
        if not (name.startswith("corpus") and name.endswith(".json")):
            print(f"tokenizer-expectations: {name}: expected corpus*.json",
                  file=sys.stderr)
            return 2
        suffix = name[len("corpus"):-len(".json")]
        with open(corpus_path, encoding="utf-8") as f:
            corpus = json.load(f)
        result = {"source": f"tokenizers {tokenizers.__version__} (Rust)",
                  "corpus": name, "vocabularies": {}}
        for family, tok in loaded.items():
            cases = {}
            for entry in corpus:
                text = entry["text"]
                plain = tok.encode(text, add_special_tokens=False).ids
                special = tok.encode(text, add_special_tokens=True).ids
                cases[entry["name"]] = {
                    "plain": plain,
                    "special": special,
                    "decoded": tok.decode(special, skip_special_tokens=False),
                    "decoded_skip": tok.decode(special, skip_special_tokens=True),
                }
            result["vocabularies"][family] = cases
        out_dir = args.out_dir or os.path.dirname(os.path.abspath(corpus_path))
        out = os.path.join(out_dir, f"expected-rust{suffix}.json")
        with open(out, "w", encoding="utf-8") as f:
            json.dump(result, f, ensure_ascii=False, indent=None,
                      separators=(",", ":"))
            f.write("\n")
        print(f"{out}: {len(corpus)} cases x {len(loaded)} tokenizers "
              f"({result['source']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
