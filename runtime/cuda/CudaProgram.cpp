#include "runtime/cuda/CudaProgram.h"

#include "kernels/attention/Attention.h"
#include "kernels/common/CudaCheck.h"
#include "kernels/elementwise/Elementwise.h"
#include "kernels/linear_attention/LightningAttention.h"
#include "kernels/norm/RmsNorm.h"
#include "kernels/rope_kv/RopeApart.h"
#include "kernels/rope_kv/RopeKvWrite.h"
#include "runtime/LaunchFacts.h"
#include "runtime/LaunchTrace.h"
#include "runtime/cuda/DeviceMemory.h"

#include <algorithm>
#include <set>

namespace strata {

using kernels::ActDType;
using kernels::Status;

CudaProgram::CudaProgram(const plan::Plan &plan, const plan::Program &program)
    : plan_(plan), program_(program) {
  std::map<int32_t, size_t> producer;
  for (size_t i = 0; i < program.launches.size(); ++i) {
    const plan::Launch &l = program.launches[i];
    int64_t layer = plan::launchLayer(l).value_or(-1);
    if (l.kernel() == plan::Kernel::PrefillAttention && !l.inputs.empty()) {
      auto it = producer.find(l.inputs[0]);
      const plan::Launch *write =
          it == producer.end() ? nullptr : &program.launches[it->second];
      if (write && write->kernel() == plan::Kernel::RopeKvWrite &&
          write->as<plan::RopeKvWriteParams>().variant ==
              plan::RopeKvVariant::Packed)
        layer = write->as<plan::RopeKvWriteParams>().layer;
    }
    layers_.push_back(layer);
    for (int32_t out : l.outputs)
      producer[out] = i;
  }
}

CudaProgram::~CudaProgram() {
  for (cudaEvent_t e : profileEvents_)
    cudaEventDestroy(e);
  for (cudaEvent_t e : events_)
    cudaEventDestroy(e);
  for (cudaEvent_t e : joins_)
    cudaEventDestroy(e);
  if (fork_)
    cudaEventDestroy(fork_);
}

std::string CudaProgram::unsupportedLaunch() const {
  // Every kernel has a CUDA implementation (the generic rope, kv_append
  // and attention that a plan built without some fusions keeps included:
  // rope and kv_append on their own kernels, attention on the general
  // cached-attention kernel extend uses); two uses of them do not.
  for (size_t i = 0; i < program_.launches.size(); ++i) {
    const plan::Launch &l = program_.launches[i];
    if (l.kernel() == plan::Kernel::Attention &&
        !l.as<plan::AttentionParams>().causal)
      return describeLaunch(program_, i) +
             ": the CUDA backend runs causal softmax attention only";
    if (l.kernel() == plan::Kernel::PrefillAttention && layers_[i] < 0)
      return describeLaunch(program_, i) +
             ": its packed QKV does not come from a rope_kv_write<packed> "
             "launch, whose cache the GPU kernel reads K and V from";
  }
  return {};
}

Status CudaProgram::init(size_t numStreams) {
  events_.assign(program_.events.size(), nullptr);
  for (cudaEvent_t &e : events_)
    STRATA_CUDA_RETURN_IF_ERROR(
        cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "event create");
  STRATA_CUDA_RETURN_IF_ERROR(
      cudaEventCreateWithFlags(&fork_, cudaEventDisableTiming), "event create");
  joins_.assign(numStreams, nullptr);
  for (cudaEvent_t &e : joins_)
    STRATA_CUDA_RETURN_IF_ERROR(
        cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "event create");
  return Status::success();
}

uint64_t CudaProgram::outputSlotBytes(const plan::Buffer &b) const {
  return deviceAlign(uint64_t(plan::numElements(b.shape,
                                                plan_.limits.maxTokens,
                                                plan_.limits.maxBatch)) *
                     plan::byteWidth(b.dtype));
}

uint64_t CudaProgram::outputBytes() const {
  uint64_t bytes = 0;
  for (const plan::Buffer &b : program_.buffers)
    if (b.kind == plan::BufferKind::Output)
      bytes += outputSlotBytes(b);
  return bytes;
}

void CudaProgram::bindOutputs(void *base) {
  uint64_t offset = 0;
  outputs_.clear();
  logits_ = nullptr;
  for (size_t i = 0; i < program_.buffers.size(); ++i) {
    const plan::Buffer &b = program_.buffers[i];
    if (b.kind != plan::BufferKind::Output)
      continue;
    void *p = static_cast<char *>(base) + offset;
    outputs_[int32_t(i)] = p;
    if (b.dtype == plan::DType::F32 && !logits_)
      logits_ = static_cast<const float *>(p);
    offset += outputSlotBytes(b);
  }
}

void *CudaProgram::data(int32_t buffer, const DeviceState &state) const {
  const plan::Buffer &b = program_.buffers[buffer];
  switch (b.kind) {
  case plan::BufferKind::Arena:
    return static_cast<char *>(state.arena) + b.arenaOffset;
  case plan::BufferKind::Weight:
    return const_cast<void *>(state.weights[b.weight]);
  case plan::BufferKind::Output: {
    auto it = outputs_.find(buffer);
    return it == outputs_.end() ? nullptr : it->second;
  }
  case plan::BufferKind::Input:
    switch (b.role) {
    case plan::InputRole::TokenIds:
      return const_cast<int32_t *>(state.tokenIds);
    case plan::InputRole::Positions:
      return const_cast<int32_t *>(state.positions);
    case plan::InputRole::ParentIds:
      return const_cast<int32_t *>(state.parentIds);
    case plan::InputRole::Sequences:
    case plan::InputRole::None: // refused by validatePlan
      return nullptr; // lives in DeviceState
    }
    return nullptr;
  case plan::BufferKind::KvCache:
  case plan::BufferKind::LinearState:
    return nullptr; // addressed per layer
  }
  return nullptr;
}

Status CudaProgram::issue(const DeviceState &state, const StepShape &shape) {
  const size_t streams = size_t(std::max(1, program_.numStreams));
  if (streams > state.streams.size() || streams > joins_.size())
    return Status::error(program_.phase + ": the program uses " +
                         std::to_string(streams) + " streams, " +
                         std::to_string(state.streams.size()) + " exist");
  cudaStream_t main = state.streams[0];
  if (streams > 1) {
    STRATA_CUDA_RETURN_IF_ERROR(cudaEventRecord(fork_, main), "fork record");
    for (size_t s = 1; s < streams; ++s)
      STRATA_CUDA_RETURN_IF_ERROR(
          cudaStreamWaitEvent(state.streams[s], fork_, 0), "fork wait");
  }
  for (size_t i = 0; i < program_.launches.size(); ++i) {
    const plan::Launch &l = program_.launches[i];
    cudaStream_t stream = state.streams[size_t(l.stream)];
    for (size_t e = 0; e < program_.events.size(); ++e)
      if (size_t(program_.events[e].to) == i)
        STRATA_CUDA_RETURN_IF_ERROR(cudaStreamWaitEvent(stream, events_[e], 0),
                                    (describeLaunch(program_, i) +
                                     ": waiting for an event")
                                        .c_str());
    const bool profile = launchProfileEnabled() && shape.host;
    if (profile) {
      if (profileEvents_.size() < 2 * program_.launches.size()) {
        profileEvents_.assign(2 * program_.launches.size(), nullptr);
        for (cudaEvent_t &e : profileEvents_)
          STRATA_CUDA_RETURN_IF_ERROR(cudaEventCreate(&e), "event create");
      }
      STRATA_CUDA_RETURN_IF_ERROR(cudaEventRecord(profileEvents_[2 * i], stream),
                                  "profile event");
    }
    if (Status s = launch(i, state, shape, stream); !s.ok())
      return Status::error(describeLaunch(program_, i) + ": " + s.message());
    if (profile) {
      STRATA_CUDA_RETURN_IF_ERROR(
          cudaEventRecord(profileEvents_[2 * i + 1], stream), "profile event");
      profiled_ = true;
    }
    if (launchTraceEnabled() && shape.host && !l.outputs.empty())
      if (Status s = trace(i, state, shape, stream); !s.ok())
        return s;
    for (size_t e = 0; e < program_.events.size(); ++e)
      if (size_t(program_.events[e].from) == i)
        STRATA_CUDA_RETURN_IF_ERROR(cudaEventRecord(events_[e], stream),
                                    (describeLaunch(program_, i) +
                                     ": recording an event")
                                        .c_str());
  }
  for (size_t s = 1; s < streams; ++s) {
    STRATA_CUDA_RETURN_IF_ERROR(cudaEventRecord(joins_[s], state.streams[s]),
                                "join record");
    STRATA_CUDA_RETURN_IF_ERROR(cudaStreamWaitEvent(main, joins_[s], 0),
                                "join wait");
  }
  return Status::success();
}

void CudaProgram::collectProfile(std::map<std::string, double> &byKernel) {
  if (!profiled_)
    return;
  profiled_ = false;
  for (size_t i = 0; i < program_.launches.size(); ++i) {
    const plan::Launch &l = program_.launches[i];
    if (cudaEventSynchronize(profileEvents_[2 * i + 1]) != cudaSuccess)
      return;
    float ms = 0;
    if (cudaEventElapsedTime(&ms, profileEvents_[2 * i],
                             profileEvents_[2 * i + 1]) == cudaSuccess)
      byKernel[plan::launchName(l)] += ms;
  }
}

Status CudaProgram::trace(size_t index, const DeviceState &state,
                          const StepShape &shape, cudaStream_t stream) {
  const plan::Launch &l = program_.launches[index];
  const plan::Buffer &b = program_.buffers[l.outputs[0]];
  const void *src = data(l.outputs[0], state);
  const int64_t count = plan::numElements(b.shape, shape.tokens, shape.batch);
  std::vector<uint8_t> host(size_t(count) * plan::byteWidth(b.dtype));
  STRATA_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream),
                              (describeLaunch(program_, index)).c_str());
  if (src && !host.empty())
    STRATA_CUDA_RETURN_IF_ERROR(
        cudaMemcpy(host.data(), src, host.size(), cudaMemcpyDeviceToHost),
        "trace copy");
  traceLaunch("cuda", program_, index, src ? host.data() : nullptr, b.dtype,
              count);
  return Status::success();
}

