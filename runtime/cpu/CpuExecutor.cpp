#include "runtime/cpu/CpuExecutor.h"

#include "kernels/common/RopeCosSin.h"
#include "kernels/cpu/AttentionRef.h"
#include "kernels/cpu/CpuAccess.h"
#include "kernels/cpu/DenseRef.h"
#include "kernels/cpu/LightningRef.h"
#include "kernels/cpu/RopeKvWriteRef.h"
#include "runtime/LaunchFacts.h"
#include "runtime/LaunchTrace.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace strata {

using kernels::ActDType;
using kernels::Status;

namespace {

Status fail(const plan::Launch &l, const std::string &message) {
  return Status::error("cpu " + plan::launchName(l) + ": " + message);
}

} // namespace

CpuCaches CpuCaches::create(const plan::Plan &plan, int64_t numBlocks,
                            int64_t numSlots) {
  CpuCaches c;
  c.numBlocks = numBlocks;
  c.numSlots = numSlots;
  const plan::KvCacheDesc &kv = plan.kvCache;
  size_t pool = size_t(numBlocks * kv.kvHeads * kv.blockSize * kv.headDim) *
                plan::byteWidth(kv.dtype);
  c.k.assign(kv.layers, std::vector<uint8_t>(pool, 0));
  c.v.assign(kv.layers, std::vector<uint8_t>(pool, 0));
  const plan::LinearStateDesc &ls = plan.linearState;
  c.state.assign(ls.layers, std::vector<float>(size_t(numSlots * ls.heads *
                                                      ls.keyDim * ls.valueDim),
                                               0.0f));
  return c;
}

CpuExecutor::CpuExecutor(const plan::Plan &plan, const plan::Program &program,
                         const WeightStore &weights)
    : plan_(plan), program_(program), weights_(weights),
      arena_(program.arenaBytes) {}

void *CpuExecutor::data(int32_t buffer) {
  const plan::Buffer &b = program_.buffers[buffer];
  switch (b.kind) {
  case plan::BufferKind::Arena:
    return arena_.data() + b.arenaOffset;
  case plan::BufferKind::Weight:
    return const_cast<void *>(weights_.data(b.weight));
  case plan::BufferKind::Output: {
    std::vector<uint8_t> &out = outputs_[buffer];
    out.resize(size_t(plan::numElements(b.shape, tokens_, batch_)) *
               plan::byteWidth(b.dtype));
    return out.data();
  }
  case plan::BufferKind::Input:
    switch (b.role) {
    case plan::InputRole::TokenIds:
      return const_cast<int32_t *>(in_->tokenIds.data());
    case plan::InputRole::Positions:
      return const_cast<int32_t *>(in_->positions.data());
    case plan::InputRole::ParentIds:
      return const_cast<int32_t *>(in_->parentIds.data());
    case plan::InputRole::Sequences:
    case plan::InputRole::None: // refused by validatePlan
      return nullptr;           // read from StepInputs
    }
    return nullptr;
  case plan::BufferKind::KvCache:
  case plan::BufferKind::LinearState:
    return nullptr; // addressed per layer through CpuCaches
  }
  return nullptr;
}

const float *CpuExecutor::ropeTable(const plan::RotaryParams &rotary,
                                    int64_t maxPos, Status &status,
                                    int64_t *rows) {
  kernels::RopeTableSpec spec = ropeSpecOf(rotary);
  std::string key = ropeTableKey(spec);
  std::vector<float> &table = ropeTables_[key];
  // Grown in powers of two as positions grow, so a long generation builds
  // it a handful of times.
  int64_t have = spec.rotaryDim ? int64_t(table.size()) / spec.rotaryDim : 0;
  if (have < maxPos) {
    spec.maxPos = std::max<int64_t>(
        1024, int64_t(1) << int64_t(std::ceil(std::log2(double(maxPos)))));
    status = kernels::buildRopeCosSin(spec, table);
  }
  if (rows)
    *rows = spec.rotaryDim ? int64_t(table.size()) / spec.rotaryDim : 0;
  return table.data();
}

