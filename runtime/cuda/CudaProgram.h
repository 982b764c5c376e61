// One program of a plan on the GPU: the launch-by-launch dispatch of the
// CUDA backend (runtime/cuda/CudaBackend.h) onto the kernels of kernels/.
//
// A program only issues work; the backend owns every device allocation and
// describes it in a DeviceState, and says for each step which sizes the
// launches are issued for (StepShape). The same issue sequence serves eager
// steps and CUDA graph capture: nothing here synchronises, allocates or
// reads device memory on the host.
#ifndef STRATA_RUNTIME_CUDA_CUDAPROGRAM_H
#define STRATA_RUNTIME_CUDA_CUDAPROGRAM_H

#include "kernels/attention/Attention.h"
#include "kernels/common/RopeKvTypes.h"
#include "kernels/common/Status.h"
#include "kernels/gemm/Gemm.h"
#include "runtime/StepInputs.h"
#include "runtime/plan/Plan.h"

#include <cuda_runtime_api.h>

#include <map>
#include <string>
#include <vector>

namespace strata {

/// A rotary cos/sin table on the device, [rows, rotaryDim] fp32.
struct DeviceRopeTable {
  const float *data = nullptr;
  int64_t rows = 0;
};

/// Device storage a program reads and writes, owned by the backend.
struct DeviceState {
  /// Indexed like plan::Plan::weights.
  std::vector<const void *> weights;
  void *arena = nullptr;
  /// Step inputs, rewritten before every step. Block tables are
  /// [batch, blockStride] (rows padded with -1); cachedLens[b] = kvLens[b]
  /// minus the sequence's tokens of the step.
  const int32_t *tokenIds = nullptr, *positions = nullptr,
                *cuQLens = nullptr, *kvLens = nullptr, *cachedLens = nullptr,
                *blockTables = nullptr, *stateSlots = nullptr,
                *parentIds = nullptr;
  int64_t blockStride = 0;
  /// Per softmax layer: K and V pools [numBlocks, kvHeads, blockSize,
  /// headDim]; per linear layer: fp32 states [numSlots, heads, dk, dv].
  std::vector<void *> kPools, vPools;
  std::vector<float *> states;
  int64_t numBlocks = 0, numSlots = 0;
  /// Longest context the backend is reserved for (split-KV bound).
  int64_t maxContext = 0;
  /// By ropeTableKey.
  std::map<std::string, DeviceRopeTable> ropeTables;
  /// By linear layer: fp32 [heads] decay rates.
  std::map<int64_t, const float *> decay;
  /// Split-KV workspace (zeroed once; every launch leaves it zeroed).
  void *attentionWorkspace = nullptr;
  size_t attentionWorkspaceBytes = 0;
  /// Scratch: prefill queries gathered out of the packed QKV
  /// [maxTokens, q heads, headDim], and last-token rows for the logits
  /// [maxBatch, hidden].
  void *queryScratch = nullptr;
  size_t queryScratchBytes = 0;
  void *rowScratch = nullptr;
  size_t rowScratchBytes = 0;
  std::vector<cudaStream_t> streams;
  /// One per stream (a GemmRunner's workspace serves one stream).
  std::vector<kernels::GemmRunner *> gemms;
};

/// The sizes one issue of the program is for. In a captured decode graph
/// tokens == batch == the bucket; eager steps use the step's own sizes.
struct StepShape {
  int64_t tokens = 0;
  int64_t batch = 0;
  /// Bounds of the sequences' query and KV lengths.
  int64_t maxQLen = 0;
  int64_t maxKvLen = 0;
  /// The host copy of the step: per-sequence issue (ragged prefill or
  /// extend batches) reads lengths from it. Null during graph capture, where
  /// every sequence has exactly one token.
  const StepInputs *host = nullptr;
};

class CudaProgram {
public:
  CudaProgram(const plan::Plan &plan, const plan::Program &program);
  ~CudaProgram();
  CudaProgram(const CudaProgram &) = delete;
  CudaProgram &operator=(const CudaProgram &) = delete;

  /// A launch of this program the CUDA backend cannot run (empty when it
  /// can run all), e.g. "prefill #5 attention<softmax>: the CUDA backend
  /// runs causal softmax attention only".
  std::string unsupportedLaunch() const;

  /// Creates the program's events; once, before the first issue.
  kernels::Status init(size_t numStreams);

  /// Issues every launch on the state's streams with the plan's events.
  /// Stream 0 must already be ordered after the upload of the step inputs;
  /// the other streams wait for stream 0 first and stream 0 waits for them
  /// at the end, so the program is one fork/join (capturable).
  kernels::Status issue(const DeviceState &state, const StepShape &shape);

  /// The fp32 output (logits) and its rows for a step of `shape`.
  const float *logits() const { return logits_; }

  /// Device bytes of the program's output buffers at the plan's limits.
  uint64_t outputBytes() const;
  /// Binds output buffer storage (from the backend); `base` holds
  /// outputBytes() bytes.
  void bindOutputs(void *base);

  const plan::Program &program() const { return program_; }

  /// STRATA_PROFILE=1: eager issues bracket every launch with CUDA events;
  /// collectProfile() synchronises and adds each launch's milliseconds to
  /// `byKernel` (keyed by kernel<variant>). Times include whatever the GPU
  /// waited for the host between launches, so they bound the kernels'
  /// own time from above.
  void collectProfile(std::map<std::string, double> &byKernel);

private:
  kernels::Status launch(size_t index, const DeviceState &state,
                         const StepShape &shape, cudaStream_t stream);
  void *data(int32_t buffer, const DeviceState &state) const;
  /// The attention launchers' arguments shared by the four kernels.
  static kernels::AttentionTensors
  attentionTensors(const DeviceState &state,
                   const kernels::KvCacheView &cache);
  static kernels::AttentionLaunch attentionLaunch(const DeviceState &state,
                                                  const StepShape &shape,
                                                  bool decode);
  /// Bytes an output buffer takes at the plan's limits, aligned.
  uint64_t outputSlotBytes(const plan::Buffer &b) const;
  /// STRATA_TRACE (runtime/LaunchTrace.h): synchronises and prints.
  kernels::Status trace(size_t index, const DeviceState &state,
                        const StepShape &shape, cudaStream_t stream);

  const plan::Plan &plan_;
  const plan::Program &program_;
  std::vector<cudaEvent_t> events_;
  /// Fork/join events: stream 0 -> others at the start, others -> 0 at the
  /// end.
  cudaEvent_t fork_ = nullptr;
  std::vector<cudaEvent_t> joins_;
  std::map<int32_t, void *> outputs_;
  /// By launch: the KV-cache layer it addresses. Prefill attention has no
  /// layer of its own (the CPU reads K and V from the packed QKV); on the
  /// GPU it reads the cache that the rope_kv_write producing its input
  /// filled.
  std::vector<int64_t> layers_;
  /// Profile events (two per launch) of the last eager issue.
  std::vector<cudaEvent_t> profileEvents_;
  bool profiled_ = false;
  const float *logits_ = nullptr;
};

} // namespace strata

#endif // STRATA_RUNTIME_CUDA_CUDAPROGRAM_H