Status CudaProgram::launch(size_t index, const DeviceState &state,
                           const StepShape &shape, cudaStream_t stream) {
  const plan::Launch &l = program_.launches[index];
  auto buf = [&](size_t i, bool output) -> const plan::Buffer & {
    return program_.buffers[output ? l.outputs[i] : l.inputs[i]];
  };
  auto in0 = [&](size_t i) { return data(l.inputs[i], state); };
  auto out0 = [&](size_t i) { return data(l.outputs[i], state); };
  const ActDType act = activationType(program_, l);
  auto elements = [&](const plan::Buffer &b) {
    return plan::numElements(b.shape, shape.tokens, shape.batch);
  };
  auto copy = [&](void *dst, const void *src, size_t bytes) -> Status {
    if (dst == src || bytes == 0)
      return Status::success();
    return kernels::cudaStatus(
        cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream),
        "device copy");
  };
  const int64_t T = shape.tokens, B = shape.batch;
  // Bytes of one activation element: every tensor a launch copies or
  // indexes by hand has the launch's activation type.
  const size_t width = size_t(kernels::actDTypeBytes(act));
  kernels::GemmRunner &gemm = *state.gemms[size_t(l.stream)];
  const plan::KvCacheDesc &kv = plan_.kvCache;
  const int64_t layer = layers_[index];
  auto pagedCache = [&](int64_t firstSeq) {
    return kernels::KvCacheView::paged(
        state.kPools[size_t(layer)], state.vPools[size_t(layer)],
        state.numBlocks, kv.blockSize,
        state.blockTables + firstSeq * state.blockStride, state.blockStride);
  };
  // Sequences are issued together when all have the same number of tokens
  // (always so for decode); a ragged batch is issued one sequence at a time.
  auto uniform = [&] {
    if (!shape.host)
      return true;
    const std::vector<int32_t> &cu = shape.host->cuQLens;
    for (size_t b = 1; b + 1 < cu.size(); ++b)
      if (cu[b + 1] - cu[b] != cu[1] - cu[0])
        return false;
    return true;
  };
  auto noCache = [&]() -> Status {
    return Status::error("layer " + std::to_string(layer) + " has no KV cache");
  };

  // Extend, decode and tree verify: queries (input 0) over the paged cache;
  // a tree's parent ids are input 3.
  enum class PagedAttention { Extend, Decode, Tree };
  auto pagedAttention = [&](double scale, int64_t slidingWindow,
                            PagedAttention kind) -> Status {
    if (size_t(layer) >= state.kPools.size())
      return noCache();
    const kernels::AttentionDims d =
        attentionDimsOf(kv, B, buf(0, false).shape[1].value, act, scale,
                        slidingWindow);
    kernels::AttentionTensors t = attentionTensors(state, pagedCache(0));
    t.q = in0(0);
    t.out = out0(0);
    const bool decode = kind == PagedAttention::Decode;
    const kernels::AttentionLaunch launch =
        attentionLaunch(state, shape, decode);
    if (B == 0)
      return Status::success();
    switch (kind) {
    case PagedAttention::Extend:
      return kernels::attentionExtend(d, t, launch, stream);
    case PagedAttention::Decode:
      return kernels::attentionDecode(d, t, launch, stream);
    case PagedAttention::Tree:
      t.parentIds = static_cast<const int32_t *>(in0(3));
      t.positions = state.positions;
      return kernels::attentionTree(d, t, launch, stream);
    }
    return Status::error("unknown paged attention kind");
  };

  using plan::Kernel;
  switch (l.kernel()) {
  case Kernel::Embedding: {
    const plan::Buffer &table = buf(1, false);
    return kernels::embedding(act, T, table.shape[0].value,
                              table.shape[1].value,
                              static_cast<const int32_t *>(in0(0)), in0(1),
                              out0(0), stream);
  }
  case Kernel::RmsNorm:
  case Kernel::HeadNorm: {
    const double eps = l.kernel() == Kernel::RmsNorm
                           ? l.as<plan::RmsNormParams>().eps
                           : l.as<plan::HeadNormParams>().eps;
    int64_t cols = lastDim(buf(0, false));
    return kernels::rmsNorm(act, elements(buf(0, false)) / cols, cols, in0(0),
                            in0(1), float(eps), out0(0), stream);
  }
  case Kernel::AddRmsNorm: {
    const auto &p = l.as<plan::AddRmsNormParams>();
    int64_t cols = lastDim(buf(0, false));
    return kernels::addRmsNorm(act, elements(buf(0, false)) / cols, cols,
                               in0(0), in0(1), in0(2), float(p.eps),
                               float(p.xScale), float(p.residualScale),
                               out0(0), out0(1), stream);
  }
  case Kernel::Linear: {
    const plan::Buffer &w = buf(1, false);
    kernels::GemmArgs a;
    a.dtype = act;
    a.m = T;
    a.n = w.shape[0].value;
    a.k = w.shape[1].value;
    a.x = in0(0);
    a.w = in0(1);
    a.bias = l.inputs.size() > 2 ? in0(2) : nullptr;
    a.y = out0(0);
    return gemm.linear(a, stream);
  }
  case Kernel::SplitHeads:
  case Kernel::MergeHeads:
    // Row-major [T, H*D] and [T, H, D] are the same bytes.
    return copy(out0(0), in0(0),
                size_t(elements(buf(0, false))) *
                    plan::byteWidth(buf(0, false).dtype));
  case Kernel::SiluMul:
    return kernels::siluMul(act, elements(buf(0, true)), in0(0), in0(1),
                            out0(0), stream);
  case Kernel::Silu:
    return kernels::silu(act, elements(buf(0, true)), in0(0), out0(0), stream);
  case Kernel::SigmoidMul:
    return kernels::sigmoidMul(act, elements(buf(0, true)), in0(0), in0(1),
                               out0(0), stream);
  case Kernel::Add: {
    const auto &p = l.as<plan::AddParams>();
    return kernels::add(act, elements(buf(0, true)), in0(0), in0(1),
                        float(p.lhsScale), float(p.rhsScale), out0(0), stream);
  }
  case Kernel::Swiglu:
    return kernels::siluMulFused(act, T, lastDim(buf(0, true)), in0(0),
                                 out0(0), stream);
  case Kernel::HeadSlice: {
    const auto &p = l.as<plan::HeadSliceParams>();
    const plan::Buffer &x = buf(0, false);
    const int64_t heads = x.shape[1].value, dim = x.shape[2].value;
    if (T == 0)
      return Status::success();
    return kernels::cudaStatus(
        cudaMemcpy2DAsync(out0(0), size_t(p.numHeads * dim) * width,
                          static_cast<const char *>(in0(0)) +
                              size_t(p.first * dim) * width,
                          size_t(heads * dim) * width,
                          size_t(p.numHeads * dim) * width, size_t(T),
                          cudaMemcpyDeviceToDevice, stream),
        "head slice copy");
  }

  case Kernel::RopeKvWrite: {
    const auto &p = l.as<plan::RopeKvWriteParams>();
    if (size_t(layer) >= state.kPools.size())
      return noCache();
    const int64_t hq = p.numQHeads, hkv = p.numKvHeads;
    const int64_t dim = kv.headDim, heads = hq + 2 * hkv;
    kernels::RopeTableSpec spec = ropeSpecOf(p.rotary);
    auto table = state.ropeTables.find(ropeTableKey(spec));
    if (table == state.ropeTables.end())
      return Status::error("no rotary table was prepared for this launch");
    kernels::RopeKvDims d;
    d.numQHeads = int32_t(hq);
    d.numKvHeads = int32_t(hkv);
    d.headDim = int32_t(dim);
    d.rotaryDim = spec.rotaryDim;
    d.pairing = ropePairingOf(p.rotary);
    d.dtype = act;
    kernels::CosSinCache cosSin{table->second.data, 1, table->second.rows};
    kernels::QkNormParams norm;
    norm.qWeight = l.inputs.size() > 4 ? in0(4) : nullptr;
    norm.kWeight = l.inputs.size() > 5 ? in0(5) : nullptr;
    norm.eps = float(p.qkNormEps);
    const bool packed = p.variant == plan::RopeKvVariant::Packed,
               tree = p.variant == plan::RopeKvVariant::Tree;
    const size_t rowBytes = size_t(heads * dim) * width;
    // Rotated in place in the output: a copy of the input first, unless
    // the plan made the output a view of it.
    if (packed && out0(0) != in0(0))
      if (Status s = copy(out0(0), in0(0), size_t(T) * rowBytes); !s.ok())
        return s;
    auto issueSeqs = [&](int64_t first, int64_t count, int64_t seq,
                         int64_t tokenOffset) -> Status {
      d.batch = count;
      d.seq = seq;
      auto *qkvOut = static_cast<char *>(out0(0)) + tokenOffset * rowBytes;
      const auto *qkvIn =
          static_cast<const char *>(in0(0)) + tokenOffset * rowBytes;
      kernels::KvCacheView cache = pagedCache(first);
      if (packed)
        return kernels::ropeKvWritePacked(d, qkvOut, cosSin, norm, cache,
                                          nullptr, stream);
      void *qOut = static_cast<char *>(out0(0)) +
                   tokenOffset * size_t(hq * dim) * width;
      if (tree)
        return kernels::ropeKvWriteTree(d, qkvIn, qOut,
                                        state.cachedLens + first,
                                        state.positions + tokenOffset, cosSin,
                                        norm, cache, nullptr, stream);
      return kernels::ropeKvWriteContinuous(d, qkvIn, qOut,
                                            state.cachedLens + first, cosSin,
                                            norm, cache, nullptr, stream);
    };
    if (B == 0 || T == 0)
      return Status::success();
    if (uniform())
      return issueSeqs(0, B, T / B, 0);
    const std::vector<int32_t> &cu = shape.host->cuQLens;
    for (int64_t b = 0; b < B; ++b)
      if (cu[b + 1] > cu[b])
        if (Status s = issueSeqs(b, 1, cu[b + 1] - cu[b], cu[b]); !s.ok())
          return s;
    return Status::success();
  }

  case Kernel::PrefillAttention: {
    const auto &p = l.as<plan::PrefillAttentionParams>();
    if (size_t(layer) >= state.kPools.size())
      return noCache();
    kernels::AttentionDims d = attentionDimsOf(plan_.kvCache, B, p.numQHeads,
                                               act, p.scale, p.slidingWindow);
    kernels::AttentionTensors t = attentionTensors(state, pagedCache(0));
    t.out = out0(0);
    t.q = in0(0);
    if (T > 0) {
      // Queries are the first hq heads of each packed QKV row; the kernel
      // takes them dense.
      const size_t qRow = size_t(p.numQHeads * kv.headDim) * width;
      if (size_t(T) * qRow > state.queryScratchBytes)
        return Status::error("query scratch too small");
      STRATA_CUDA_RETURN_IF_ERROR(
          cudaMemcpy2DAsync(state.queryScratch, qRow, in0(0),
                            size_t((p.numQHeads + 2 * p.numKvHeads) *
                                   kv.headDim) *
                                width,
                            qRow, size_t(T), cudaMemcpyDeviceToDevice, stream),
          "query gather");
      t.q = state.queryScratch;
    }
    // A prefill's tiles read only the prompt's own keys, as many tiles as
    // keys to read, and it is not split.
    kernels::AttentionLaunch launch = attentionLaunch(state, shape, false);
    launch.numSplits = 1;
    if (B == 0)
      return Status::success();
    return kernels::attentionPrefill(d, t, launch, stream);
  }
  case Kernel::ExtendAttention: {
    const auto &p = l.as<plan::ExtendAttentionParams>();
    return pagedAttention(p.scale, p.slidingWindow, PagedAttention::Extend);
  }
  case Kernel::PagedDecodeAttention: {
    const auto &p = l.as<plan::PagedDecodeAttentionParams>();
    return pagedAttention(p.scale, p.slidingWindow, PagedAttention::Decode);
  }
  case Kernel::TreeAttention: {
    const auto &p = l.as<plan::TreeAttentionParams>();
    return pagedAttention(p.scale, p.slidingWindow, PagedAttention::Tree);
  }

  case Kernel::LightningPrefill:
  case Kernel::LinearAttention:
  case Kernel::LightningDecode: {
    const plan::LinearStateDesc &ls = plan_.linearState;
    if (size_t(layer) >= state.states.size())
      return Status::error("layer " + std::to_string(layer) +
                           " has no linear state");
    auto decay = state.decay.find(layer);
    if (decay == state.decay.end())
      return Status::error("no decay rates were uploaded for this layer");
    kernels::LightningDims d;
    d.batch = B;
    d.numHeads = int32_t(ls.heads);
    d.headDim = int32_t(ls.keyDim);
    d.numSlots = state.numSlots;
    d.dtype = act;
    kernels::LightningTensors t;
    t.q = in0(0);
    t.k = in0(1);
    t.v = in0(2);
    t.out = out0(0);
    t.state = state.states[size_t(layer)];
    t.slots = state.stateSlots;
    t.decay = decay->second;
    t.cuSeqLens = state.cuQLens;
    if (B == 0)
      return Status::success();
    return l.kernel() == Kernel::LightningDecode
               ? kernels::lightningDecode(d, t, stream)
               : kernels::lightningPrefill(d, t, stream);
  }

  case Kernel::Logits: {
    const plan::Buffer &w = buf(1, false);
    const int64_t vocab = w.shape[0].value, hidden = w.shape[1].value;
    kernels::GemmArgs a;
    a.dtype = act;
    a.n = vocab;
    a.k = hidden;
    a.w = in0(1);
    a.y = out0(0);
    a.f32Out = true;
    a.x = in0(0);
    a.m = T;
    if (l.as<plan::LogitsParams>().allTokens || T == B)
      return T == 0 ? Status::success() : gemm.linear(a, stream);
    // One row per sequence: its last token. Only eager steps get here.
    if (!shape.host)
      return Status::error("ragged logits need the host step");
    const size_t row = size_t(hidden) * width;
    if (size_t(B) * row > state.rowScratchBytes)
      return Status::error("row scratch too small");
    for (int64_t b = 0; b < B; ++b) {
      int64_t t = shape.host->cuQLens[size_t(b) + 1] - 1;
      STRATA_CUDA_RETURN_IF_ERROR(
          cudaMemcpyAsync(static_cast<char *>(state.rowScratch) + b * row,
                          static_cast<const char *>(in0(0)) + t * row, row,
                          cudaMemcpyDeviceToDevice, stream),
          "last-row gather");
    }
    a.x = state.rowScratch;
    a.m = B;
    return gemm.linear(a, stream);
  }

  case Kernel::Rope: {
    const plan::Buffer &x = buf(0, false);
    kernels::RopeTableSpec spec =
        ropeSpecOf(l.as<plan::RopeParams>().rotary);
    auto table = state.ropeTables.find(ropeTableKey(spec));
    if (table == state.ropeTables.end())
      return Status::error("no rotary table was prepared for this launch");
    kernels::RopeRotateDims d;
    d.tokens = T;
    d.numHeads = int32_t(x.shape[1].value);
    d.headDim = int32_t(x.shape[2].value);
    d.rotaryDim = spec.rotaryDim;
    d.pairing = ropePairingOf(l.as<plan::RopeParams>().rotary);
    d.dtype = act;
    return kernels::ropeRotate(
        d, in0(0), out0(0), static_cast<const int32_t *>(in0(1)),
        kernels::CosSinCache{table->second.data, 1, table->second.rows},
        stream);
  }
  case Kernel::KvAppend: {
    if (size_t(layer) >= state.kPools.size())
      return noCache();
    kernels::KvAppendDims d;
    d.batch = B;
    d.tokens = T;
    d.numKvHeads = int32_t(kv.kvHeads);
    d.headDim = int32_t(kv.headDim);
    d.dtype = act;
    return kernels::kvAppend(d, in0(0), in0(1), state.cuQLens,
                             state.cachedLens, pagedCache(0), stream);
  }
  case Kernel::Attention: {
    // Any phase: the general cached-attention kernel (extend's), which
    // takes any number of new tokens after any cached prefix.
    const auto &p = l.as<plan::AttentionParams>();
    return pagedAttention(p.scale, p.slidingWindow, PagedAttention::Extend);
  }
  }
  return Status::error("has an unknown kernel code");
}