Status CpuExecutor::run(const StepInputs &in, CpuCaches &caches,
                        std::vector<float> &logits) {
  in_ = &in;
  tokens_ = in.numTokens();
  batch_ = in.batch();
  if (tokens_ > plan_.limits.maxTokens || batch_ > plan_.limits.maxBatch)
    return Status::error("step of " + std::to_string(tokens_) + " tokens in " +
                         std::to_string(batch_) +
                         " sequences exceeds the plan's limits (" +
                         std::to_string(plan_.limits.maxTokens) + " tokens, " +
                         std::to_string(plan_.limits.maxBatch) + " sequences)");
  outputs_.clear();
  for (size_t i = 0; i < program_.launches.size(); ++i) {
    const plan::Launch &l = program_.launches[i];
    if (Status s = launch(l, in, caches); !s.ok())
      return s;
    if (launchTraceEnabled() && !l.outputs.empty()) {
      const plan::Buffer &b = program_.buffers[l.outputs[0]];
      traceLaunch("cpu", program_, i, data(l.outputs[0]), b.dtype,
                  plan::numElements(b.shape, tokens_, batch_));
    }
  }
  for (const auto &[buffer, bytes] : outputs_)
    if (program_.buffers[buffer].dtype == plan::DType::F32) {
      logits.resize(bytes.size() / 4);
      std::memcpy(logits.data(), bytes.data(), bytes.size());
      return Status::success();
    }
  return Status::error("the program has no fp32 output (logits)");
}

Status CpuExecutor::checkCacheType(const plan::Launch &l, ActDType act) const {
  const plan::DType cache = plan_.kvCache.dtype;
  if ((cache == plan::DType::F32 && act == ActDType::F32) ||
      (cache == plan::DType::F16 && act == ActDType::F16) ||
      (cache == plan::DType::BF16 && act == ActDType::BF16))
    return Status::success();
  return fail(l, std::string("the KV cache holds ") + plan::toString(cache) +
                     " elements but the launch's activations are " +
                     kernels::actDTypeName(act) +
                     "; the reference reads both in one dtype");
}

