#!/usr/bin/env python3
"""Perplexity of a Hugging Face checkpoint over a text file, computed with
transformers the way `strata perplexity` computes it (docs/cli.md), so that
the two figures can be compared on the same weights:

1. the whole file is encoded once by the checkpoint's tokenizer.json with
   its special tokens (the post-processor's BOS);
2. the ids are cut into consecutive windows of CONTEXT tokens (default:
   max_position_embeddings); a last window of one token is dropped;
3. each window is scored on its own: tokens 1 to n-1 of a window of n are
   predicted from the ones before them in that window.

The model runs in float32 (bf16 weights are widened exactly), with eager
attention, one window at a time.

Usage: hf-perplexity.py CHECKPOINT_DIR TEXT_FILE [--context N] [--device D]
Prints one JSON object: tokens, windows, context, nll, perplexity.
Needs torch, transformers and tokenizers.
"""
import argparse
import json
import math

import torch
import torch.nn.functional as F


def windows(num_ids, context):
    """[start, end) of every scored window, as strata perplexity cuts them."""
    out = []
    start = 0
    while start + 1 < num_ids:
        out.append((start, min(num_ids, start + context)))
        start += context
    return out


@torch.no_grad()
def perplexity(model, ids, context, device):
    """Mean negative log-likelihood and token count of ids under model."""
    nll = 0.0
    tokens = 0
    count = 0
    for start, end in windows(len(ids), context):
        window = torch.tensor([ids[start:end]], device=device)
        logits = model(input_ids=window).logits[0, :-1].float()
        logprobs = F.log_softmax(logits, dim=-1)
        targets = window[0, 1:]
        nll -= logprobs.gather(1, targets[:, None]).sum().item()
        tokens += targets.numel()
        count += 1
    return {"tokens": tokens, "windows": count, "context": context,
            "nll": nll / tokens, "perplexity": math.exp(nll / tokens)}


def encode_file_with(tokenizer, path):
    """The ids of the whole file, with the tokenizer's special tokens."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    return tokenizer.encode(text, add_special_tokens=True).ids


def load_float32(checkpoint, device):
    from transformers import AutoModelForCausalLM
    model = AutoModelForCausalLM.from_pretrained(
        checkpoint, dtype=torch.float32, attn_implementation="eager")
    return model.to(device).eval()


def score_checkpoint(checkpoint, path, context=None, device="cpu"):
    from tokenizers import Tokenizer
    model = load_float32(checkpoint, device)
    context = context or model.config.max_position_embeddings
    tokenizer = Tokenizer.from_file(f"{checkpoint}/tokenizer.json")
    return perplexity(model, encode_file_with(tokenizer, path), context,
                      device)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkpoint")
    parser.add_argument("text")
    parser.add_argument("--context", type=int)
    parser.add_argument("--device",
                        default="cuda" if torch.cuda.is_available() else "cpu")
    args = parser.parse_args()
    print(json.dumps(score_checkpoint(args.checkpoint, args.text,
                                      args.context, args.device)))


if __name__ == "__main__":
    main()
