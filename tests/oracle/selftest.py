#!/usr/bin/env python3
"""Tests of the oracle machinery that need no transformers.

Usage: selftest.py --strata PATH [--strata-run PATH] --work DIR

1. Hugging Face weight layouts: one small MiniMax-shaped checkpoint (random
   bf16 values) is written three times: under strata's own tensor names,
   in the original MiniMax layout (fused per-head `qkv_proj`, `out_proj`,
   `block_sparse_moe.experts.0.w1/w3/w2` and a one-expert router), and in
   transformers' stacked layout (`mlp.experts.gate_up_proj`,
   `mlp.experts.down_proj`, `mlp.gate`). All three must generate the same
   tokens and bit-identical logits.
2. A router of two experts is rejected with a message naming it (exit 1).
3. tests/oracle/check.py passes on a fixture made from strata's own output
   and fails when the expected continuation or logits are changed.
4. With --strata-run, the same in check.py's runtime-only mode (a plan
   compiled from the fixture, run by strata-run on the CPU); a missing plan
   fails naming it; without a CUDA device, --device cuda is skipped (exit
   77), or fails with STRATA_REQUIRE_GPU=1.
Exits 1 on the first failure.
"""
import argparse
import json
import os
import random
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
V, H, I, HEADS, KV, D = 64, 48, 64, 2, 1, 64
LAYERS = ["linear_attention", "full_attention"]
PROMPT = [3, 17, 42, 5, 9, 33, 60, 1]


def bf16_bits(values):
    out = bytearray()
    for v in values:
        out += struct.pack("<f", v)[2:4]
    return bytes(out)


def write_safetensors(path, tensors):
    """tensors: name -> (shape, list of floats), stored as BF16."""
    header, blobs, offset = {}, [], 0
    for name, (shape, values) in tensors.items():
        data = bf16_bits(values)
        header[name] = {"dtype": "BF16", "shape": shape,
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def config():
    return {
        "architectures": ["MiniMaxForCausalLM"], "model_type": "minimax",
        "vocab_size": V, "hidden_size": H, "num_hidden_layers": len(LAYERS),
        "num_attention_heads": HEADS, "num_key_value_heads": KV,
        "head_dim": D, "intermediate_size": I,
        "max_position_embeddings": 512, "rms_norm_eps": 1e-05,
        "layer_types": LAYERS, "block_size": 256, "num_local_experts": 1,
        "num_experts_per_tok": 1, "hidden_act": "silu",
        "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0},
        "tie_word_embeddings": False, "sliding_window": None,
        "full_attn_alpha_factor": 1, "full_attn_beta_factor": 1,
        "linear_attn_alpha_factor": 1, "linear_attn_beta_factor": 1,
        "mlp_alpha_factor": 1, "mlp_beta_factor": 1,
        "router_aux_loss_coef": 0.001, "router_jitter_noise": 0.0,
        "output_router_logits": False, "dtype": "bfloat16",
    }


def weights(rng):
    def mat(rows, cols, std=0.2):
        return ([rows, cols], [rng.gauss(0.0, std) for _ in range(rows * cols)])

    def ones(n):
        return ([n], [1.0 + rng.gauss(0.0, 0.1) for _ in range(n)])

    w = {"model.embed_tokens.weight": mat(V, H, 1.0),
         "model.norm.weight": ones(H), "lm_head.weight": mat(V, H)}
    for i, kind in enumerate(LAYERS):
        p = f"model.layers.{i}."
        w[p + "input_layernorm.weight"] = ones(H)
        w[p + "post_attention_layernorm.weight"] = ones(H)
        kv = HEADS if kind == "linear_attention" else KV
        w[p + "self_attn.q_proj.weight"] = mat(HEADS * D, H)
        w[p + "self_attn.k_proj.weight"] = mat(kv * D, H)
        w[p + "self_attn.v_proj.weight"] = mat(kv * D, H)
        w[p + "self_attn.o_proj.weight"] = mat(H, HEADS * D)
        if kind == "linear_attention":
            w[p + "self_attn.norm.weight"] = ones(HEADS * D)
            w[p + "self_attn.output_gate.weight"] = mat(HEADS * D, H)
        w[p + "mlp.gate_proj.weight"] = mat(I, H)
        w[p + "mlp.up_proj.weight"] = mat(I, H)
        w[p + "mlp.down_proj.weight"] = mat(H, I)
    return w


def hf_layout(w, stacked, experts=1):
    """The same weights under the original (or transformers') names."""
    out = dict(w)
    for i, kind in enumerate(LAYERS):
        p = f"model.layers.{i}."
        if kind == "linear_attention":
            q, k, v = (out.pop(p + f"self_attn.{n}_proj.weight")[1]
                       for n in "qkv")
            rows = []
            for h in range(HEADS):
                for src in (q, k, v):
                    rows += src[h * D * H:(h + 1) * D * H]
            out[p + "self_attn.qkv_proj.weight"] = ([3 * HEADS * D, H], rows)
            out[p + "self_attn.out_proj.weight"] = out.pop(
                p + "self_attn.o_proj.weight")
        gate = out.pop(p + "mlp.gate_proj.weight")
        up = out.pop(p + "mlp.up_proj.weight")
        down = out.pop(p + "mlp.down_proj.weight")
        router = ([experts, H], [0.5] * (experts * H))
        if stacked:
            out[p + "mlp.experts.gate_up_proj"] = ([1, 2 * I, H],
                                                   gate[1] + up[1])
            out[p + "mlp.experts.down_proj"] = ([1, H, I], down[1])
            out[p + "mlp.gate.weight"] = router
        else:
            e = p + "block_sparse_moe.experts.0."
            out[e + "w1.weight"], out[e + "w3.weight"] = gate, up
            out[e + "w2.weight"] = down
            out[p + "block_sparse_moe.gate.weight"] = router
    return out


def run(cmd, expect=0, env=None):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          env=env)
    text = proc.stdout.decode("utf-8", errors="replace")
    if proc.returncode != expect:
        raise SystemExit(f"FAIL: {' '.join(cmd)} exited with "
                         f"{proc.returncode}, expected {expect}:\n{text}")
    return text