Status CpuExecutor::launch(const plan::Launch &l, const StepInputs &in,
                           CpuCaches &caches) {
  auto buf = [&](size_t i, bool output) -> const plan::Buffer & {
    return program_.buffers[output ? l.outputs[i] : l.inputs[i]];
  };
  auto in0 = [&](size_t i) { return data(l.inputs[i]); };
  auto out0 = [&](size_t i) { return data(l.outputs[i]); };
  const ActDType act = activationType(program_, l);
  auto elements = [&](const plan::Buffer &b) {
    return plan::numElements(b.shape, tokens_, batch_);
  };
  using plan::Kernel;
  switch (l.kernel()) {
  case Kernel::Embedding: {
    const plan::Buffer &table = buf(1, false);
    return kernels::embeddingRef(
        act, tokens_, table.shape[0].value, table.shape[1].value,
        static_cast<const int32_t *>(in0(0)), in0(1), out0(0));
  }
  case Kernel::RmsNorm:
  case Kernel::HeadNorm: {
    const double eps = l.kernel() == Kernel::RmsNorm
                           ? l.as<plan::RmsNormParams>().eps
                           : l.as<plan::HeadNormParams>().eps;
    int64_t cols = lastDim(buf(0, false));
    return kernels::rmsNormRef(act, elements(buf(0, false)) / cols, cols,
                               in0(0), in0(1), float(eps), out0(0));
  }
  case Kernel::Linear: {
    const plan::Buffer &w = buf(1, false);
    int64_t n = w.shape[0].value, kk = w.shape[1].value;
    return kernels::linearRef(act, tokens_, n, kk, in0(0), in0(1),
                              l.inputs.size() > 2 ? in0(2) : nullptr, out0(0));
  }
  case Kernel::SplitHeads:
  case Kernel::MergeHeads:
    // Row-major [T, H*D] and [T, H, D] are the same bytes.
    std::memmove(out0(0), in0(0),
                 size_t(elements(buf(0, false))) *
                     plan::byteWidth(buf(0, false).dtype));
    return Status::success();
  case Kernel::SiluMul:
    return kernels::siluMulRef(act, elements(buf(0, true)), in0(0), in0(1),
                               out0(0));
  case Kernel::Silu:
    return kernels::siluRef(act, elements(buf(0, true)), in0(0), out0(0));
  case Kernel::SigmoidMul:
    return kernels::sigmoidMulRef(act, elements(buf(0, true)), in0(0), in0(1),
                                  out0(0));
  case Kernel::Add: {
    const auto &p = l.as<plan::AddParams>();
    return kernels::addRef(act, elements(buf(0, true)), in0(0), in0(1),
                           float(p.lhsScale), float(p.rhsScale), out0(0));
  }
  case Kernel::Rope: {
    const plan::RotaryParams &rotary = l.as<plan::RopeParams>().rotary;
    const plan::Buffer &x = buf(0, false);
    const int64_t heads = x.shape[1].value, dim = x.shape[2].value;
    const int64_t rot = rotary.rotaryDim;
    const bool neox = rotary.pairing == plan::RopePairing::Neox;
    const auto *pos = static_cast<const int32_t *>(in0(1));
    int64_t maxPos = 1;
    for (int64_t t = 0; t < tokens_; ++t)
      maxPos = std::max<int64_t>(maxPos, int64_t(pos[t]) + 1);
    Status status;
    const float *table = ropeTable(rotary, maxPos, status);
    if (!status.ok())
      return status;
    const void *src = in0(0);
    void *dst = out0(0);
    if (dst != src)
      kernels::copyAct(act, dst, src, tokens_ * heads * dim);
    for (int64_t t = 0; t < tokens_; ++t) {
      if (pos[t] < 0)
        return fail(l, "token " + std::to_string(t) + " has position " +
                           std::to_string(pos[t]));
      const float *row = table + int64_t(pos[t]) * rot;
      for (int64_t h = 0; h < heads; ++h) {
        void *x0 = kernels::actAt(act, dst, (t * heads + h) * dim);
        for (int64_t i = 0; i < rot / 2; ++i) {
          int64_t a = neox ? i : 2 * i, b = neox ? i + rot / 2 : 2 * i + 1;
          float xa = kernels::loadAct(act, x0, a);
          float xb = kernels::loadAct(act, x0, b);
          float c = row[i], s = row[rot / 2 + i];
          kernels::storeAct(act, x0, a, xa * c - xb * s);
          kernels::storeAct(act, x0, b, xb * c + xa * s);
        }
      }
    }
    return Status::success();
  }
  case Kernel::KvAppend: {
    const plan::KvCacheDesc &kv = plan_.kvCache;
    const int64_t layer = l.as<plan::KvAppendParams>().layer;
    const int64_t rowElems = kv.kvHeads * kv.headDim;
    if (Status s = checkCacheType(l, act); !s.ok())
      return s;
    for (int64_t t = 0; t < tokens_; ++t) {
      int64_t slot = in.slotMapping[t];
      int64_t block = slot / kv.blockSize, offset = slot % kv.blockSize;
      if (block < 0 || block >= caches.numBlocks)
        return fail(l, "token " + std::to_string(t) + " maps to KV slot " +
                           std::to_string(slot) + " outside the pool");
      for (int64_t h = 0; h < kv.kvHeads; ++h) {
        int64_t at =
            ((block * kv.kvHeads + h) * kv.blockSize + offset) * kv.headDim;
        int64_t from = t * rowElems + h * kv.headDim;
        kernels::copyAct(act, kernels::actAt(act, caches.k[layer].data(), at),
                         kernels::actAt(act, in0(0), from), kv.headDim);
        kernels::copyAct(act, kernels::actAt(act, caches.v[layer].data(), at),
                         kernels::actAt(act, in0(1), from), kv.headDim);
      }
    }
    return Status::success();
  }
  case Kernel::Attention: {
    const auto &p = l.as<plan::AttentionParams>();
    return cachedAttention(l, p.layer, p.scale, p.slidingWindow, act, in0(0),
                           out0(0), nullptr, in, caches);
  }
  case Kernel::ExtendAttention: {
    const auto &p = l.as<plan::ExtendAttentionParams>();
    return cachedAttention(l, p.layer, p.scale, p.slidingWindow, act, in0(0),
                           out0(0), nullptr, in, caches);
  }
  case Kernel::PagedDecodeAttention: {
    const auto &p = l.as<plan::PagedDecodeAttentionParams>();
    return cachedAttention(l, p.layer, p.scale, p.slidingWindow, act, in0(0),
                           out0(0), nullptr, in, caches);
  }
  case Kernel::TreeAttention: {
    const auto &p = l.as<plan::TreeAttentionParams>();
    return cachedAttention(l, p.layer, p.scale, p.slidingWindow, act, in0(0),
                           out0(0), in0(3), in, caches);
  }
  case Kernel::PrefillAttention:
    return packedAttention(l.as<plan::PrefillAttentionParams>(), act, in0(0),
                           out0(0), in);
  case Kernel::RopeKvWrite:
    return ropeKvWrite(l, l.as<plan::RopeKvWriteParams>(), act, in0(0), out0(0),
                       in, caches);
  case Kernel::LightningPrefill: {
    const auto &p = l.as<plan::LightningPrefillParams>();
    return lightning(l, p.layer, p.decaySlopes, act, {in0(0), in0(1), in0(2)},
                     out0(0), in, caches,
                     /*prefill=*/true);
  }
  case Kernel::LightningDecode: {
    const auto &p = l.as<plan::LightningDecodeParams>();
    return lightning(l, p.layer, p.decaySlopes, act, {in0(0), in0(1), in0(2)},
                     out0(0), in, caches,
                     /*prefill=*/false);
  }
  case Kernel::LinearAttention: {
    const auto &p = l.as<plan::LinearAttentionParams>();
    return lightning(l, p.layer, p.decaySlopes, act, {in0(0), in0(1), in0(2)},
                     out0(0), in, caches,
                     /*prefill=*/true);
  }
  case Kernel::AddRmsNorm: {
    const auto &p = l.as<plan::AddRmsNormParams>();
    int64_t cols = lastDim(buf(0, false));
    return kernels::addRmsNormRef(act, elements(buf(0, false)) / cols, cols,
                                  in0(0), in0(1), in0(2), float(p.eps),
                                  float(p.xScale), float(p.residualScale),
                                  out0(0), out0(1));
  }
  case Kernel::Swiglu: {
    // Each row is [gate (I), up (I)].
    const int64_t inner = lastDim(buf(0, true));
    const void *gu = in0(0);
    void *out = out0(0);
    for (int64_t t = 0; t < tokens_; ++t)
      if (Status st = kernels::siluMulRef(
              act, inner, kernels::actAt(act, gu, 2 * t * inner),
              kernels::actAt(act, gu, (2 * t + 1) * inner),
              kernels::actAt(act, out, t * inner));
          !st.ok())
        return st;
    return Status::success();
  }
  case Kernel::HeadSlice: {
    const auto &p = l.as<plan::HeadSliceParams>();
    const plan::Buffer &x = buf(0, false);
    const int64_t heads = x.shape[1].value, dim = x.shape[2].value;
    for (int64_t t = 0; t < tokens_; ++t)
      kernels::copyAct(act, kernels::actAt(act, out0(0), t * p.numHeads * dim),
                       kernels::actAt(act, in0(0), (t * heads + p.first) * dim),
                       p.numHeads * dim);
    return Status::success();
  }
  case Kernel::Logits: {
    const plan::Buffer &w = buf(1, false);
    const int64_t vocab = w.shape[0].value, hidden = w.shape[1].value;
    const void *h = in0(0);
    if (l.as<plan::LogitsParams>().allTokens)
      return kernels::linearRef(act, tokens_, vocab, hidden, h, in0(1), nullptr,
                                out0(0), /*f32Out=*/true);
    // One row per sequence: its last token.
    std::vector<uint8_t> last(
        size_t(batch_ * hidden * kernels::actDTypeBytes(act)));
    for (int64_t b = 0; b < batch_; ++b) {
      int64_t t = in.cuQLens[b + 1] - 1;
      kernels::copyAct(act, kernels::actAt(act, last.data(), b * hidden),
                       kernels::actAt(act, h, t * hidden), hidden);
    }
    return kernels::linearRef(act, batch_, vocab, hidden, last.data(), in0(1),
                              nullptr, out0(0), /*f32Out=*/true);
  }
  }
  return fail(l, "has an unknown kernel code");
}

