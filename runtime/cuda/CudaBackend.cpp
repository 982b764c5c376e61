#include "runtime/cuda/CudaBackendImpl.h"

#include "kernels/attention/Attention.h"
#include "kernels/common/CudaCheck.h"
#include "kernels/common/DependentLaunch.h"
#include "kernels/common/RopeCosSin.h"
#include "kernels/init/RandomInit.h"
#include "kernels/rope_kv/KvMove.h"
#include "kernels/sampling/Sampling.h"
#include "runtime/LaunchFacts.h"
#include "runtime/LaunchTrace.h"
#include "runtime/MemoryBudget.h"
#include "runtime/RandomWeights.h"
#include "runtime/Weights.h"
#include "runtime/cuda/CudaPlanCheck.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <type_traits>
#include <variant>

namespace strata {

using kernels::Status;

namespace {

template <typename P, typename = void>
struct HasDecaySlopes : std::false_type {};
template <typename P>
struct HasDecaySlopes<P, std::void_t<decltype(P::decaySlopes)>>
    : std::true_type {};

/// The per-head decay rates a linear-attention launch reads, or null: the
/// parameter structs with a decaySlopes field say which launches those are.
const std::vector<double> *decaySlopesOf(const plan::Launch &l) {
  return std::visit(
      [](const auto &p) -> const std::vector<double> * {
        if constexpr (HasDecaySlopes<std::decay_t<decltype(p)>>::value)
          return &p.decaySlopes;
        else
          return nullptr;
      },
      l.params);
}

/// The softmax attention launches that split their keys over the
/// workspace (a prefill only for a persistent grid's counters).
std::optional<kernels::AttentionKind> splitAttentionKind(plan::Kernel k) {
  switch (k) {
  case plan::Kernel::PagedDecodeAttention:
    return kernels::AttentionKind::Decode;
  case plan::Kernel::PrefillAttention:
    return kernels::AttentionKind::Prefill;
  case plan::Kernel::ExtendAttention:
  case plan::Kernel::Attention: // runs on the extend kernel
    return kernels::AttentionKind::Extend;
  case plan::Kernel::TreeAttention:
    return kernels::AttentionKind::Tree;
  default: // every other kernel uses no workspace
    return std::nullopt;
  }
}

} // namespace

CudaBackend::~CudaBackend() {
  cudaSetDevice(options_.device);
  for (cudaStream_t s : streams_)
    cudaStreamSynchronize(s);
  if (launchProfileEnabled()) {
    // Milliseconds per phase and kernel over every eager step, and each
    // kernel's share of its phase.
    for (const auto &[phase, kernels] : profile_) {
      double total = 0;
      for (const auto &[kernel, ms] : kernels)
        total += ms;
      std::fprintf(stderr, "profile %s: %.3f ms in %lld steps\n", phase.c_str(),
                   total, (long long)profileSteps_[phase]);
      for (const auto &[kernel, ms] : kernels)
        std::fprintf(stderr, "profile %s %-28s %9.3f ms %5.1f%%\n",
                     phase.c_str(), kernel.c_str(), ms,
                     total > 0 ? 100.0 * ms / total : 0.0);
    }
  }
  dropGraphs();
  programs_.clear();
  gemms_.clear();
  for (cudaStream_t s : streams_)
    cudaStreamDestroy(s);
}

bool CudaBackend::init(std::string &error) {
  auto failed = [&](const Status &s) {
    error = "cuda: " + s.message();
    return false;
  };
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    cudaGetLastError();
    error = "cuda: no CUDA device is available (strata-run --list-devices "
            "says why); use the CPU backend";
    return false;
  }
  if (options_.device < 0 || options_.device >= count) {
    error = "cuda: device " + std::to_string(options_.device) +
            " does not exist (" + std::to_string(count) + " found)";
    return false;
  }
  if (Status s = kernels::cudaStatus(cudaSetDevice(options_.device),
                                     "selecting the device");
      !s.ok())
    return failed(s);
  cudaDeviceProp prop{};
  if (Status s = kernels::cudaStatus(
          cudaGetDeviceProperties(&prop, options_.device), "device query");
      !s.ok())
    return failed(s);
  if (prop.major < 9) {
    error = "cuda: device " + std::to_string(options_.device) + " (" +
            prop.name + ", sm_" + std::to_string(prop.major) +
            std::to_string(prop.minor) +
            ") is older than the sm_90 (Hopper) the kernels are built for";
    return false;
  }
  // The attention and lightning kernels are built for these head sizes.
  const plan::KvCacheDesc &kv = plan_.kvCache;
  if (kv.layers > 0 && kv.headDim != 64 && kv.headDim != 128) {
    error = "cuda: the model's attention head dim is " +
            std::to_string(kv.headDim) +
            "; the CUDA attention kernels take 64 or 128";
    return false;
  }
  const plan::LinearStateDesc &ls = plan_.linearState;
  if (ls.layers > 0 && ls.keyDim != 64 && ls.keyDim != 128) {
    error = "cuda: the model's linear-attention head dim is " +
            std::to_string(ls.keyDim) +
            "; the CUDA lightning kernels take 64 or 128";
    return false;
  }
  int numStreams = 1;
  for (const plan::Program &p : plan_.programs) {
    if (p.phase == "forward") {
      error = "cuda: the plan holds the generic 'forward' program; the CUDA "
              "backend runs the fused phase programs (strata compile "
              "--emit=fused)";
      return false;
    }
    auto program = std::make_unique<CudaProgram>(plan_, p);
    if (std::string bad = program->unsupportedLaunch(); !bad.empty()) {
      error = "cuda: " + bad;
      return false;
    }
    numStreams = std::max(numStreams, p.numStreams);
    programs_[&p] = std::move(program);
  }
  streams_.assign(size_t(numStreams), nullptr);
  for (cudaStream_t &s : streams_)
    if (Status st = kernels::cudaStatus(
            cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking),
            "stream create");
        !st.ok())
      return failed(st);
  kernels::setDependentLaunchEnabled(options_.dependentLaunch);
  for (int s = 0; s < numStreams; ++s) {
    gemms_.push_back(std::make_unique<kernels::GemmRunner>());
    if (Status st = gemms_.back()->init(); !st.ok())
      return failed(st);
    gemms_.back()->setSmallMGemv(options_.decodeGemv);
  }
  state_.streams = streams_;
  for (auto &g : gemms_)
    state_.gemms.push_back(g.get());
  for (auto &[p, program] : programs_)
    if (Status s = program->init(streams_.size()); !s.ok())
      return failed(s);

  // The weights and the arena are the bulk of what init allocates; both
  // are counted against the device's free memory before either is asked
  // for, so that a model too large for the device says by how much.
  {
    uint64_t arenaBytes = 0;
    for (const plan::Program &p : plan_.programs)
      arenaBytes = std::max<uint64_t>(arenaBytes, p.arenaBytes);
    if (std::string shortfall = deviceShortfall(
            "model '" + plan_.modelName + "'",
            {{"weights", weightBytesRead(plan_)}, {"activations", arenaBytes}});
        !shortfall.empty()) {
      error = "cuda: " + shortfall;
      return false;
    }
  }

  std::string checkpointError;
  if (Status s = uploadWeights(checkpointError); !s.ok()) {
    if (checkpointError.empty())
      return failed(s);
    error = checkpointError;
    return false;
  }

  uint64_t arenaBytes = 0;
  for (const plan::Program &p : plan_.programs)
    arenaBytes = std::max<uint64_t>(arenaBytes, p.arenaBytes);
  if (Status s = arena_.allocate(arenaBytes, "the activation arena"); !s.ok())
    return failed(s);
  state_.arena = arena_.get();

  // Decay rates of every linear layer, from the launches that use them.
  std::map<int64_t, std::vector<float>> rates;
  for (const plan::Program &p : plan_.programs)
    for (const plan::Launch &l : p.launches) {
      const std::vector<double> *slopes = decaySlopesOf(l);
      if (slopes)
        rates[plan::launchLayer(l).value_or(-1)] =
            std::vector<float>(slopes->begin(), slopes->end());
    }
  size_t decayBytes = 0;
  for (auto &[layer, r] : rates)
    decayBytes += size_t(deviceAlign(r.size() * 4));
  if (Status s = decay_.allocate(decayBytes, "decay rates"); !s.ok())
    return failed(s);
  size_t at = 0;
  for (auto &[layer, r] : rates) {
    auto *dst = reinterpret_cast<float *>(decay_.as<char>() + at);
    if (Status s = kernels::cudaStatus(
            cudaMemcpy(dst, r.data(), r.size() * 4, cudaMemcpyHostToDevice),
            "decay upload");
        !s.ok())
      return failed(s);
    state_.decay[layer] = dst;
    at += size_t(deviceAlign(r.size() * 4));
  }

  // Scratch for the prefill query gather and the last-token rows, in the
  // widest activation type of the launches that use them.
  int64_t maxQHeads = 0, hidden = 0;
  size_t queryWidth = 0, rowWidth = 0;
  for (const plan::Program &p : plan_.programs)
    for (const plan::Launch &l : p.launches) {
      const size_t width = size_t(kernels::actDTypeBytes(activationType(p, l)));
      if (l.kernel() == plan::Kernel::PrefillAttention) {
        maxQHeads =
            std::max(maxQHeads, l.as<plan::PrefillAttentionParams>().numQHeads);
        queryWidth = std::max(queryWidth, width);
      }
      if (l.kernel() == plan::Kernel::Logits) {
        hidden = std::max(hidden, p.buffers[l.inputs[1]].shape[1].value);
        rowWidth = std::max(rowWidth, width);
      }
    }
  const plan::Limits &lim = plan_.limits;
  if (Status s = queryScratch_.allocate(
          size_t(lim.maxTokens * maxQHeads *
                 std::max<int64_t>(plan_.kvCache.headDim, 1)) *
              queryWidth,
          "the prefill query gather");
      !s.ok())
    return failed(s);
  state_.queryScratch = queryScratch_.get();
  state_.queryScratchBytes = queryScratch_.bytes();
  if (Status s = rowScratch_.allocate(size_t(lim.maxBatch * hidden) * rowWidth,
                                      "the last-token rows");
      !s.ok())
    return failed(s);
  state_.rowScratch = rowScratch_.get();
  state_.rowScratchBytes = rowScratch_.bytes();

  // Verify steps take the argmax of every token's row (stepArgmax), at
  // most the 65535 rows argmaxRows takes.
  argmaxRowsReserved_ =
      std::min<int64_t>(std::max(lim.maxBatch, lim.maxTokens), 65535);
  const size_t argmaxBytes =
      kernels::argmaxWorkspaceBytes(argmaxRowsReserved_, plan_.vocabSize);
  if (Status s = argmaxWorkspace_.allocate(argmaxBytes, "argmax workspace");
      !s.ok())
    return failed(s);
  if (Status s = kernels::cudaStatus(
          cudaMemset(argmaxWorkspace_.get(), 0, argmaxWorkspace_.bytes()),
          "argmax workspace clear");
      !s.ok())
    return failed(s);
  if (Status s = outIds_.allocate(size_t(argmaxRowsReserved_) * 4,
                                  "sampled ids");
      !s.ok())
    return failed(s);
  if (Status s = outIdsHost_.allocate(size_t(argmaxRowsReserved_) * 4,
                                      "sampled ids");
      !s.ok())
    return failed(s);
  if (Status s = kernels::cudaStatus(cudaDeviceSynchronize(), "initialisation");
      !s.ok())
    return failed(s);
  return true;
}