kernels::AttentionTensors
CudaProgram::attentionTensors(const DeviceState &state,
                              const kernels::KvCacheView &cache) {
  kernels::AttentionTensors t;
  t.cuQLens = state.cuQLens;
  t.kvLens = state.kvLens;
  t.cache = cache;
  return t;
}

kernels::AttentionLaunch CudaProgram::attentionLaunch(const DeviceState &state,
                                                      const StepShape &shape,
                                                      bool decode) {
  // Decode splits the keys across blocks, sized for the longest context
  // the backend reserved (so one captured graph serves every length, and
  // eager and graph steps compute alike). Extend and tree verify split as
  // their launch bounds ask: a few new tokens over a long cache make few
  // query tiles (100 tokens of 32 q / 8 kv heads: 32 blocks, each reading
  // the whole cache).
  kernels::AttentionLaunch launch;
  launch.maxQLen = decode ? 1 : std::max<int64_t>(shape.maxQLen, 1);
  // A captured graph replays as contexts grow: a launch issued during
  // capture (shape.host is null) is bounded by the longest context
  // reserved, as decode always is.
  launch.maxKvLen = decode || !shape.host
                        ? std::max<int64_t>(state.maxContext, 1)
                        : std::max<int64_t>(shape.maxKvLen, 1);
  launch.numSplits = 0;
  launch.workspace = state.attentionWorkspace;
  launch.workspaceBytes = state.attentionWorkspaceBytes;
  return launch;
}

} // namespace strata