Status CpuExecutor::cachedAttention(const plan::Launch &l, int64_t layer,
                                    double scale, int64_t slidingWindow,
                                    ActDType act, const void *q, void *out,
                                    const void *parentIds, const StepInputs &in,
                                    CpuCaches &caches) {
  const plan::KvCacheDesc &kv = plan_.kvCache;
  const plan::Buffer &qBuf = program_.buffers[l.inputs[0]];
  if (Status s = checkCacheType(l, act); !s.ok())
    return s;
  kernels::AttentionTensors t;
  t.q = q;
  t.out = out;
  t.cuQLens = in.cuQLens.data();
  t.kvLens = in.kvLens.data();
  t.parentIds = static_cast<const int32_t *>(parentIds);
  if (parentIds)
    t.positions = in.positions.data();
  t.cache = kernels::KvCacheView::paged(
      caches.k[layer].data(), caches.v[layer].data(), caches.numBlocks,
      kv.blockSize, in.blockTables.data(), in.maxBlocksPerSeq);
  return kernels::attentionRef(
      attentionDimsOf(kv, batch_, qBuf.shape[1].value, act, scale,
                      slidingWindow),
      t);
}

Status CpuExecutor::packedAttention(const plan::PrefillAttentionParams &p,
                                    ActDType act, const void *qkv, void *out,
                                    const StepInputs &in) {
  // Fresh tokens only: K and V come from the packed buffer. Each sequence's
  // K and V are gathered into a contiguous cache [1, 2, Hkv, len, D] and
  // attended to with the reference.
  const int64_t hq = p.numQHeads, hkv = p.numKvHeads;
  const int64_t dim = plan_.kvCache.headDim, heads = hq + 2 * hkv;
  const size_t width = size_t(kernels::actDTypeBytes(act));
  kernels::AttentionDims d = attentionDimsOf(plan_.kvCache, 1, hq, act,
                                             p.scale, p.slidingWindow);
  for (int64_t b = 0; b < batch_; ++b) {
    const int64_t begin = in.cuQLens[b], len = in.cuQLens[b + 1] - begin;
    if (len == 0)
      continue;
    std::vector<uint8_t> q(size_t(len * hq * dim) * width),
        cache(size_t(2 * hkv * len * dim) * width);
    for (int64_t t = 0; t < len; ++t) {
      const void *row = kernels::actAt(act, qkv, (begin + t) * heads * dim);
      kernels::copyAct(act, kernels::actAt(act, q.data(), t * hq * dim), row,
                       hq * dim);
      for (int64_t kvi = 0; kvi < 2; ++kvi)
        for (int64_t h = 0; h < hkv; ++h)
          kernels::copyAct(act,
                           kernels::actAt(act, cache.data(),
                                          ((kvi * hkv + h) * len + t) * dim),
                           kernels::actAt(act, row, (hq + kvi * hkv + h) * dim),
                           dim);
    }
    int32_t cu[2] = {0, int32_t(len)}, kvLen = int32_t(len);
    kernels::AttentionTensors t;
    t.q = q.data();
    t.out = kernels::actAt(act, out, begin * hq * dim);
    t.cuQLens = cu;
    t.kvLens = &kvLen;
    t.cache = kernels::KvCacheView::contiguous(cache.data(), len);
    if (Status st = kernels::attentionRef(d, t); !st.ok())
      return st;
  }
  return Status::success();
}