def checkpoint(work, name, tensors):
    folder = os.path.join(work, name)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(config(), f, indent=1)
    write_safetensors(os.path.join(folder, "model.safetensors"), tensors)
    return folder


def generate(strata, work, folder, tokens):
    model = folder + ".yaml"
    run([strata, "import-hf", folder, "-o", model])
    logits = folder + ".logits.json"
    out = run([strata, "run", model, "--prompt-ids",
               ",".join(map(str, PROMPT)), "--max-new-tokens", str(tokens),
               "--logits-out", logits])
    line = next(l for l in out.splitlines() if l.startswith("tokens:"))
    with open(logits) as f:
        return [int(t) for t in line.split()[1:]], json.load(f)["rows"][0]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--strata", required=True)
    parser.add_argument("--strata-run")
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    w = weights(random.Random(7))

    # 1. Three layouts, one model.
    results = {}
    for name, tensors in (("strata-names", w),
                          ("minimax-original", hf_layout(w, stacked=False)),
                          ("transformers-stacked", hf_layout(w, stacked=True))):
        folder = checkpoint(args.work, name, tensors)
        results[name] = generate(args.strata, args.work, folder, 8)
        print(f"{name}: tokens {results[name][0]}")
    ref = results["strata-names"]
    for name, got in results.items():
        if got != ref:
            raise SystemExit(f"FAIL: {name} generates differently from the "
                             f"checkpoint with strata's names")
    print("PASS: every layout gives the same tokens and logits")

    # 2. Several experts are refused, naming the router.
    folder = checkpoint(args.work, "two-experts",
                        hf_layout(w, stacked=False, experts=2))
    run([args.strata, "import-hf", folder, "-o", folder + ".yaml"])
    out = run([args.strata, "run", folder + ".yaml", "--prompt-ids", "1,2"],
              expect=1)
    if "router 'model.layers.0.block_sparse_moe.gate.weight' has shape " \
       "[2, 48]" not in out:
        raise SystemExit(f"FAIL: unexpected message for two experts:\n{out}")
    print("PASS: a router of two experts is refused")

    # 3. check.py passes on strata's own output and fails on changed data.
    folder = checkpoint(args.work, "fixture", w)
    tokens, last = generate(args.strata, args.work, folder, 4)
    _, first = generate(args.strata, args.work, folder, 1)
    case = {"prompt": PROMPT, "continuation": tokens, "prompt_logits": first,
            "final_logits": last, "min_margin_rel": 0.0}
    check = [sys.executable, os.path.join(HERE, "check.py"), "--strata",
             args.strata, "--fixture", folder, "--work",
             os.path.join(args.work, "check")]

    def expect(case, code, what):
        with open(os.path.join(folder, "expected.json"), "w") as f:
            json.dump({"logit_tolerance": 1e-2, "continuation_tokens": 4,
                       "cases": [case]}, f)
        print(run(check, expect=code).rstrip())
        print(f"PASS: check.py {what}")

    expect(case, 0, "accepts strata's own output")
    expect(dict(case, continuation=tokens[:3] + [(tokens[3] + 1) % V]), 1,
           "rejects a different continuation")
    expect(dict(case, final_logits=[v * 1.05 for v in last]), 1,
           "rejects logits 5% off")
    if args.strata_run:
        runtime_only(args, folder)
    return 0


