#!/usr/bin/env python3
"""Assembles the seed corpus of every fuzz target (run by the build).

Seeds are the inputs the repository already has (model files, the CLI
tests' inputs, the Hugging Face fixtures' config.json), micro models,
small safetensors files and their headers made here, argument lists of the
tools, and, when a `strata` binary is given, plan files compiled from the
tiny and the micro models. Nothing
large is committed: every seed is made from what is in the tree.

Usage: make_seeds.py --src SOURCE_ROOT --out DIR [--strata BIN]
Writes DIR/<target>/<name> for each target and touches DIR/stamp.
"""
import argparse
import glob
import json
import os
import shutil
import struct
import subprocess
import sys


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def safetensors(tensors, metadata=None):
    """tensors: [(name, dtype, shape)], data laid out back to back."""
    widths = {"F32": 4, "F16": 2, "BF16": 2}
    header, data, offset = {}, b"", 0
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, dtype, shape in tensors:
        n = widths[dtype]
        for d in shape:
            n *= d
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [offset, offset + n]}
        data += bytes((offset + i) % 251 for i in range(n))
        offset += n
    text = json.dumps(header, separators=(",", ":")).encode()
    return struct.pack("<Q", len(text)) + text + data


def safetensors_seeds():
    layer = "model.layers.0."
    return {
        "empty": safetensors([]),
        "one-f32": safetensors([("w", "F32", [2, 3])]),
        "mixed": safetensors([
            ("model.embed_tokens.weight", "BF16", [8, 4]),
            (layer + "self_attn.q_proj.weight", "F16", [4, 4]),
            (layer + "input_layernorm.weight", "F32", [4]),
        ], metadata={"format": "pt"}),
        "zero-size": safetensors([("empty", "F32", [0, 5]),
                                  ("scalar", "BF16", [])]),
        "rank-4": safetensors([("t", "F16", [1, 2, 3, 2])]),
    }


def header_json(path):
    """The JSON header of a safetensors file, without reading its data."""
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        return f.read(n)


MICRO_HEAD = """format: strata-model/v1
vocab_size: 32
hidden_size: 16
max_position_embeddings: 64
norm_eps: 1.0e-5
mlp:
  intermediate_size: 24
"""
MICRO_MODELS = {
    "micro-llama": MICRO_HEAD + """num_layers: 2
attention:
  num_heads: 2
  num_kv_heads: 1
  head_dim: 8
  rope: {theta: 10000}
""",
    "micro-sliding": MICRO_HEAD + """num_layers: 2
layer_types: [sliding_attention, full_attention]
attention:
  num_heads: 2
  head_dim: 8
  qk_norm: true
  sliding_window: 4
  rope: {theta: 10000, rotary_dim: 4}
""",
    "micro-hybrid": MICRO_HEAD + """num_layers: 2
layer_types: [linear_attention, full_attention]
attention:
  num_heads: 2
  head_dim: 8
  rope: {theta: 10000}
linear_attention:
  num_heads: 2
  head_dim: 8
  decay_slopes: minimax
  chunk_size: 4
""",
}


