#!/usr/bin/env python3
"""Generates the transformers reference fixtures of tests/oracle/.

For every architecture that `strata import-hf` converts, builds a small
model with transformers' own class from a config (random weights, no
download), shapes its weights (below), rounds every parameter to a
bf16-representable value, saves it with save_pretrained (safetensors,
bf16), and runs transformers in float32 on fixed prompts. Writes, per
fixture folder:

  config.json, model.safetensors   what save_pretrained wrote
  expected.json                    the prompts, the greedy continuation of
                                   CONTINUATION tokens, the logits of the
                                   prompt's last position and of the last
                                   decode step, the top-1/top-2 margins,
                                   the sensitivities, and the versions used

A fixture must be able to pass and to fail (docs/hf-import.md):

- every greedy step is decided by a clear margin, top1 - top2 >=
  MIN_MARGIN_REL * max|logit|, so that a run within the tolerance cannot
  pick another token. `lm_head` is a random matrix plus w times the
  embedding row of each token's predecessor on one random cycle through the
  vocabulary (each token votes for its successor; no fixed points, no short
  cycles), and the embedding is scaled so that the current token is a large
  part of the residual stream;
- every continuation has at least MIN_DISTINCT distinct tokens;
- every norm weight is drawn from NORM_RANGE, so that a norm weight that is
  mis-mapped or ignored shows;
- the transformers logits move by at least MIN_SENSITIVITY (relative to
  max|logit|) when the model is perturbed the way a conversion bug would
  (rope_theta doubled, norm weights reset to 1, and one perturbation per
  architecture feature: rope scaling removed, QK-norm removed, sliding
  window removed, lightning decay slopes doubled, residual factors reset);
- a bf16 transformers run deviates from the fp32 one by at most half the
  tolerance.

The search tries, per model seed, the attention gains, embedding scales and
successor weights of the fixture in turn and keeps the first candidate that
satisfies all of these; a fixture for which none does within the time limit
is rejected (exit 1) and nothing is written for it.

Usage: hf-oracle.py [--out DIR] [--only NAME ...] [--jobs N]
Needs torch and transformers (5.x); takes about 40 seconds on 16 CPU cores.
"""
import argparse
import copy
import json
import os
import shutil
import subprocess
import sys
import time

import torch
import transformers

CONTINUATION = 32
# Largest |strata - transformers| over a logits row, relative to the row's
# largest |transformers| value (docs/hf-import.md derives it).
LOGIT_TOL = 3e-2
# A greedy step is clear when top1 - top2 >= MIN_MARGIN_REL * max|logit|:
# twice the tolerance, so that no two logits within it can swap.
MIN_MARGIN_REL = 2 * LOGIT_TOL
# Every perturbation must move the prompt logits by this much.
MIN_SENSITIVITY = 2 * LOGIT_TOL
MIN_DISTINCT = 16
NORM_RANGE = (0.6, 1.4)
SUCCESSOR_WEIGHTS = [0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0]
# Model seeds tried in turn (seed, seed + 1000, ...).
SEED_ATTEMPTS = 8
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


class Fixture:
    """One reference model and how to search and perturb it.

    attn_gains: factors on the softmax attention's query and key weights
      (or, with QK-norm, on q_norm/k_norm): sharper attention, so that
      positions and windows change the outputs;
    embed_scales: factors on the embedding (the current token's share of
      the residual stream, hence the margins);
    weights: successor weights;
    mlp_gain, linear_qkv_gain: fixed factors on the MLP's down projection
      and the lightning qkv projection;
    perturbations: name -> function(fixture, model) returning the
      perturbed model."""

    def __init__(self, name, cls, config, cases, attn_gains, embed_scales,
                 weights=SUCCESSOR_WEIGHTS, mlp_gain=1.0, linear_qkv_gain=1.0,
                 perturbations=None):
        self.name, self.cls, self.config, self.cases = name, cls, config, cases
        self.attn_gains, self.embed_scales = attn_gains, embed_scales
        self.weights = weights
        self.mlp_gain, self.linear_qkv_gain = mlp_gain, linear_qkv_gain
        self.perturbations = dict(COMMON_PERTURBATIONS)
        self.perturbations.update(perturbations or {})


# ---------------------------------------------------------------- perturbing

def set_rope(rope, **values):
    """rope_parameters with values replaced (also inside per-layer-type
    dicts, where a config keeps one per attention kind)."""
    if all(isinstance(v, dict) for v in rope.values()) and rope:
        return {k: set_rope(v, **values) for k, v in rope.items()}
    out = dict(rope)
    out.update(values)
    return out


