// The class behind createCudaBackend (runtime/cuda/CudaBackend.h), private to
// the files that implement it:
//
//  - CudaBackend.cpp: creation and teardown, the weights, and the device
//    memory that init() and reserve() size (arena, KV pools, linear states,
//    step inputs, rotary tables, attention workspace).
//  - CudaBackendStep.cpp: one step (input staging and upload, issue of the
//    program, eagerly or by decode or verify graph, token picking and
//    download).
#ifndef STRATA_RUNTIME_CUDA_CUDABACKENDIMPL_H
#define STRATA_RUNTIME_CUDA_CUDABACKENDIMPL_H

#include "kernels/common/Status.h"
#include "kernels/gemm/Gemm.h"
#include "kernels/sampling/Sampling.h"
#include "runtime/MemoryBudget.h"
#include "runtime/cuda/CudaBackend.h"
#include "runtime/cuda/CudaProgram.h"
#include "runtime/cuda/DeviceMemory.h"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace strata {

class CudaBackend final : public Backend {
public:
  CudaBackend(const plan::Plan &plan, const CudaBackendOptions &options)
      : plan_(plan), options_(options) {}
  ~CudaBackend() override;

  const char *name() const override { return "cuda"; }

  bool init(std::string &error);
  bool reserve(int64_t numBlocks, int64_t numSlots, int64_t maxContext,
               std::string &error) override;
  bool stepLogits(const plan::Program &program, const StepInputs &in,
                  std::vector<float> &logits, std::string &error) override;
  bool stepArgmax(const plan::Program &program, const StepInputs &in,
                  std::vector<int32_t> &ids, std::string &error) override;
  bool resetState(int32_t slot, std::string &error) override;
  bool moveKvSlots(const std::vector<int64_t> &moves,
                   std::string &error) override;
  uint64_t freeCacheMemory() const override;
  BackendCounters counters() const override { return counters_; }
  bool step(const plan::Program &program, const StepInputs &in,
            const std::vector<StepSample> &samples,
            std::vector<int32_t> &tokens, std::vector<float> *logits,
            std::string &error) override;

private:
  /// Byte offsets of the step inputs inside one device buffer (and its pinned
  /// host mirror), fixed once the limits and the block-table stride are known
  /// so that captured graphs keep reading the same addresses. Block tables
  /// come last: a step copies only the rows it uses.
  struct InputLayout {
    size_t tokenIds = 0, positions = 0, parentIds = 0, cuQLens = 0, kvLens = 0,
           cachedLens = 0, stateSlots = 0, sampleParams = 0, blockTables = 0,
           bytes = 0;
    static InputLayout of(int64_t maxTokens, int64_t maxBatch,
                          int64_t blockStride) {
      InputLayout l;
      size_t at = 0;
      auto place = [&](size_t &field, size_t bytes) {
        field = at;
        at = size_t(deviceAlign(at + bytes));
      };
      place(l.tokenIds, size_t(maxTokens) * 4);
      place(l.positions, size_t(maxTokens) * 4);
      place(l.parentIds, size_t(maxTokens) * 4);
      place(l.cuQLens, size_t(maxBatch + 1) * 4);
      place(l.kvLens, size_t(maxBatch) * 4);
      place(l.cachedLens, size_t(maxBatch) * 4);
      place(l.stateSlots, size_t(maxBatch) * 4);
      place(l.sampleParams,
            size_t(maxBatch) * sizeof(kernels::SampleRowParams));
      place(l.blockTables, size_t(maxBatch * blockStride) * 4);
      l.bytes = at;
      return l;
    }
  };