def compile_plans(strata, model, name, out, max_tokens, max_batch):
    for emit, streams, suffix in ((None, "1", "generic"), ("fused", "2", "fused")):
        cmd = [strata, "compile", model, "-o", os.path.join(out, "%s-%s.splan" % (name, suffix)),
               "--streams", streams, "--max-tokens", str(max_tokens),
               "--max-batch", str(max_batch)]
        if emit:
            cmd.append("--emit=" + emit)
        subprocess.run(cmd, check=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--strata")
    args = ap.parse_args()
    src, out = args.src, args.out
    if os.path.isdir(out):
        shutil.rmtree(out)

    models = sorted(glob.glob(os.path.join(src, "models", "*.yaml")))
    cli_inputs = sorted(glob.glob(os.path.join(src, "tests/lit/cli/Inputs/*.yaml")))
    for path in models + cli_inputs:
        for target in ("model-yaml", "model-compile"):
            shutil.copy(path, os.path.join(_dir(out, target), os.path.basename(path)))

    for name, text in MICRO_MODELS.items():
        for target in ("model-yaml", "model-compile"):
            write(os.path.join(out, target, name + ".yaml"), text)

    configs = sorted(glob.glob(os.path.join(src, "tests/oracle/*/config.json")) +
                     glob.glob(os.path.join(src, "tests/lit/cli/Inputs/hf-*/config.json")))
    for path in configs:
        name = os.path.basename(os.path.dirname(path)) + ".json"
        for target in ("hf-config", "json"):
            shutil.copy(path, os.path.join(_dir(out, target), name))

    for name, data in safetensors_seeds().items():
        write(os.path.join(out, "safetensors", name + ".safetensors"), data)
        write(os.path.join(out, "json", "header-" + name + ".json"),
              header_json(os.path.join(out, "safetensors", name + ".safetensors")))
    for path in sorted(glob.glob(os.path.join(src, "tests/oracle/*/model.safetensors"))):
        name = os.path.basename(os.path.dirname(path))
        write(os.path.join(out, "json", "header-" + name + ".json"), header_json(path))
    write(os.path.join(out, "json", "index.json"), json.dumps({
        "metadata": {"total_size": 64},
        "weight_map": {"a.weight": "model-00001-of-00002.safetensors",
                       "b.weight": "model-00002-of-00002.safetensors"}}))

    for name, text in tokenizer_seeds().items():
        write(os.path.join(out, "tokenizer", name), text)

    runs = [
        ["strata-run", "tiny.splan", "--prompt-ids", "1,2,3", "--max-new-tokens", "16"],
        ["strata", "tiny.yaml", "--temperature=0.8", "--top-k", "40", "--top-p=0.9",
         "--seed", "7", "--batch", "2", "--kv-blocks", "64"],
        ["strata-run", "--weights", "model.safetensors", "-o", "out.json", "x.splan", "-h"],
    ]
    for i, argv in enumerate(runs):
        write(os.path.join(out, "cli-args", "run-%d" % i), "\0".join(argv))

    if args.strata:
        # Plans of every tiny model: the generic forward on one stream, and
        # the fused phase programs on two (events only appear with more
        # than one).
        for path in models:
            base = os.path.basename(path)[:-len(".yaml")]
            if base.startswith("tiny-"):
                compile_plans(args.strata, path, base, _dir(out, "plan"), 64, 4)
        # fuzz-plan-run runs each input with random weights: micro models
        # keep that fast.
        for name in MICRO_MODELS:
            path = os.path.join(out, "model-yaml", name + ".yaml")
            compile_plans(args.strata, path, name, _dir(out, "plan-run"), 16, 2)
    write(os.path.join(out, "stamp"), "")
    return 0


def tokenizer_seeds():
    """Small tokenizer.json files (byte-level and SentencePiece-style BPE),
    each followed by a NUL and a text to encode: FuzzTokenizer's input."""
    space = "\u0120"
    byte_level = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": 20, "content": "<|end|>", "single_word": False,
                          "lstrip": False, "rstrip": False, "normalized": False,
                          "special": True}],
        "normalizer": {"type": "NFC"},
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": "\\p{N}{1,3}| ?\\p{L}+|\\s+"},
             "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
             "use_regex": False}]},
        "post_processor": {"type": "ByteLevel", "add_prefix_space": True,
                           "trim_offsets": False, "use_regex": True},
        "decoder": {"type": "ByteLevel", "add_prefix_space": True,
                    "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None,
                  "continuing_subword_prefix": None, "end_of_word_suffix": None,
                  "fuse_unk": False, "byte_fallback": False, "ignore_merges": True,
                  "vocab": {"a": 0, "b": 1, space: 2, "1": 3, "ab": 4,
                            space + "ab": 5, "\u00c3": 6, "\u00a9": 7},
                  "merges": ["a b", space + " ab"]}}
    sp = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": 0, "content": "<unk>", "single_word": False,
                          "lstrip": False, "rstrip": False, "normalized": False,
                          "special": True},
                         {"id": 1, "content": "<s>", "single_word": False,
                          "lstrip": False, "rstrip": False, "normalized": False,
                          "special": True}],
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": "\u2581"},
            {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]},
        "pre_tokenizer": None,
        "post_processor": {"type": "TemplateProcessing",
                           "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                                      {"Sequence": {"id": "A", "type_id": 0}}],
                           "pair": [], "special_tokens": {
                               "<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}},
        "decoder": {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
            {"type": "ByteFallback"}, {"type": "Fuse"},
            {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
        "model": {"type": "BPE", "dropout": None, "unk_token": "<unk>",
                  "continuing_subword_prefix": None, "end_of_word_suffix": None,
                  "fuse_unk": True, "byte_fallback": True,
                  "vocab": {"<unk>": 0, "<s>": 1, "<0xC3>": 2, "<0xA9>": 3,
                            "\u2581": 4, "h": 5, "i": 6, "\u2581h": 7, "\u2581hi": 8},
                  "merges": [["\u2581", "h"], ["\u2581h", "i"]]}}
    return {
        "byte-level": json.dumps(byte_level) + "\0ab ab<|end|> 1234 \u00e9!",
        "sentencepiece": json.dumps(sp) + "\0hi <s>hi \u00e9 \u00e9\u00e9",
    }


def _dir(out, target):
    path = os.path.join(out, target)
    os.makedirs(path, exist_ok=True)
    return path


if __name__ == "__main__":
    sys.exit(main())
