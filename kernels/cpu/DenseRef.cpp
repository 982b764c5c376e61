#include "kernels/cpu/DenseRef.h"

#include "kernels/cpu/CpuAccess.h"

#include <cmath>
#include <string>
#include <vector>

namespace strata::kernels {

namespace {

Status needPositive(const char *op, int64_t a, int64_t b) {
  if (a < 0 || b <= 0)
    return Status::error(std::string(op) + ": sizes must be positive, got " +
                         std::to_string(a) + " x " + std::to_string(b));
  return Status::success();
}

float silu(float x) { return x / (1.0f + std::exp(-x)); }

/// out[i] = f(a[i], b[i]); unary ops pass b = null and ignore f's second
/// argument.
template <typename F>
Status elementwise(const char *op, ActDType dtype, int64_t n, const void *a,
                   const void *b, void *out, bool binary, F f) {
  if (n < 0)
    return Status::error(std::string(op) + ": negative size");
  if (!a || !out || (binary && !b))
    return Status::error(std::string(op) + ": null operand");
  for (int64_t i = 0; i < n; ++i) {
    float x = loadAct(dtype, a, i);
    float y = b ? loadAct(dtype, b, i) : 0.0f;
    storeAct(dtype, out, i, f(x, y));
  }
  return Status::success();
}

} // namespace

Status rmsNormRef(ActDType dtype, int64_t rows, int64_t cols, const void *x,
                  const void *w, float eps, void *out) {
  if (Status s = needPositive("rms_norm", rows, cols); !s.ok())
    return s;
  std::vector<float> row(cols);
  for (int64_t r = 0; r < rows; ++r) {
    float sumSq = 0.0f;
    for (int64_t c = 0; c < cols; ++c) {
      row[c] = loadAct(dtype, x, r * cols + c);
      sumSq += row[c] * row[c];
    }
    float inv = 1.0f / std::sqrt(sumSq / static_cast<float>(cols) + eps);
    for (int64_t c = 0; c < cols; ++c)
      storeAct(dtype, out, r * cols + c, row[c] * inv * loadAct(dtype, w, c));
  }
  return Status::success();
}

Status addRmsNormRef(ActDType dtype, int64_t rows, int64_t cols, const void *x,
                     const void *residual, const void *w, float eps,
                     float xScale, float residualScale, void *out, void *sum) {
  if (Status s =
          addRef(dtype, rows * cols, x, residual, xScale, residualScale, sum);
      !s.ok())
    return s;
  return rmsNormRef(dtype, rows, cols, sum, w, eps, out);
}

Status siluMulRef(ActDType dtype, int64_t n, const void *gate, const void *up,
                  void *out) {
  return elementwise("silu_mul", dtype, n, gate, up, out, true,
                     [](float g, float u) { return silu(g) * u; });
}

Status siluRef(ActDType dtype, int64_t n, const void *x, void *out) {
  return elementwise("silu", dtype, n, x, nullptr, out, false,
                     [](float v, float) { return silu(v); });
}

Status sigmoidMulRef(ActDType dtype, int64_t n, const void *gate, const void *x,
                     void *out) {
  return elementwise(
      "sigmoid_mul", dtype, n, gate, x, out, true,
      [](float g, float v) { return v / (1.0f + std::exp(-g)); });
}

Status addRef(ActDType dtype, int64_t n, const void *a, const void *b,
              float aScale, float bScale, void *out) {
  return elementwise("add", dtype, n, a, b, out, true,
                     [=](float x, float y) { return aScale * x + bScale * y; });
}

Status embeddingRef(ActDType dtype, int64_t tokens, int64_t vocab, int64_t cols,
                    const int32_t *ids, const void *table, void *out) {
  if (Status s = needPositive("embedding", tokens, cols); !s.ok())
    return s;
  for (int64_t t = 0; t < tokens; ++t) {
    if (ids[t] < 0 || ids[t] >= vocab)
      return Status::error("embedding: token " + std::to_string(t) +
                           " has id " + std::to_string(ids[t]) +
                           " outside the vocabulary of " +
                           std::to_string(vocab));
    // A gather copies storage bits unchanged.
    copyAct(dtype, actAt(dtype, out, t * cols),
            actAt(dtype, table, int64_t(ids[t]) * cols), cols);
  }
  return Status::success();
}

Status linearRef(ActDType dtype, int64_t m, int64_t n, int64_t k, const void *x,
                 const void *w, const void *bias, void *y, bool f32Out) {
  if (Status s = needPositive("linear", m, n); !s.ok())
    return s;
  if (k <= 0)
    return Status::error("linear: inner size must be positive, got " +
                         std::to_string(k));
  std::vector<float> xRow(k), wf(static_cast<size_t>(n) * k);
  for (int64_t i = 0; i < n * k; ++i)
    wf[i] = loadAct(dtype, w, i);
  for (int64_t r = 0; r < m; ++r) {
    for (int64_t c = 0; c < k; ++c)
      xRow[c] = loadAct(dtype, x, r * k + c);
    for (int64_t o = 0; o < n; ++o) {
      float acc = 0.0f;
      const float *wRow = &wf[o * k];
      for (int64_t c = 0; c < k; ++c)
        acc += xRow[c] * wRow[c];
      if (bias)
        acc += loadAct(dtype, bias, o);
      if (f32Out)
        static_cast<float *>(y)[r * n + o] = acc;
      else
        storeAct(dtype, y, r * n + o, acc);
    }
  }
  return Status::success();
}

} // namespace strata::kernels
