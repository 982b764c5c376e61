#!/usr/bin/env python3
"""Trains strata's default models on the King James Bible (docs/kjv-model.md).

From the text files of scripts/kjv-corpus.sh (train.txt, heldout.txt):

1. a byte-level BPE vocabulary of VOCAB tokens trained on train.txt, with
   <s> (added in front of every encoded text by the post-processor) and
   </s>, saved as a standard tokenizer.json;
2. a Llama target model (6 layers) and a draft model (1 layer) with that
   vocabulary, trained with the same data order and schedule: every book of
   train.txt is encoded as <s> text </s>, the books are concatenated into a
   ring (Revelation's end runs on into Genesis, so the first verses are
   seen as often as any), and each step takes BATCH windows of <s> and
   CONTEXT tokens starting at the first token of a random verse: a prompt
   is <s> and the start of a verse, so the models see that at position 0
   in training too; dropout on the embedding and on the output of every
   attention and MLP block; AdamW, linear warm-up then cosine decay to a
   tenth, bf16 autocast;
3. each model saved in bf16 with save_pretrained (config.json,
   model.safetensors, generation_config.json) plus the tokenizer files,
   the folder `strata import-hf` takes.

The held-out perplexity is measured the way `strata perplexity` measures it
(scripts/hf-perplexity.py) on the saved bf16 weights, in float32. Prints the
loss curve (training loss, and held-out perplexity every EVAL steps) and
writes OUT/report.json with it, the figures, the greedy continuation of
"In the beginning God created", the seed and the library versions.

Usage: train-kjv.py --corpus DIR --out DIR [--steps N] [--seed S]
Needs torch, transformers (5.x) and tokenizers, and a CUDA device.
"""
import argparse
import hashlib
import importlib.util
import json
import math
import os
import random
import sys
import time

import torch
import torch.nn.functional as F

BOS, EOS = "<s>", "</s>"
VOCAB = 4096
CONTEXT = 512
PROMPT = "In the beginning God created"

# Both models share everything but their depth.
SHAPE = dict(hidden_size=256, intermediate_size=1024, num_attention_heads=4,
             num_key_value_heads=2, head_dim=64)
MODELS = {"kjv": 6, "kjv-draft": 1}


def load_perplexity_module():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "hf-perplexity.py")
    spec = importlib.util.spec_from_file_location("hf_perplexity", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def read_books(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    return [b.strip("\n") + "\n" for b in text.split("\n\n") if b.strip()]


def train_tokenizer(books):
    from tokenizers import (Tokenizer, decoders, models, pre_tokenizers,
                            processors, trainers)
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB, min_frequency=2, special_tokens=[BOS, EOS],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False)
    tok.train_from_iterator(books, trainer)
    tok.post_processor = processors.TemplateProcessing(
        single=f"{BOS} $A", special_tokens=[(BOS, tok.token_to_id(BOS))])
    return tok


def save_tokenizer(tok, folder):
    from transformers import PreTrainedTokenizerFast
    wrapped = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token=BOS,
                                      eos_token=EOS)
    wrapped.save_pretrained(folder)


def make_model(layers, tok):
    from transformers import LlamaConfig, LlamaForCausalLM
    config = LlamaConfig(
        vocab_size=tok.get_vocab_size(), num_hidden_layers=layers,
        max_position_embeddings=CONTEXT, rms_norm_eps=1e-5,
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
        tie_word_embeddings=True, bos_token_id=tok.token_to_id(BOS),
        eos_token_id=tok.token_to_id(EOS), **SHAPE)
    # Eager attention: matmuls and a softmax, whose backward is
    # deterministic (the fused SDPA kernels' is not).
    model = LlamaForCausalLM._from_config(config, attn_implementation="eager")
    assert model.config._attn_implementation == "eager"
    return model


def add_dropout(model, p):
    """Dropout on the embedding and on each block's output projection (the
    Llama classes have none there). The committed models use none: they are
    meant to recite the text they learned (docs/kjv-model.md); with 0.2 the
    target generalises better and recites worse."""
    def hook(module, inputs, output):
        return F.dropout(output, p, module.training)
    model.model.embed_tokens.register_forward_hook(hook)
    for layer in model.model.layers:
        layer.self_attn.o_proj.register_forward_hook(hook)
        layer.mlp.down_proj.register_forward_hook(hook)


def learning_rate(step, steps, peak, warmup):
    if step < warmup:
        return peak * (step + 1) / warmup
    progress = (step - warmup) / max(1, steps - warmup)
    return peak * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))


def verse_starts(stream, bos, newline):
    """Where windows may start: after a newline or a <s>, i.e. the first
    token of every verse, and also each book's closing </s> and the <s> at
    position 0 (62 of the 30,600). The committed models were trained with
    exactly these starts."""
    before = torch.cat([torch.tensor([bos]), stream[:-1]])
    return torch.nonzero((before == bos) | (before == newline)).flatten()