def rope_theta(rope):
    if "rope_theta" in rope:
        return rope["rope_theta"]
    return next(iter(rope.values()))["rope_theta"]


def rebuilt(fx, model, **changes):
    """The same weights in a model built from a changed config."""
    config = copy.deepcopy(model.config)
    for key, value in changes.items():
        setattr(config, key, value)
    other = fx.cls(config).float().eval()
    missing, unexpected = other.load_state_dict(model.state_dict(),
                                                strict=False)
    if missing or unexpected:
        raise RuntimeError(f"{fx.name}: state dict does not fit the rebuilt "
                           f"model: missing {missing}, unexpected "
                           f"{unexpected}")
    return other


def inv_freq(model):
    return model.model.rotary_emb.inv_freq.clone()


def rope_changed(fx, model, what, **rope_values):
    other = rebuilt(fx, model, rope_parameters=set_rope(
        model.config.rope_parameters, **rope_values))
    if torch.equal(inv_freq(other), inv_freq(model)):
        raise RuntimeError(f"{fx.name}: {what} did not change the rotary "
                           f"frequencies")
    return other


def double_theta(fx, model):
    theta = rope_theta(model.config.rope_parameters)
    return rope_changed(fx, model, "doubling rope_theta",
                        rope_theta=2.0 * theta)


def norms_to_one(fx, model):
    other = copy.deepcopy(model)
    with torch.no_grad():
        for name, p in norm_weights(other):
            p.fill_(1.0)
    return other


def no_rope_scaling(fx, model):
    theta = rope_theta(model.config.rope_parameters)
    other = rebuilt(fx, model, rope_parameters=dict(rope_type="default",
                                                    rope_theta=theta))
    if torch.equal(inv_freq(other), inv_freq(model)):
        raise RuntimeError(f"{fx.name}: removing rope scaling did not change "
                           f"the rotary frequencies")
    return other


def no_qk_norm(fx, model):
    other = copy.deepcopy(model)
    count = 0
    for layer in other.model.layers:
        layer.self_attn.q_norm = torch.nn.Identity()
        layer.self_attn.k_norm = torch.nn.Identity()
        count += 1
    if not count:
        raise RuntimeError(f"{fx.name}: no q_norm/k_norm to remove")
    return other


def no_sliding_window(fx, model):
    return rebuilt(fx, model, sliding_window=None)


def lightning_modules(model):
    return [m for m in model.modules() if hasattr(m, "slope_rate")]


def double_slopes(fx, model):
    """Every lightning layer's decay slope doubled, with the decay tables
    transformers derives from it (query, key and diagonal decay) recomputed
    from the doubled slope."""
    other = copy.deepcopy(model)
    modules = lightning_modules(other)
    if not modules:
        raise RuntimeError(f"{fx.name}: no lightning attention module has a "
                           f"slope_rate")
    with torch.no_grad():
        for m in modules:
            slope = m.slope_rate * 2.0
            m.slope_rate.copy_(slope)
            tables = ("query_decay", "key_decay", "diagonal_decay")
            if hasattr(m, "decay_factors"):
                for name, value in zip(tables, m.decay_factors(slope)):
                    if hasattr(m, name):
                        getattr(m, name).copy_(value)
            elif any(hasattr(m, name) for name in tables):
                raise RuntimeError(f"{fx.name}: decay tables without "
                                   f"decay_factors() to recompute them")
    return other


RESIDUAL_FACTORS = ["full_attn_alpha_factor", "full_attn_beta_factor",
                    "linear_attn_alpha_factor", "linear_attn_beta_factor",
                    "mlp_alpha_factor", "mlp_beta_factor"]


def unit_residual_factors(fx, model):
    return rebuilt(fx, model, **{k: 1.0 for k in RESIDUAL_FACTORS})


COMMON_PERTURBATIONS = {
    "rope_theta_x2": double_theta,
    "norm_weights_1": norms_to_one,
}