Status CudaBackend::uploadWeights(std::string &checkpointError) {
  // Only weights some launch reads take device memory: a fused plan also
  // lists the unpacked sources of its packed QKV and gate/up weights.
  const std::vector<bool> used = plan::weightsRead(plan_);
  std::vector<uint64_t> offsets;
  uint64_t total = 0;
  for (size_t i = 0; i < plan_.weights.size(); ++i) {
    const plan::Weight &w = plan_.weights[i];
    offsets.push_back(total);
    if (used[i])
      total += deviceAlign(uint64_t(plan::numElements(w.shape)) *
                           plan::byteWidth(w.dtype));
  }
  if (Status s = weights_.allocate(total, "the weights"); !s.ok())
    return s;
  std::vector<char *> dsts(plan_.weights.size(), nullptr);
  for (size_t i = 0; i < plan_.weights.size(); ++i) {
    if (used[i])
      dsts[i] = weights_.as<char>() + offsets[i];
    state_.weights.push_back(dsts[i]);
  }
  if (!options_.weightsPath.empty()) {
    // The same subset the device holds (ReadByLaunches is plan::weightsRead).
    if (!WeightStore::streamSafetensors(
            plan_, options_.weightsPath, checkpointError,
            WeightSubset::ReadByLaunches,
            [&](int32_t index, std::vector<uint8_t> &bytes, std::string &why) {
              Status st = kernels::cudaStatus(
                  cudaMemcpy(dsts[size_t(index)], bytes.data(), bytes.size(),
                             cudaMemcpyHostToDevice),
                  ("uploading weight " + plan_.weights[size_t(index)].name)
                      .c_str());
              why = "cuda: " + st.message();
              return st.ok();
            }))
      return Status::error(checkpointError);
    return Status::success();
  }
  cudaStream_t stream = streams_[0];
  for (size_t i = 0; i < plan_.weights.size(); ++i) {
    const plan::Weight &w = plan_.weights[i];
    char *dst = dsts[i];
    if (!used[i])
      continue;
    const uint64_t width = plan::byteWidth(w.dtype);
    if (w.dtype == plan::DType::I32)
      return Status::error("weight '" + w.name +
                           "' is int32; random weights are floating point");
    // Random: each source tensor drawn by its own name, as on the host.
    std::vector<std::string> names = w.packedFrom;
    std::vector<int64_t> rows = w.packedRows;
    if (names.empty()) {
      names = {w.name};
      rows = {w.shape.empty() ? 1 : w.shape[0]};
    }
    const int64_t rowElems =
        w.shape.empty()
            ? 1
            : plan::numElements(w.shape) / std::max<int64_t>(w.shape[0], 1);
    char *at = dst;
    for (size_t s = 0; s < names.size(); ++s) {
      const int64_t count = rows[s] * rowElems;
      const auto dtype = static_cast<kernels::InitDType>(w.dtype);
      Status st;
      switch (randomInitOf(names[s])) {
      case RandomInit::One:
        st = kernels::constantFill(dtype, count, 1.0f, at, stream);
        break;
      case RandomInit::Zero:
        st = kernels::constantFill(dtype, count, 0.0f, at, stream);
        break;
      case RandomInit::Normal:
        st = kernels::randomNormalFill(dtype, count, plan_.weightSeed,
                                       weightNameHash(names[s]),
                                       plan_.weightInitStd, at, stream);
        break;
      }
      if (!st.ok())
        return Status::error("drawing weight " + names[s] + ": " +
                             st.message());
      at += count * width;
    }
  }
  STRATA_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream),
                              "drawing the weights");
  return Status::success();
}