def runtime_only(args, folder):
    """4. check.py --strata-run: the fixture through a compiled plan."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("STRATA_PLAN_DIR", "STRATA_REQUIRE_GPU")}
    plans = os.path.join(args.work, "plans")
    os.makedirs(plans, exist_ok=True)
    yaml = os.path.join(plans, "oracle-fixture.yaml")
    plan = os.path.join(plans, "oracle-fixture.fused.splan")
    run([args.strata, "import-hf", folder, "-o", yaml])
    run([args.strata, "compile", yaml, "--emit=fused", "-o", plan])

    def strata_run(tokens):
        logits = os.path.join(args.work, "plan.logits.json")
        out = run([args.strata_run, plan, "--weights",
                   os.path.join(folder, "model.safetensors"), "--prompt-ids",
                   ",".join(map(str, PROMPT)), "--max-new-tokens",
                   str(tokens), "--logits-out", logits])
        line = next(l for l in out.splitlines() if l.startswith("tokens:"))
        with open(logits) as f:
            return [int(t) for t in line.split()[1:]], json.load(f)["rows"][0]

    tokens, last = strata_run(4)
    _, first = strata_run(1)
    case = {"prompt": PROMPT, "continuation": tokens, "prompt_logits": first,
            "final_logits": last, "min_margin_rel": 0.0}
    base = [sys.executable, os.path.join(HERE, "check.py"), "--strata-run",
            args.strata_run, "--fixture", folder, "--work",
            os.path.join(args.work, "check-rt")]

    def expect(case, code, what, extra, env=env):
        with open(os.path.join(folder, "expected.json"), "w") as f:
            json.dump({"logit_tolerance": 1e-2, "continuation_tokens": 4,
                       "cases": [case]}, f)
        out = run(base + extra, expect=code, env=env).rstrip()
        print(out)
        print(f"PASS: check.py --strata-run {what}")
        return out

    cpu = ["--plan-dir", plans, "--device", "cpu"]
    expect(case, 0, "accepts strata-run's own output", cpu)
    expect(dict(case, continuation=tokens[:3] + [(tokens[3] + 1) % V]), 1,
           "rejects a different continuation", cpu)
    expect(dict(case, prompt_logits=[v * 1.05 for v in first]), 1,
           "rejects logits 5% off", cpu)
    missing = os.path.join(args.work, "no-plans")
    out = expect(case, 1, "fails on a missing plan",
                 ["--plan-dir", missing, "--device", "cpu"])
    if os.path.join(missing, "oracle-fixture.fused.splan") not in out:
        raise SystemExit("FAIL: the missing plan's message does not name it")
    out = expect(case, 0, "takes the plan folder from STRATA_PLAN_DIR",
                 ["--plan-dir", missing, "--device", "cpu"],
                 env=dict(env, STRATA_PLAN_DIR=plans))
    devices = run([args.strata_run, "--list-devices"])
    if devices.startswith("no CUDA device"):
        cuda = ["--plan-dir", plans, "--device", "cuda"]
        out = expect(case, 77, "skips --device cuda without a device", cuda)
        if "SKIPPED" not in out:
            raise SystemExit("FAIL: no SKIPPED line for a missing device")
        expect(case, 1, "fails without a device when STRATA_REQUIRE_GPU=1",
               cuda, env=dict(env, STRATA_REQUIRE_GPU="1"))
        expect(case, 77, "skips without a device even when the plans are "
               "missing", ["--plan-dir", missing, "--device", "cuda"])
    else:
        print("note: a CUDA device is present; the skip path is not tested")


if __name__ == "__main__":
    sys.exit(main())
