"""PyTorch scaled_dot_product_attention on the shapes of
strata-bench-attention, for the ratio columns of docs/benchmarks.md.

Run on the GPU machine: python3 bench/attention_sdpa.py
Prefill: causal, 32 q / 8 kv heads (enable_gqa), headDim 128, bf16; SDPA's
own choice and each backend it can dispatch to, forced.
Decode: one query over a contiguous KV of the given context.
"""
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from triton.testing import do_bench


def prefill(length, hq=32, hkv=8, d=128):
    """Each backend SDPA may dispatch to, then SDPA's own choice: the ratio
    in docs/benchmarks.md is taken against the fastest."""
    q = torch.randn(1, hq, length, d, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(1, hkv, length, d, device="cuda", dtype=torch.bfloat16)
    v = torch.randn_like(k)
    flops = 4.0 * hq * d * length * (length + 1) / 2
    # A backend without GQA runs on K and V expanded to every q head (the
    # same FLOPs).
    ke = k.repeat_interleave(hq // hkv, dim=1)
    ve = v.repeat_interleave(hq // hkv, dim=1)
    gqa = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                                 enable_gqa=True)
    mha = lambda: F.scaled_dot_product_attention(q, ke, ve, is_causal=True)
    backends = [("default", None)]
    for name in ("FLASH_ATTENTION", "CUDNN_ATTENTION", "EFFICIENT_ATTENTION"):
        if hasattr(SDPBackend, name):
            backends.append((name.lower(), getattr(SDPBackend, name)))
    for name, backend in backends:
        for label, fn in (("", gqa), (" (K/V expanded)", mha)):
            try:
                if backend is None:
                    ms = do_bench(fn, warmup=50, rep=300,
                                  return_mode="median")
                else:
                    with sdpa_kernel([backend]):
                        ms = do_bench(fn, warmup=50, rep=300,
                                      return_mode="median")
            except RuntimeError as e:  # a backend that refuses the shape
                print(f"| sdpa prefill causal {name}{label} | len={length} "
                      f"| not available: {str(e).splitlines()[0][:80]} |")
                continue
            print(f"| sdpa prefill causal {name}{label} | len={length} "
                  f"Hq={hq} Hkv={hkv} d={d} | {ms * 1e3:.1f} us | "
                  f"{flops / ms / 1e9:.0f} TFLOP/s |")


def decode(batch, context, hq=32, hkv=8, d=128):
    q = torch.randn(batch, hq, 1, d, device="cuda", dtype=torch.bfloat16)
    sets = max(2, int(512e6 // (batch * context * hkv * d * 4)) + 1)
    kv = [(torch.randn(batch, hkv, context, d, device="cuda",
                       dtype=torch.bfloat16),
           torch.randn(batch, hkv, context, d, device="cuda",
                       dtype=torch.bfloat16)) for _ in range(sets)]
    i = [0]

    def fn():
        k, v = kv[i[0] % sets]
        i[0] += 1
        return F.scaled_dot_product_attention(q, k, v, enable_gqa=True)

    ms = do_bench(fn, warmup=50, rep=300, return_mode="median")
    gbs = batch * context * hkv * d * 4 / ms / 1e6
    print(f"| sdpa decode | b={batch} ctx={context} | {ms * 1e3:.1f} us | "
          f"{gbs:.0f} GB/s |")


if __name__ == "__main__":
    prefill(8192)
    decode(1, 8192)
    decode(16, 4096)