Status CudaBackend::prepareRopeTables(int64_t rows) {
  for (const plan::Program &p : plan_.programs)
    for (const plan::Launch &l : p.launches) {
      if (l.kernel() != plan::Kernel::RopeKvWrite &&
          l.kernel() != plan::Kernel::Rope)
        continue;
      kernels::RopeTableSpec spec =
          ropeSpecOf(l.kernel() == plan::Kernel::Rope
                         ? l.as<plan::RopeParams>().rotary
                         : l.as<plan::RopeKvWriteParams>().rotary);
      const std::string key = ropeTableKey(spec);
      DeviceRopeTable &table = state_.ropeTables[key];
      if (table.rows >= rows)
        continue;
      spec.maxPos = rows;
      std::vector<float> host;
      if (Status s = kernels::buildRopeCosSin(spec, host); !s.ok())
        return s;
      DeviceBuffer &buffer = ropeTables_[key];
      if (Status s = buffer.allocate(host.size() * 4, "a rotary table");
          !s.ok())
        return s;
      STRATA_CUDA_RETURN_IF_ERROR(cudaMemcpy(buffer.get(), host.data(),
                                             host.size() * 4,
                                             cudaMemcpyHostToDevice),
                                  "rotary table upload");
      table.data = buffer.as<float>();
      table.rows = rows;
    }
  return Status::success();
}