def train(name, model, stream, starts_at, bos, heldout_ids, args, ppl):
    device = "cuda"
    model.to(device).train()
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    rest = [p for n, p in model.named_parameters() if p.dim() < 2]
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": args.weight_decay},
         {"params": rest, "weight_decay": 0.0}],
        lr=args.lr, betas=(0.9, 0.95), fused=True)
    # One generator per model, seeded alike: both models see the same
    # windows in the same order.
    gen = torch.Generator().manual_seed(args.seed)
    offsets = torch.arange(CONTEXT)
    ring = torch.cat([stream, stream[:CONTEXT]])
    head = torch.full((args.batch, 1), bos, dtype=torch.long)
    curve = []
    started = time.time()
    running = None
    for step in range(args.steps):
        for group in optimizer.param_groups:
            group["lr"] = learning_rate(step, args.steps, args.lr, args.warmup)
        pick = torch.randint(0, len(starts_at), (args.batch,), generator=gen)
        starts = starts_at[pick]
        batch = torch.cat([head, ring[starts[:, None] + offsets]], dim=1)
        batch = batch.to(device, non_blocking=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(input_ids=batch[:, :-1]).logits
        loss = F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]),
                               batch[:, 1:].reshape(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        value = loss.item()
        running = value if running is None else 0.9 * running + 0.1 * value
        last = step + 1 == args.steps
        if (step + 1) % args.eval_every == 0 or last:
            model.eval()
            with torch.autocast("cuda", dtype=torch.bfloat16):
                held = ppl.perplexity(model, heldout_ids, CONTEXT, device)
            model.train()
            curve.append({"step": step + 1, "train_loss": round(running, 4),
                          "heldout_perplexity": round(held["perplexity"], 3)})
            print(f"{name}: step {step + 1:5d}  train loss {running:.4f}  "
                  f"held-out perplexity {held['perplexity']:8.3f}  "
                  f"({time.time() - started:.0f} s)", flush=True)
    return curve


@torch.no_grad()
def greedy(model, tok, prompt, new_tokens):
    ids = tok.encode(prompt, add_special_tokens=True).ids
    out = list(ids)
    for _ in range(new_tokens):
        logits = model(input_ids=torch.tensor([out], device="cuda")).logits
        out.append(int(logits[0, -1].argmax()))
    return tok.decode(out[len(ids):], skip_special_tokens=False)


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", required=True,
                        help="folder with train.txt and heldout.txt")
    parser.add_argument("--out", required=True)
    parser.add_argument("--steps", type=int, default=900)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--warmup", type=int, default=100)
    parser.add_argument("--weight-decay", type=float, default=0.1)
    parser.add_argument("--dropout", type=float, default=0.0)
    parser.add_argument("--eval-every", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--only", choices=sorted(MODELS),
                        help="train one of the two models")
    parser.add_argument("--score", action="append", default=[],
                        metavar="TEXT", help="also report each model's "
                        "perplexity over TEXT (repeatable)")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        sys.exit("train-kjv: needs a CUDA device")
    # The same run on the same GPU and libraries gives the same weights.
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    torch.use_deterministic_algorithms(True, warn_only=True)

    import tokenizers
    import transformers
    ppl = load_perplexity_module()
    train_path = os.path.join(args.corpus, "train.txt")
    heldout_path = os.path.join(args.corpus, "heldout.txt")
    books = read_books(train_path)
    tok = train_tokenizer(books)
    bos, eos = tok.token_to_id(BOS), tok.token_to_id(EOS)
    stream = []
    for book in books:
        stream += tok.encode(book, add_special_tokens=True).ids + [eos]
    stream = torch.tensor(stream, dtype=torch.long)
    newline = tok.encode("\n", add_special_tokens=False).ids
    assert len(newline) == 1, "the newline is not one token"
    starts_at = verse_starts(stream, bos, newline[0])
    heldout_ids = ppl.encode_file_with(tok, heldout_path)
    print(f"vocabulary {tok.get_vocab_size()} tokens; train {len(books)} "
          f"books, {len(stream)} tokens, {len(starts_at)} window starts; "
          f"held-out {len(heldout_ids)} tokens",
          flush=True)

    report = {
        "seed": args.seed, "steps": args.steps, "batch": args.batch,
        "context": CONTEXT, "lr": args.lr, "warmup": args.warmup,
        "weight_decay": args.weight_decay, "dropout": args.dropout,
        "train_sha256": sha256(train_path),
        "heldout_sha256": sha256(heldout_path),
        "train_tokens": len(stream), "heldout_tokens": len(heldout_ids),
        "versions": {"torch": torch.__version__,
                     "transformers": transformers.__version__,
                     "tokenizers": tokenizers.__version__},
        "models": {},
    }
    torch.backends.cuda.matmul.allow_tf32 = False
    for name, layers in MODELS.items():
        if args.only and name != args.only:
            continue
        random.seed(args.seed)
        torch.manual_seed(args.seed)
        model = make_model(layers, tok)
        add_dropout(model, args.dropout)
        params = sum(p.numel() for p in model.parameters())
        print(f"{name}: {layers} layers, {params} parameters", flush=True)
        curve = train(name, model, stream, starts_at, bos, heldout_ids,
                      args, ppl)
        folder = os.path.join(args.out, name)
        model.to(torch.bfloat16).save_pretrained(folder)
        save_tokenizer(tok, folder)
        # The figure of record: the saved bf16 weights, run in float32.
        held = ppl.score_checkpoint(folder, heldout_path, CONTEXT, "cuda")
        reloaded = ppl.load_float32(folder, "cuda")
        sample = greedy(reloaded, tok, PROMPT, 24)
        print(f"{name}: held-out perplexity {held['perplexity']:.3f} "
              f"(nll {held['nll']:.4f} over {held['tokens']} tokens)\n"
              f"{name}: {PROMPT!r} -> {sample!r}", flush=True)
        scored = {path: ppl.score_checkpoint(folder, path, CONTEXT, "cuda")
                  for path in args.score}
        report["models"][name] = {
            "layers": layers, "parameters": params, "curve": curve,
            "heldout": held, "scored": scored, "greedy": {"prompt": PROMPT, "continuation": sample},
            "safetensors_sha256": sha256(os.path.join(folder,
                                                      "model.safetensors")),
        }
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "report.json"), "w") as f:
        json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
