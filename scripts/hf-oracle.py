#!/usr/bin/env python3
"""Generates the transformers reference fixtures of tests/oracle/.

For every architecture that `strata import-hf` converts, builds a small
model with transformers' own class from a config (random weights, no
download), rounds every parameter to a bf16-representable value, saves it
with save_pretrained (safetensors, bf16), and runs transformers in float32
on fixed prompts. Writes, per fixture folder:

  config.json, model.safetensors   what save_pretrained wrote
  expected.json                    the prompts, the greedy continuation of
                                   CONTINUATION tokens, the logits of the
                                   prompt's last position and of the last
                                   decode step, the top-1/top-2 margins, and
                                   the versions used

The fixtures must decide every greedy step by a clear margin, so that a
run whose logits are within the tolerance (docs/hf-import.md) cannot pick
another token: `lm_head` is a random matrix plus a multiple of a permuted
copy of the embedding (each token votes for a fixed successor), and the
smallest multiple in SUCCESSOR_WEIGHTS whose smallest margin, relative to
the row's largest |logit|, is at least MIN_MARGIN_REL is kept. A fixture
that reaches none is rejected (exit 1). The deviation of a bf16 transformers
run from the fp32 one is recorded too: the tolerance must stay above it.

Usage: hf-oracle.py [--out DIR] [--only NAME ...]
Needs torch and transformers (5.x); runs on a CPU in about a minute.
"""
import argparse
import json
import os
import shutil
import sys

import torch
import transformers

CONTINUATION = 32
# Largest |strata - transformers| over a logits row, relative to the row's
# largest |transformers| value (docs/hf-import.md derives it).
LOGIT_TOL = 3e-2
# A greedy step is clear when top1 - top2 >= MIN_MARGIN_REL * max|logit|:
# twice the tolerance, so that no two logits within it can swap.
MIN_MARGIN_REL = 2 * LOGIT_TOL
SUCCESSOR_WEIGHTS = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0]
# Model seeds tried in turn (seed, seed + 1000, ...) when no weight works.
SEED_ATTEMPTS = 4
INIT_STD = 0.08


def common(vocab=384, hidden=96, layers=3, heads=6, kv_heads=2, inter=192):
    return dict(
        vocab_size=vocab,
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=kv_heads,
        intermediate_size=inter,
        max_position_embeddings=4096,
        initializer_range=INIT_STD,
        tie_word_embeddings=False,
        hidden_act="silu",
    )


def prompts(seed, vocab, lengths):
    g = torch.Generator().manual_seed(seed)
    return [torch.randint(0, vocab, (n,), generator=g).tolist() for n in lengths]


def fixtures():
    """(name, model class, config, prompts) of every fixture."""
    out = []
    llama = common(vocab=320, hidden=96, layers=3, heads=6, kv_heads=2)
    # head_dim 64 everywhere: the size the CUDA attention kernels take, so
    # the same fixtures check the GPU backend.
    llama.update(
        head_dim=64,
        rms_norm_eps=1e-5,
        rope_parameters=dict(
            rope_type="llama3",
            rope_theta=500000.0,
            factor=8.0,
            low_freq_factor=1.0,
            high_freq_factor=4.0,
            original_max_position_embeddings=64,
        ),
    )
    # Prompts past original_max_position_embeddings exercise the scaled
    # frequencies.
    out.append(("llama3-rope-scaling", transformers.LlamaForCausalLM,
                transformers.LlamaConfig(**llama),
                prompts(1, 320, [7, 90])))

    qwen = common(vocab=288, hidden=64, layers=3, heads=4, kv_heads=2)
    qwen.update(head_dim=64, rms_norm_eps=1e-6,
                rope_parameters=dict(rope_type="default", rope_theta=1e6))
    out.append(("qwen3-qk-norm", transformers.Qwen3ForCausalLM,
                transformers.Qwen3Config(**qwen), prompts(2, 288, [5, 40])))

    mistral = common(vocab=256, hidden=64, layers=2, heads=4, kv_heads=2)
    mistral.update(head_dim=64, rms_norm_eps=1e-5, sliding_window=16,
                   rope_parameters=dict(rope_type="default",
                                        rope_theta=10000.0))
    # Both prompts are longer than the window, and the continuation runs
    # past it again.
    out.append(("mistral-sliding-window", transformers.MistralForCausalLM,
                transformers.MistralConfig(**mistral),
                prompts(3, 256, [24, 61])))

    minimax = common(vocab=256, hidden=64, layers=4, heads=2, kv_heads=1)
    minimax.update(
        head_dim=64,
        rms_norm_eps=1e-5,
        rope_parameters=dict(rope_type="default", rope_theta=10000.0),
        layer_types=["linear_attention", "full_attention",
                     "linear_attention", "linear_attention"],
        block_size=256,
        num_local_experts=1,
        num_experts_per_tok=1,
    )
    # 600 tokens: three lightning chunks (256, 256, 88) in the prompt.
    out.append(("minimax-hybrid", transformers.MiniMaxForCausalLM,
                transformers.MiniMaxConfig(**minimax),
                prompts(4, 256, [9, 600])))
    return out