Status CudaBackend::prepareAttentionWorkspace() {
  // Decode, extend and tree verify split their keys (CudaProgram), and long
  // prefills and extends run persistent; the launcher's bound covers every
  // batch, context and query count (one wave of partials, about 9 MB at
  // head dim 128), so the size never changes.
  size_t bytes = 0;
  for (const plan::Program &p : plan_.programs)
    for (const plan::Launch &l : p.launches) {
      const std::optional<kernels::AttentionKind> kind =
          splitAttentionKind(l.kernel());
      if (!kind)
        continue;
      kernels::AttentionDims d;
      d.numQHeads = int32_t(p.buffers[l.inputs[0]].shape[1].value);
      d.numKvHeads = int32_t(plan_.kvCache.kvHeads);
      d.headDim = int32_t(plan_.kvCache.headDim);
      bytes = std::max(bytes, kernels::attentionWorkspaceBound(*kind, d));
    }
  if (bytes <= workspace_.bytes() && workspace_.get())
    return Status::success();
  if (Status s = workspace_.allocate(bytes, "the split-KV workspace"); !s.ok())
    return s;
  STRATA_CUDA_RETURN_IF_ERROR(
      cudaMemset(workspace_.get(), 0, workspace_.bytes()),
      "split-KV workspace clear");
  state_.attentionWorkspace = workspace_.get();
  state_.attentionWorkspaceBytes = workspace_.bytes();
  return Status::success();
}

