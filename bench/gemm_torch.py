"""PyTorch matmul (cuBLAS) on the large linear shapes of
strata-bench-dense, for the comparison column of docs/benchmarks.md.

Run on the GPU machine: python3 bench/gemm_torch.py
y = x w^T with x [m, k] and w [n, k] in bf16, as strata's linear layers.
Random operands, two weight sets alternated like the strata rows; the
median of do_bench, the same clocks and power state as the rows it is set
beside when run in the same call.
"""
import torch
from triton.testing import do_bench

SHAPES = [("qkv", 6144, 4096), ("o", 4096, 4096), ("gate_up", 28672, 4096),
          ("down", 4096, 14336)]


def linear(name, m, n, k):
    x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    ws = [torch.randn(n, k, device="cuda", dtype=torch.bfloat16) * 0.05
          for _ in range(2)]
    i = [0]

    def fn():
        i[0] += 1
        return torch.matmul(x, ws[i[0] % 2].t())

    ms = do_bench(fn, warmup=25, rep=300, return_mode="median")
    tflops = 2.0 * m * n * k / ms / 1e9
    print(f"| torch matmul {name} | m {m}, n {n}, k {k} | {ms * 1e3:.1f} us "
          f"| {tflops:.0f} TFLOP/s |")


if __name__ == "__main__":
    for m in (4096, 8192):
        for name, n, k in SHAPES:
            linear(name, m, n, k)
