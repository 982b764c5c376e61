#!/usr/bin/env python3
"""Writes the small byte-level BPE tokenizer the CLI tests use (ids below
320, so that it fits tiny-llama's and the oracle models' vocabularies):
the 256 byte symbols, merges learned greedily from a few English lines,
two special tokens with a TemplateProcessing BOS, and a ChatML chat
template. Run it in this folder to regenerate tokenizer.json and
tokenizer_config.json; the output is deterministic."""
import collections
import json


def bytes_to_unicode():
    # The byte-level alphabet: printable bytes stand for themselves, the
    # others are moved above 255 so that every byte is a visible character.
    bs = (list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1))
          + list(range(ord("®"), ord("ÿ") + 1)))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, (chr(c) for c in cs)))


TEXT = """the cat sat on the mat and the dog sat on the log
in the beginning the heaven and the earth were there
hello world, this is the end of the line and the start of another
"""
NUM_MERGES = 40

b2u = bytes_to_unicode()
vocab = {b2u[b]: i for i, b in enumerate(range(256))}
words = collections.Counter()
for w in TEXT.replace("\n", " ").split(" "):
    if w:
        words[tuple(b2u[b] for b in (" " + w).encode())] += 1
merges = []
for _ in range(NUM_MERGES):
    pairs = collections.Counter()
    for w, n in words.items():
        for a, b in zip(w, w[1:]):
            pairs[(a, b)] += n
    if not pairs:
        break
    (a, b), _ = max(pairs.items(), key=lambda kv: (kv[1], kv[0]))
    merges.append(f"{a} {b}")
    vocab[a + b] = len(vocab)
    merged = collections.Counter()
    for w, n in words.items():
        out, i = [], 0
        while i < len(w):
            if i + 1 < len(w) and (w[i], w[i + 1]) == (a, b):
                out.append(a + b)
                i += 2
            else:
                out.append(w[i])
                i += 1
        merged[tuple(out)] += n
    words = merged

BOS, EOS = 300, 301
special = {"content": "", "single_word": False, "lstrip": False, "rstrip": False,
           "normalized": False, "special": True}
tokenizer = {
    "version": "1.0",
    "truncation": None,
    "padding": None,
    "added_tokens": [dict(special, id=BOS, content="<|im_start|>"),
                     dict(special, id=EOS, content="<|im_end|>")],
    "normalizer": None,
    "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False,
                      "trim_offsets": True, "use_regex": True},
    "post_processor": {
        "type": "TemplateProcessing",
        "single": [{"SpecialToken": {"id": "<|im_start|>", "type_id": 0}},
                   {"Sequence": {"id": "A", "type_id": 0}}],
        "pair": [{"Sequence": {"id": "A", "type_id": 0}},
                 {"Sequence": {"id": "B", "type_id": 1}}],
        "special_tokens": {"<|im_start|>": {"id": "<|im_start|>", "ids": [BOS],
                                            "tokens": ["<|im_start|>"]}}},
    "decoder": {"type": "ByteLevel", "add_prefix_space": True,
                "trim_offsets": True, "use_regex": True},
    "model": {"type": "BPE", "dropout": None, "unk_token": None,
              "continuing_subword_prefix": None, "end_of_word_suffix": None,
              "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
              "vocab": vocab, "merges": merges},
}
config = {
    "bos_token": "<|im_start|>",
    "eos_token": "<|im_end|>",
    "chat_template": "{% for message in messages %}{{'<|im_start|>' + "
                     "message['role'] + '\\n' + message['content'] + "
                     "'<|im_end|>' + '\\n'}}{% endfor %}{% if "
                     "add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}"
                     "{% endif %}",
}
with open("tokenizer.json", "w") as f:
    json.dump(tokenizer, f, ensure_ascii=False, indent=1)
    f.write("\n")
with open("tokenizer_config.json", "w") as f:
    json.dump(config, f, indent=1)
    f.write("\n")
print(f"{len(vocab)} tokens, {len(merges)} merges")