bool CudaBackend::resetState(int32_t slot, std::string &error) {
  const plan::LinearStateDesc &ls = plan_.linearState;
  if (ls.layers == 0)
    return true;
  if (slot < 0 || slot >= slotsReserved_) {
    error = "cuda: state slot " + std::to_string(slot) + " is outside the " +
            std::to_string(slotsReserved_) + " reserved";
    return false;
  }
  cudaSetDevice(options_.device);
  const size_t perSlot = size_t(ls.heads * ls.keyDim * ls.valueDim) * 4;
  const size_t slotBytes = perSlot * size_t(slotsReserved_);
  for (int64_t l = 0; l < ls.layers; ++l)
    if (Status s = kernels::cudaStatus(
            cudaMemsetAsync(states_.as<char>() + size_t(l) * slotBytes +
                                size_t(slot) * perSlot,
                            0, perSlot, streams_[0]),
            "state slot clear");
        !s.ok()) {
      error = "cuda: " + s.message();
      return false;
    }
  return true;
}

bool CudaBackend::moveKvSlots(const std::vector<int64_t> &moves,
                              std::string &error) {
  const plan::KvCacheDesc &kv = plan_.kvCache;
  if (moves.empty() || kv.layers == 0)
    return true;
  const kernels::KvMoveDims d =
      kvMoveDimsOf(plan_, blocksReserved_, int64_t(moves.size() / 2));
  if (kernels::Status s = kernels::validateKvMove(d, moves.data()); !s.ok()) {
    error = "cuda: " + s.message();
    return false;
  }
  cudaSetDevice(options_.device);
  const size_t bytes = moves.size() * sizeof(int64_t);
  if (kvMoves_.bytes() < bytes)
    if (kernels::Status s = kvMoves_.allocate(bytes, "the KV move list");
        !s.ok()) {
      error = "cuda: " + s.message();
      return false;
    }
  // The list is pageable: the copy returns once it is staged, so the
  // vector may go right after.
  const int64_t pool = d.numBlocks * d.numKvHeads * d.blockSize * d.headDim *
                       d.elementBytes;
  kernels::Status s = kernels::cudaStatus(
      cudaMemcpyAsync(kvMoves_.as<int64_t>(), moves.data(), bytes,
                      cudaMemcpyHostToDevice, streams_[0]),
      "KV move list upload");
  if (s.ok())
    s = kernels::kvMove(d, kv_.as<char>(), pool, kvMoves_.as<int64_t>(),
                        streams_[0]);
  if (!s.ok()) {
    error = "cuda: " + s.message();
    return false;
  }
  return true;
}