  /// A captured graph: decode steps by batch bucket (perSeq 0), verify
  /// steps by batch bucket and tokens per sequence.
  struct GraphKey {
    const plan::Program *program = nullptr;
    int64_t batch = 0;
    int64_t perSeq = 0;
    bool operator<(const GraphKey &o) const {
      return std::tie(program, batch, perSeq) <
             std::tie(o.program, o.batch, o.perSeq);
    }
  };
  /// A step issued on stream 0 and not yet waited for.
  struct IssuedStep {
    CudaProgram *exec = nullptr;
    /// Rows of the output the program wrote: the padded step's tokens.
    int64_t rows = 0;
    /// A padded verify step: the row of each of the step's own tokens
    /// (empty: rows are the step's own).
    std::vector<int64_t> rowOf;
    bool graphed = false;
  };

  static int64_t nextPow2(int64_t v) {
    int64_t p = 1;
    while (p < v)
      p *= 2;
    return p;
  }

  /// Streams options_.weightsPath, or draws random weights on the device.
  /// A checkpoint that does not fit the plan fails with `checkpointError`
  /// set to the loader's message, which names the file; other failures are
  /// CUDA's.
  kernels::Status uploadWeights(std::string &checkpointError);
  /// Empty when `needs` fit in the device's free memory plus
  /// `releasedFirst` bytes this backend frees before allocating them; else
  /// what would be needed and what there is.
  std::string deviceShortfall(const std::string &what,
                              const std::vector<MemoryNeed> &needs,
                              uint64_t releasedFirst = 0) const;
  kernels::Status prepareRopeTables(int64_t rows);
  kernels::Status prepareAttentionWorkspace();
  kernels::Status stage(const StepInputs &in,
                        const std::vector<StepSample> &samples, size_t &bytes);
  /// Validates, pads (graph buckets), stages, uploads and issues a step.
  bool launchStep(const plan::Program &program, const StepInputs &in,
                  const std::vector<StepSample> &samples, IssuedStep &issued,
                  std::string &error);
  /// Waits for the step's stream; collects the profile of an eager step.
  kernels::Status finishStep(const plan::Program &program, bool graphed);
  /// Issues `program` eagerly (`key` null) or by its graph: the key's
  /// first step eagerly, its second captured, the rest replayed.
  kernels::Status runProgram(CudaProgram &program, const GraphKey *key,
                             const StepShape &shape);
  /// Tokens per sequence a verify step of `tokens` is padded to.
  static int64_t verifyBucket(int64_t tokens);
  kernels::Status growLogitsHost(size_t bytes);
  void dropGraphs();
  CudaProgram *programOf(const plan::Program &program, std::string &error);

  const plan::Plan &plan_;
  CudaBackendOptions options_;
  DeviceState state_;
  std::vector<cudaStream_t> streams_;
  std::vector<std::unique_ptr<kernels::GemmRunner>> gemms_;
  std::map<const plan::Program *, std::unique_ptr<CudaProgram>> programs_;
  std::map<const plan::Program *, DeviceBuffer> outputs_;
  DeviceBuffer weights_, arena_, inputs_, kv_, states_, decay_, workspace_,
      queryScratch_, rowScratch_, argmaxWorkspace_, outIds_, kvMoves_;
  std::map<std::string, DeviceBuffer> ropeTables_;
  PinnedBuffer staging_, outIdsHost_, logitsHost_;
  InputLayout layout_;
  int64_t blocksReserved_ = 0, slotsReserved_ = 0;
  /// Captured graphs; a key is captured on its second step, after one
  /// eager step has planned its GEMMs.
  std::map<GraphKey, cudaGraphExec_t> graphs_;
  std::set<GraphKey> seenEager_;
  /// Rows argmaxRows' workspace and the id buffers hold: a verify step's
  /// every token.
  int64_t argmaxRowsReserved_ = 0;
  BackendCounters counters_;
  /// STRATA_PROFILE: milliseconds by phase and kernel, and steps by phase.
  std::map<std::string, std::map<std::string, double>> profile_;
  std::map<std::string, int64_t> profileSteps_;
};

} // namespace strata

#endif // STRATA_RUNTIME_CUDA_CUDABACKENDIMPL_H