def bf16_round_(model):
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(p.to(torch.bfloat16).to(p.dtype))


def top2_margin(row):
    top = torch.topk(row, 2).values
    return float(top[0] - top[1]), float(row.abs().max())


def greedy(model, prompt):
    """Greedy continuation with full forwards (no cache), so every step is
    the plain causal forward of the sequence so far."""
    ids = list(prompt)
    margins, prompt_logits, final_logits = [], None, None
    with torch.no_grad():
        for step in range(CONTINUATION):
            logits = model(torch.tensor([ids])).logits[0, -1].float()
            if step == 0:
                prompt_logits = logits
            final_logits = logits
            margin, scale = top2_margin(logits)
            margins.append(margin / scale)
            # Ties go to the lowest id, as strata breaks them.
            best = int(torch.argmax(logits))
            ids.append(best)
    return ids[len(prompt):], prompt_logits, final_logits, margins


def max_rel(a, b):
    return float((a - b).abs().max() / b.abs().max())


def build(cls, config, seed, weight):
    torch.manual_seed(seed)
    model = cls(config).float().eval()
    with torch.no_grad():
        embed = model.model.embed_tokens.weight
        g = torch.Generator().manual_seed(seed + 1)
        perm = torch.randperm(embed.shape[0], generator=g)
        model.lm_head.weight.add_(weight * embed[perm])
    bf16_round_(model)
    return model


def search(name, cls, config, cases, seed):
    """The first (seed, weight, model, runs) whose every greedy step is
    clear; seeds after the given one are tried when no weight works."""
    for attempt in range(SEED_ATTEMPTS):
        s = seed + 1000 * attempt
        for weight in SUCCESSOR_WEIGHTS:
            model = build(cls, config, s, weight)
            runs = [greedy(model, p) for p in cases]
            smallest = min(min(r[3]) for r in runs)
            print(f"{name}: seed {s}, successor weight {weight}: smallest "
                  f"margin {smallest:.4f} of max |logit|")
            if smallest >= MIN_MARGIN_REL:
                return s, weight, model, runs
    return None


def generate(name, cls, config, cases, out_dir, seed):
    found = search(name, cls, config, cases, seed)
    if not found:
        print(f"{name}: error: no seed and successor weight give every greedy "
              f"step a margin of {MIN_MARGIN_REL} of max |logit|",
              file=sys.stderr)
        return False
    seed, weight, model, runs = found

    # A bf16 run of the same model: the scale of the error that 16-bit
    # activations alone cause, which the tolerance has to cover.
    bf16 = build(cls, config, seed, weight).to(torch.bfloat16)
    results = []
    for prompt, (cont, first, last, margins) in zip(cases, runs):
        with torch.no_grad():
            b = bf16(torch.tensor([prompt])).logits[0, -1].float()
        bf16_err = max_rel(b, first)
        if bf16_err > LOGIT_TOL / 2:
            print(f"{name}: error: a bf16 transformers run deviates by "
                  f"{bf16_err:.4f} (relative), more than half the tolerance "
                  f"{LOGIT_TOL}", file=sys.stderr)
            return False
        results.append(dict(
            prompt=prompt,
            continuation=cont,
            prompt_logits=[float(v) for v in first],
            final_logits=[float(v) for v in last],
            min_margin_rel=min(margins),
            bf16_max_rel_err=bf16_err,
        ))

    folder = os.path.join(out_dir, name)
    shutil.rmtree(folder, ignore_errors=True)
    # Saved as bf16: the values are bf16-representable, so nothing rounds.
    model.to(torch.bfloat16).save_pretrained(folder, safe_serialization=True)
    for extra in os.listdir(folder):
        if extra not in ("config.json", "model.safetensors"):
            os.remove(os.path.join(folder, extra))
    expected = dict(
        generator="scripts/hf-oracle.py",
        architecture=cls.__name__,
        transformers_version=transformers.__version__,
        torch_version=torch.__version__,
        seed=seed,
        init_std=INIT_STD,
        successor_weight=weight,
        continuation_tokens=CONTINUATION,
        logit_tolerance=LOGIT_TOL,
        min_margin_rel_required=MIN_MARGIN_REL,
        min_margin_rel=min(r["min_margin_rel"] for r in results),
        cases=results,
    )
    with open(os.path.join(folder, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1)
        f.write("\n")
    print(f"{name}: wrote {folder} (smallest margin "
          f"{expected['min_margin_rel']:.4f}, bf16 deviation "
          f"{max(r['bf16_max_rel_err'] for r in results):.4f})")
    return True


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.path.join(here, "..", "tests",
                                                      "oracle"))
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--seed", type=int, default=1234)
    args = parser.parse_args()
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    ok = True
    for name, cls, config, cases in fixtures():
        if args.only and name not in args.only:
            continue
        config.architectures = [cls.__name__]
        ok &= generate(name, cls, config, cases, args.out, args.seed)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