bool CudaBackend::reserve(int64_t numBlocks, int64_t numSlots,
                          int64_t maxContext, std::string &error) {
  auto failed = [&](const Status &s) {
    error = "cuda: " + s.message();
    return false;
  };
  cudaSetDevice(options_.device);
  const plan::KvCacheDesc &kv = plan_.kvCache;
  const plan::LinearStateDesc &ls = plan_.linearState;
  // Contexts grow in powers of two so that a longer request rarely
  // forces new tables and graphs.
  const int64_t context = std::max<int64_t>(256, nextPow2(maxContext));
  const bool grow = context > state_.maxContext ||
                    numBlocks > blocksReserved_ || numSlots > slotsReserved_;
  if (grow) {
    if (Status s = kernels::cudaStatus(cudaDeviceSynchronize(), "reserve");
        !s.ok())
      return failed(s);
    dropGraphs();
    // The new cache and states replace the old ones, whose memory is freed
    // first; both are counted before anything is released.
    {
      const int64_t blocks = std::max(numBlocks, blocksReserved_);
      const int64_t slots = std::max(numSlots, slotsReserved_);
      if (std::string shortfall = deviceShortfall(
              "the KV cache of " + std::to_string(blocks) + " blocks",
              cacheNeeds(plan_, blocks, slots), kv_.bytes() + states_.bytes());
          !shortfall.empty()) {
        error = "cuda: " + shortfall;
        return false;
      }
    }
    state_.maxContext = std::max(context, state_.maxContext);
    blocksReserved_ = std::max(numBlocks, blocksReserved_);
    slotsReserved_ = std::max(numSlots, slotsReserved_);
    const size_t pool =
        size_t(blocksReserved_ * kv.kvHeads * kv.blockSize * kv.headDim) *
        plan::byteWidth(kv.dtype);
    state_.kPools.clear();
    state_.vPools.clear();
    if (kv.layers > 0) {
      if (Status s = kv_.allocate(2 * pool * size_t(kv.layers), "the KV cache");
          !s.ok())
        return failed(s);
      for (int64_t l = 0; l < kv.layers; ++l) {
        state_.kPools.push_back(kv_.as<char>() + 2 * l * pool);
        state_.vPools.push_back(kv_.as<char>() + (2 * l + 1) * pool);
      }
    }
    state_.numBlocks = blocksReserved_;
    state_.states.clear();
    const size_t slotBytes =
        size_t(slotsReserved_ * ls.heads * ls.keyDim * ls.valueDim) * 4;
    if (ls.layers > 0) {
      if (Status s = states_.allocate(slotBytes * size_t(ls.layers),
                                      "the linear-attention states");
          !s.ok())
        return failed(s);
      for (int64_t l = 0; l < ls.layers; ++l)
        state_.states.push_back(
            reinterpret_cast<float *>(states_.as<char>() + l * slotBytes));
    }
    state_.numSlots = slotsReserved_;
    state_.blockStride =
        (state_.maxContext + std::max<int64_t>(kv.blockSize, 1) - 1) /
        std::max<int64_t>(kv.blockSize, 1);
    layout_ = InputLayout::of(plan_.limits.maxTokens, plan_.limits.maxBatch,
                              state_.blockStride);
    if (Status s = inputs_.allocate(layout_.bytes, "the step inputs"); !s.ok())
      return failed(s);
    if (Status s = staging_.allocate(layout_.bytes, "the step inputs"); !s.ok())
      return failed(s);
    std::memset(staging_.get(), 0, staging_.bytes());
    char *base = inputs_.as<char>();
    state_.tokenIds = reinterpret_cast<int32_t *>(base + layout_.tokenIds);
    state_.positions = reinterpret_cast<int32_t *>(base + layout_.positions);
    state_.parentIds = reinterpret_cast<int32_t *>(base + layout_.parentIds);
    state_.cuQLens = reinterpret_cast<int32_t *>(base + layout_.cuQLens);
    state_.kvLens = reinterpret_cast<int32_t *>(base + layout_.kvLens);
    state_.cachedLens = reinterpret_cast<int32_t *>(base + layout_.cachedLens);
    state_.stateSlots = reinterpret_cast<int32_t *>(base + layout_.stateSlots);
    state_.blockTables =
        reinterpret_cast<int32_t *>(base + layout_.blockTables);
    if (Status s = prepareRopeTables(state_.maxContext); !s.ok())
      return failed(s);
    if (Status s = prepareAttentionWorkspace(); !s.ok())
      return failed(s);
  }
  // Every generation starts its sequences from zero states.
  if (states_.get())
    if (Status s = kernels::cudaStatus(
            cudaMemset(states_.get(), 0, states_.bytes()), "state clear");
        !s.ok())
      return failed(s);
  return true;
}

uint64_t CudaBackend::freeCacheMemory() const {
  size_t freeBytes = 0, totalBytes = 0;
  if (cudaMemGetInfo(&freeBytes, &totalBytes) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return freeBytes;
}

std::string CudaBackend::deviceShortfall(const std::string &what,
                                         const std::vector<MemoryNeed> &needs,
                                         uint64_t releasedFirst) const {
  size_t freeBytes = 0, totalBytes = 0;
  if (cudaMemGetInfo(&freeBytes, &totalBytes) != cudaSuccess) {
    cudaGetLastError();
    return ""; // the allocations themselves will say what failed
  }
  return memoryShortfall(what, needs,
                         saturatingAdd(uint64_t(freeBytes), releasedFirst),
                         "device memory");
}

std::unique_ptr<Backend> createCudaBackend(const plan::Plan &plan,
                                           const CudaBackendOptions &options,
                                           std::string &error) {
  // Before the backend exists, which touches the device even when it is
  // destroyed: the message then reads the same on a machine without a GPU.
  if (std::string refusal = cudaDTypeRefusal(plan); !refusal.empty()) {
    error = "cuda: " + refusal;
    return nullptr;
  }
  auto backend = std::make_unique<CudaBackend>(plan, options);
  if (!backend->init(error))
    return nullptr;
  return backend;
}

} // namespace strata