Status CpuExecutor::ropeKvWrite(const plan::Launch &l,
                                const plan::RopeKvWriteParams &p, ActDType act,
                                const void *qkv, void *out,
                                const StepInputs &in, CpuCaches &caches) {
  const plan::KvCacheDesc &kv = plan_.kvCache;
  const int64_t layer = p.layer;
  const int64_t hq = p.numQHeads, hkv = p.numKvHeads;
  const int64_t dim = kv.headDim, heads = hq + 2 * hkv;
  const bool packed = p.variant == plan::RopeKvVariant::Packed,
             tree = p.variant == plan::RopeKvVariant::Tree;
  if (Status s = checkCacheType(l, act); !s.ok())
    return s;
  int64_t maxPos = 1;
  for (int64_t t = 0; t < tokens_; ++t)
    maxPos = std::max<int64_t>(maxPos, int64_t(in.positions[t]) + 1);
  Status status;
  int64_t tableRows = 0;
  const float *table = ropeTable(p.rotary, maxPos, status, &tableRows);
  if (!status.ok())
    return status;
  if (packed && out != qkv) // rotated in place in the output copy
    kernels::copyAct(act, out, qkv, tokens_ * heads * dim);
  const void *src = packed ? out : qkv;
  const size_t width = size_t(kernels::actDTypeBytes(act));
  const int32_t rope = int32_t(p.rotary.rotaryDim);
  // The q/k norm weights follow qkv, positions, cache and seqs.
  const void *qNorm = l.inputs.size() > 4 ? data(l.inputs[4]) : nullptr;
  const void *kNorm = l.inputs.size() > 5 ? data(l.inputs[5]) : nullptr;
  for (int64_t b = 0; b < batch_; ++b) {
    const int64_t begin = in.cuQLens[b], len = in.cuQLens[b + 1] - begin;
    if (len == 0)
      continue;
    kernels::RopeKvArgs a;
    a.variant = packed ? kernels::RopeKvVariant::Packed
                : tree ? kernels::RopeKvVariant::Tree
                       : kernels::RopeKvVariant::Continuous;
    a.dims.batch = 1;
    a.dims.seq = len;
    a.dims.numQHeads = int32_t(hq);
    a.dims.numKvHeads = int32_t(hkv);
    a.dims.headDim = int32_t(dim);
    a.dims.rotaryDim = rope;
    a.dims.pairing = ropePairingOf(p.rotary);
    a.dims.dtype = act;
    // Per-sequence copies keep every operand 16-byte aligned, as the
    // reference (like the kernel) requires.
    const auto *first = static_cast<const uint8_t *>(
        kernels::actAt(act, src, begin * heads * dim));
    std::vector<uint8_t> qkvCopy(first,
                                 first + size_t(len * heads * dim) * width);
    std::vector<uint8_t> qOut(size_t(len * hq * dim) * width);
    int32_t cached = in.kvLens[b] - int32_t(len);
    std::vector<int32_t> posIds(in.positions.begin() + begin,
                                in.positions.begin() + begin + len);
    std::vector<int32_t> table1(in.blockTables.begin() + b * in.maxBlocksPerSeq,
                                in.blockTables.begin() +
                                    (b + 1) * in.maxBlocksPerSeq);
    a.qkv = qkvCopy.data();
    a.qOut = packed ? nullptr : qOut.data();
    a.kvLens = packed ? nullptr : &cached;
    a.posIds = tree ? posIds.data() : nullptr;
    a.cosSin = {table, 1, tableRows};
    a.qkNorm.qWeight = qNorm;
    a.qkNorm.kWeight = kNorm;
    a.qkNorm.eps = float(p.qkNormEps);
    a.cache = kernels::KvCacheView::paged(
        caches.k[layer].data(), caches.v[layer].data(), caches.numBlocks,
        kv.blockSize, table1.data(), in.maxBlocksPerSeq);
    if (Status st = kernels::ropeKvWriteRef(a); !st.ok())
      return st;
    if (packed)
      std::memcpy(kernels::actAt(act, out, begin * heads * dim), qkvCopy.data(),
                  qkvCopy.size());
    else
      std::memcpy(kernels::actAt(act, out, begin * hq * dim), qOut.data(),
                  qOut.size());
  }
  return Status::success();
}

Status CpuExecutor::lightning(const plan::Launch &l, int64_t layer,
                              const std::vector<double> &decaySlopes,
                              ActDType act, std::array<const void *, 3> qkv,
                              void *out, const StepInputs &in,
                              CpuCaches &caches, bool prefill) {
  const plan::LinearStateDesc &ls = plan_.linearState;
  if (int64_t(decaySlopes.size()) != ls.heads)
    return fail(l, "needs one decay slope per head");
  std::vector<float> decay(decaySlopes.begin(), decaySlopes.end());
  kernels::LightningDims d;
  d.batch = batch_;
  d.numHeads = int32_t(ls.heads);
  d.headDim = int32_t(ls.keyDim);
  d.numSlots = caches.numSlots;
  d.dtype = act;
  kernels::LightningTensors t;
  t.q = qkv[0];
  t.k = qkv[1];
  t.v = qkv[2];
  t.out = out;
  t.state = caches.state[layer].data();
  t.slots = in.stateSlots.data();
  t.decay = decay.data();
  t.cuSeqLens = in.cuQLens.data();
  return prefill ? kernels::lightningPrefillRef(d, t)
                 : kernels::lightningDecodeRef(d, t);
}

} // namespace strata