def fixtures():
    out = []
    # head_dim 64 everywhere: the size the CUDA attention kernels take, so
    # the same fixtures check the GPU backend.
    llama = common(vocab=320, hidden=96, layers=3, heads=6, kv_heads=2)
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
    out.append(Fixture(
        "llama3-rope-scaling", transformers.LlamaForCausalLM,
        transformers.LlamaConfig(**llama), prompts(1, 320, [7, 90]),
        attn_gains=[2.0, 3.0], embed_scales=[8.0, 12.0, 16.0, 24.0],
        perturbations={"no_rope_scaling": no_rope_scaling}))

    qwen = common(vocab=288, hidden=64, layers=3, heads=4, kv_heads=2)
    qwen.update(head_dim=64, rms_norm_eps=1e-6,
                rope_parameters=dict(rope_type="default", rope_theta=1e6))
    out.append(Fixture(
        "qwen3-qk-norm", transformers.Qwen3ForCausalLM,
        transformers.Qwen3Config(**qwen), prompts(2, 288, [5, 40]),
        attn_gains=[2.0, 2.5], embed_scales=[8.0, 12.0, 16.0, 24.0],
        perturbations={"no_qk_norm": no_qk_norm}))

    mistral = common(vocab=256, hidden=64, layers=2, heads=4, kv_heads=2)
    mistral.update(head_dim=64, rms_norm_eps=1e-5, sliding_window=16,
                   rope_parameters=dict(rope_type="default",
                                        rope_theta=10000.0))
    # Both prompts are longer than the window, and the continuation runs
    # past it again.
    out.append(Fixture(
        "mistral-sliding-window", transformers.MistralForCausalLM,
        transformers.MistralConfig(**mistral), prompts(3, 256, [24, 61]),
        attn_gains=[4.0, 5.0], embed_scales=[8.0, 12.0, 16.0, 24.0],
        perturbations={"no_sliding_window": no_sliding_window}))

    minimax = common(vocab=256, hidden=64, layers=4, heads=4, kv_heads=2)
    minimax.update(
        head_dim=64,
        rms_norm_eps=1e-5,
        rope_parameters=dict(rope_type="default", rope_theta=10000.0),
        # The lightning layers at 0 and 1 decay fastest (the slope falls
        # with the layer index, to ~0 in the last layer).
        layer_types=["linear_attention", "linear_attention",
                     "full_attention", "linear_attention"],
        # transformers' lightning block length (speed only; strata chunks
        # on its own); 128 keeps the decay tables save_pretrained writes
        # small.
        block_size=128,
        num_local_experts=1,
        num_experts_per_tok=1,
        full_attn_alpha_factor=1.3,
        full_attn_beta_factor=0.8,
        linear_attn_alpha_factor=1.6,
        linear_attn_beta_factor=0.9,
        mlp_alpha_factor=1.2,
        mlp_beta_factor=1.1,
    )
    # 600 tokens: several lightning blocks (4 x 128 + 88) in the prompt.
    # Every residual starts from the normed input, so the embedding scale
    # would only scale the vote: the successor weights cover it. A weaker
    # MLP and a less saturated SiLU on the lightning projections leave the
    # lightning layers' share of the residual stream, and its dependence
    # on the decay, large.
    out.append(Fixture(
        "minimax-hybrid", transformers.MiniMaxForCausalLM,
        transformers.MiniMaxConfig(**minimax), prompts(4, 256, [9, 600]),
        attn_gains=[3.0, 4.0], embed_scales=[1.0],
        weights=[0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0],
        mlp_gain=0.4, linear_qkv_gain=0.5,
        perturbations={"lightning_slopes_x2": double_slopes,
                       "residual_factors_1": unit_residual_factors}))
    return out


# ------------------------------------------------------------------ building

def norm_weights(model):
    return [(n, p) for n, p in model.named_parameters()
            if p.dim() == 1 and "norm" in n]


def scale_params(model, suffixes, factor, what):
    if factor == 1.0:
        return
    hit = [p for n, p in model.named_parameters() if n.endswith(suffixes)]
    if not hit:
        raise RuntimeError(f"no parameter for the {what} (names ending in "
                           f"{suffixes})")
    for p in hit:
        p.mul_(factor)


def bf16_round_(model):
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(p.to(torch.bfloat16).to(p.dtype))


def base_model(fx, seed):
    """transformers' initialisation, then every norm weight drawn from
    NORM_RANGE and the fixed gains applied."""
    torch.manual_seed(seed)
    model = fx.cls(fx.config).float().eval()
    g = torch.Generator().manual_seed(seed + 2)
    lo, hi = NORM_RANGE
    with torch.no_grad():
        for _, p in norm_weights(model):
            p.copy_(lo + (hi - lo) * torch.rand(p.shape, generator=g))
        scale_params(model, ("down_proj", "down_proj.weight", "w2.weight"),
                     fx.mlp_gain, "MLP gain")
        scale_params(model, ("qkv_proj.weight",), fx.linear_qkv_gain,
                     "lightning qkv gain")
    return model


def successor_cycle(vocab, seed):
    """pred[j]: the token whose successor is j, on one random cycle."""
    g = torch.Generator().manual_seed(seed + 1)
    order = torch.randperm(vocab, generator=g)
    pred = torch.empty(vocab, dtype=torch.long)
    pred[order] = torch.roll(order, 1)
    return pred


