#!/usr/bin/env python3
"""Single-thread encode speed of strata's tokenizer next to Hugging Face
tokenizers and tiktoken, on the same files, in one table.

  scripts/tokenizer-peers.py --tokenizer TOKENIZER.json FILE...
      [--strata build/bench/strata-bench-tokenizer] [--repeat 5] [--json OUT]

- Hugging Face tokenizers: Tokenizer.from_file(TOKENIZER.json), one
  encode() call per file (one text is encoded on one thread; RAYON_NUM_THREADS
  is set to 1 all the same).
- tiktoken: an Encoding built from the same tokenizer.json (byte-level BPE
  only): the vocabulary as byte strings ranked by id, the split regex of its
  Split pre-tokenizer, the added tokens as special tokens. For Llama-3, whose
  vocabulary was trained with tiktoken, this is its own encoding; whether
  its ids equal Hugging Face's is printed too.
- strata: strata-bench-tokenizer, run with --json, when --strata is given.
Figures are MB/s (10^6 bytes per second), median of --repeat runs after
one warm-up run.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("RAYON_NUM_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def byte_level_decoder():
    # GPT-2's byte-to-character table, inverted.
    printable = (list(range(ord("!"), ord("~") + 1)) +
                 list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100)))
    chars, extra = {}, 0
    for b in range(256):
        if b in printable:
            chars[b] = chr(b)
        else:
            chars[b] = chr(256 + extra)
            extra += 1
    return {c: b for b, c in chars.items()}


def tiktoken_encoding(path):
    import tiktoken
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    pattern = None
    pre = doc.get("pre_tokenizer") or {}
    for step in pre.get("pretokenizers", [pre]):
        if step.get("type") == "Split" and "Regex" in step.get("pattern", {}):
            pattern = step["pattern"]["Regex"]
    if pattern is None:
        raise ValueError("no Split regex in the pre-tokenizer")
    to_byte = byte_level_decoder()
    ranks = {}
    for token, rank in doc["model"]["vocab"].items():
        try:
            ranks[bytes(to_byte[c] for c in token)] = rank
        except KeyError:
            raise ValueError(f"token {token!r} is not byte-level")
    special = {t["content"]: t["id"] for t in doc.get("added_tokens", [])}
    return tiktoken.Encoding(name="from-tokenizer-json", pat_str=pattern,
                             mergeable_ranks=ranks, special_tokens=special)


def timed(fn, text, repeat):
    fn(text)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        n = len(fn(text))
        times.append(time.perf_counter() - start)
    return statistics.median(times), n


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tokenizer", required=True)
    parser.add_argument("--strata")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json")
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()

    rows = []
    strata = {}
    if args.strata:
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "strata.json")
            subprocess.run([args.strata, args.tokenizer, *args.files,
                            "--repeat", str(args.repeat), "--json", out],
                           check=True, stdout=subprocess.DEVNULL)
            with open(out) as f:
                for row in json.load(f)["rows"]:
                    strata[row["file"]] = row

    import tokenizers
    hf = tokenizers.Tokenizer.from_file(args.tokenizer)
    try:
        tk = tiktoken_encoding(args.tokenizer)
        tk_note = ""
    except (ImportError, ValueError) as e:
        tk, tk_note = None, str(e)
    for path in args.files:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        size = len(text.encode("utf-8"))
        hf_ids = hf.encode(text, add_special_tokens=False).ids
        t, n = timed(lambda s: hf.encode(s, add_special_tokens=False).ids,
                     text, args.repeat)
        rows.append({"file": path, "engine": f"tokenizers {tokenizers.__version__}",
                     "bytes": size, "tokens": n, "median_s": t,
                     "mb_per_s": size / t / 1e6})
        if tk is not None:
            tk_ids = tk.encode(text, allowed_special="all")
            t, n = timed(lambda s: tk.encode(s, allowed_special="all"), text,
                         args.repeat)
            rows.append({"file": path, "engine": "tiktoken", "bytes": size,
                         "tokens": n, "median_s": t, "mb_per_s": size / t / 1e6,
                         "same_ids_as_tokenizers": tk_ids == hf_ids})
        if path in strata:
            s = strata[path]
            rows.append({"file": path, "engine": "strata", "bytes": size,
                         "tokens": s["tokens"], "median_s": s["median_s"],
                         "mb_per_s": s["mb_per_s"],
                         "same_count_as_tokenizers": s["tokens"] == len(hf_ids)})
    print(f"tokenizer: {args.tokenizer}")
    if tk_note:
        print(f"tiktoken skipped: {tk_note}")
    print("\n| file | engine | bytes | tokens | median s | MB/s | note |")
    print("|---|---|---:|---:|---:|---:|---|")
    for r in rows:
        note = ""
        if "same_ids_as_tokenizers" in r:
            note = "ids = tokenizers" if r["same_ids_as_tokenizers"] else "ids differ"
        if "same_count_as_tokenizers" in r:
            note = ("count = tokenizers" if r["same_count_as_tokenizers"]
                    else "count differs")
        print(f"| {os.path.basename(r['file'])} | {r['engine']} | {r['bytes']} | "
              f"{r['tokens']} | {r['median_s']:.4f} | {r['mb_per_s']:.2f} | {note} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"benchmark": "tokenizer-peers", "threads": 1,
                       "tokenizer": args.tokenizer, "rows": rows}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