def candidate(fx, base, seed, gain, scale, weight):
    model = copy.deepcopy(base)
    with torch.no_grad():
        if any(n.endswith("q_norm.weight") for n, _ in
               model.named_parameters()):
            scale_params(model, ("q_norm.weight", "k_norm.weight"), gain,
                         "attention gain")
        else:
            scale_params(model, ("q_proj.weight", "k_proj.weight"), gain,
                         "attention gain")
        embed = model.model.embed_tokens.weight
        embed.mul_(scale)
        pred = successor_cycle(embed.shape[0], seed)
        model.lm_head.weight.add_(weight * embed[pred])
    bf16_round_(model)
    return model


# ------------------------------------------------------------------- running

def last_logits(model, ids):
    with torch.no_grad():
        return model(torch.tensor([ids]), use_cache=False).logits[0, -1].float()


def rel_margin(row):
    top = torch.topk(row, 2).values
    return float(top[0] - top[1]) / float(row.abs().max())


def greedy(model, prompt):
    """Greedy continuation with full forwards (no cache), so every step is
    the plain causal forward of the sequence so far. Stops at the first
    step without a clear margin (returns None, the margins so far)."""
    ids = list(prompt)
    margins, prompt_logits, final_logits = [], None, None
    for step in range(CONTINUATION):
        logits = last_logits(model, ids)
        if step == 0:
            prompt_logits = logits
        final_logits = logits
        margins.append(rel_margin(logits))
        if margins[-1] < MIN_MARGIN_REL:
            return None, margins
        # Ties go to the lowest id, as strata breaks them.
        ids.append(int(torch.argmax(logits)))
    return (ids[len(prompt):], prompt_logits, final_logits, margins), margins


def max_rel(a, b):
    return float((a - b).abs().max() / b.abs().max())


def evaluate(fx, model, label):
    """(status, result): status "ok" with (runs, bf16 errors,
    sensitivities), else the first requirement the candidate misses
    ("margin", "distinct", "bf16", "sensitivity"); prints why."""
    runs = []
    for i, prompt in enumerate(fx.cases):
        run, margins = greedy(model, prompt)
        if run is None:
            print(f"{fx.name}: {label}: case {i} step {len(margins) - 1} "
                  f"margin {margins[-1]:.4f}", flush=True)
            return "margin", None
        runs.append(run)
    margin = min(min(r[3]) for r in runs)
    distinct = min(len(set(r[0])) for r in runs)
    if distinct < MIN_DISTINCT:
        print(f"{fx.name}: {label}: margin {margin:.4f}, but only {distinct} "
              f"distinct tokens", flush=True)
        return "distinct", None
    bf16 = copy.deepcopy(model).to(torch.bfloat16)
    bf16_errs = [max_rel(last_logits(bf16, p), r[1])
                 for p, r in zip(fx.cases, runs)]
    if max(bf16_errs) > LOGIT_TOL / 2:
        print(f"{fx.name}: {label}: margin {margin:.4f}, but a bf16 run "
              f"deviates by {max(bf16_errs):.4f}", flush=True)
        return "bf16", None
    sensitivity = {}
    for name, perturb in fx.perturbations.items():
        other = perturb(fx, model)
        sensitivity[name] = max(max_rel(last_logits(other, p), r[1])
                                for p, r in zip(fx.cases, runs))
    weakest = min(sensitivity.values())
    text = ", ".join(f"{k} {v:.3f}" for k, v in sensitivity.items())
    print(f"{fx.name}: {label}: margin {margin:.4f}, {distinct} distinct, "
          f"bf16 {max(bf16_errs):.4f}, sensitivity {text}"
          f"{'' if weakest >= MIN_SENSITIVITY else ' (too weak)'}",
          flush=True)
    if weakest < MIN_SENSITIVITY:
        return "sensitivity", None
    return "ok", (runs, bf16_errs, sensitivity)


def search(fx, seed, deadline):
    """The first candidate that satisfies every requirement. Within one
    (seed, gain), a larger embedding scale or successor weight makes the
    current token's vote larger still and the perturbations' effect
    smaller, so a candidate that misses only the sensitivity ends that
    gain."""
    for attempt in range(SEED_ATTEMPTS):
        s = seed + 1000 * attempt
        base = base_model(fx, s)
        for gain in fx.attn_gains:
            weak = False
            for scale in fx.embed_scales:
                for weight in fx.weights:
                    if time.time() > deadline:
                        print(f"{fx.name}: time limit reached", flush=True)
                        return None
                    label = (f"seed {s}, attention gain {gain}, embedding "
                             f"scale {scale}, successor weight {weight}")
                    model = candidate(fx, base, s, gain, scale, weight)
                    status, result = evaluate(fx, model, label)
                    if status == "ok":
                        return (dict(seed=s, attn_gain=gain,
                                     embed_scale=scale,
                                     successor_weight=weight), model, result)
                    if status == "sensitivity":
                        weak = True
                        break
                if weak:
                    break
    return None


def generate(fx, out_dir, seed, deadline):
    fx.config.architectures = [fx.cls.__name__]
    found = search(fx, seed, deadline)
    if not found:
        print(f"{fx.name}: error: no candidate has clear margins, "
              f"{MIN_DISTINCT} distinct tokens, a bf16 deviation within half "
              f"the tolerance and every sensitivity >= {MIN_SENSITIVITY}",
              file=sys.stderr, flush=True)
        return False
    knobs, model, (runs, bf16_errs, sensitivity) = found
    results = []
    for prompt, (cont, first, last, margins), err in zip(fx.cases, runs,
                                                        bf16_errs):
        results.append(dict(
            prompt=prompt,
            continuation=cont,
            prompt_logits=[float(v) for v in first],
            final_logits=[float(v) for v in last],
            min_margin_rel=min(margins),
            distinct_tokens=len(set(cont)),
            bf16_max_rel_err=err,
        ))

    folder = os.path.join(out_dir, fx.name)
    shutil.rmtree(folder, ignore_errors=True)
    # Saved as bf16: the parameters are bf16-representable, so nothing
    # rounds.
    model.to(torch.bfloat16).save_pretrained(folder, safe_serialization=True)
    for extra in os.listdir(folder):
        if extra not in ("config.json", "model.safetensors"):
            os.remove(os.path.join(folder, extra))
    expected = dict(
        generator="scripts/hf-oracle.py",
        architecture=fx.cls.__name__,
        transformers_version=transformers.__version__,
        torch_version=torch.__version__,
        init_std=INIT_STD,
        norm_weight_range=list(NORM_RANGE),
        mlp_gain=fx.mlp_gain,
        linear_qkv_gain=fx.linear_qkv_gain,
        **knobs,
        continuation_tokens=CONTINUATION,
        logit_tolerance=LOGIT_TOL,
        min_margin_rel_required=MIN_MARGIN_REL,
        min_margin_rel=min(r["min_margin_rel"] for r in results),
        min_distinct_tokens_required=MIN_DISTINCT,
        min_sensitivity_required=MIN_SENSITIVITY,
        sensitivity=sensitivity,
        cases=results,
    )
    with open(os.path.join(folder, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1)
        f.write("\n")
    print(f"{fx.name}: wrote {folder}: " + ", ".join(
        f"{k} {v}" for k, v in knobs.items()) +
        f"; smallest margin {expected['min_margin_rel']:.4f}, bf16 deviation "
        f"{max(bf16_errs):.4f}, sensitivity " + ", ".join(
            f"{k} {v:.3f}" for k, v in sensitivity.items()), flush=True)
    return True


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.path.join(here, "..", "tests",
                                                      "oracle"))
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--jobs", type=int, default=4,
                        help="fixtures generated in parallel processes")
    parser.add_argument("--threads", type=int, default=0,
                        help="torch threads per process (0: cores / jobs)")
    parser.add_argument("--time-limit", type=float, default=300.0,
                        help="seconds of search per fixture")
    args = parser.parse_args()
    names = [fx.name for fx in fixtures()]
    chosen = [n for n in names if not args.only or n in args.only]
    unknown = set(args.only or []) - set(names)
    if unknown:
        print(f"error: unknown fixture(s) {sorted(unknown)}; known: {names}",
              file=sys.stderr)
        return 2
    cores = os.cpu_count() or 1
    if len(chosen) > 1 and args.jobs > 1:
        threads = args.threads or max(1, cores // min(args.jobs, len(chosen)))
        procs, ok = [], True
        pending = list(chosen)
        while pending or procs:
            while pending and len(procs) < args.jobs:
                name = pending.pop(0)
                procs.append(subprocess.Popen(
                    [sys.executable, os.path.abspath(__file__), "--out",
                     args.out, "--only", name, "--seed", str(args.seed),
                     "--threads", str(threads), "--time-limit",
                     str(args.time_limit)]))
            time.sleep(0.2)
            for p in list(procs):
                if p.poll() is not None:
                    ok &= p.returncode == 0
                    procs.remove(p)
        return 0 if ok else 1
    torch.set_num_threads(args.threads or cores)
    ok = True
    for fx in fixtures():
        if fx.name in chosen:
            ok &= generate(fx, args.out, args.seed,
                           time.time() + args.time_limit)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
