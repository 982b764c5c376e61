#include "runtime/cuda/CudaBackendImpl.h"

#include "kernels/common/CudaCheck.h"
#include "kernels/sampling/Sampling.h"
#include "runtime/LaunchTrace.h"

#include <algorithm>
#include <cstring>

namespace strata {

using kernels::Status;

CudaProgram *CudaBackend::programOf(const plan::Program &program,
                                    std::string &error) {
  auto it = programs_.find(&program);
  if (it == programs_.end()) {
    error = "cuda: the program '" + program.phase +
            "' does not belong to this backend's plan";
    return nullptr;
  }
  DeviceBuffer &out = outputs_[&program];
  if (!out.get()) {
    // Outputs are allocated on a program's first step: a verify program's
    // every-token logits can be large and most runs never verify.
    if (Status s =
            out.allocate(it->second->outputBytes(), program.phase + " outputs");
        !s.ok()) {
      error = "cuda: " + s.message();
      return nullptr;
    }
    it->second->bindOutputs(out.get());
  }
  return it->second.get();
}

Status CudaBackend::stage(const StepInputs &in,
                          const std::vector<StepSample> &samples,
                          size_t &bytes) {
  const int64_t B = in.batch();
  char *base = staging_.as<char>();
  auto put = [&](size_t offset, const std::vector<int32_t> &v) {
    if (!v.empty())
      std::memcpy(base + offset, v.data(), v.size() * 4);
  };
  put(layout_.tokenIds, in.tokenIds);
  put(layout_.positions, in.positions);
  if (!in.parentIds.empty())
    put(layout_.parentIds, in.parentIds);
  put(layout_.cuQLens, in.cuQLens);
  put(layout_.kvLens, in.kvLens);
  put(layout_.stateSlots, in.stateSlots);
  auto *cached = reinterpret_cast<int32_t *>(base + layout_.cachedLens);
  for (int64_t b = 0; b < B; ++b)
    cached[b] = in.kvLens[size_t(b)] -
                (in.cuQLens[size_t(b) + 1] - in.cuQLens[size_t(b)]);
  auto *tables = reinterpret_cast<int32_t *>(base + layout_.blockTables);
  const int64_t stride = state_.blockStride;
  if (plan_.kvCache.layers > 0) {
    if (in.maxBlocksPerSeq > stride)
      return Status::error(
          "a sequence holds " + std::to_string(in.maxBlocksPerSeq) +
          " KV blocks, more than the " + std::to_string(stride) +
          " reserved for its context");
    for (int64_t b = 0; b < B; ++b) {
      int32_t *row = tables + b * stride;
      std::fill(row, row + stride, -1);
      if (in.maxBlocksPerSeq > 0)
        std::memcpy(row, in.blockTables.data() + b * in.maxBlocksPerSeq,
                    size_t(in.maxBlocksPerSeq) * 4);
    }
  }
  auto *params =
      reinterpret_cast<kernels::SampleRowParams *>(base + layout_.sampleParams);
  for (size_t i = 0; i < samples.size(); ++i) {
    params[i].temperature = samples[i].params.temperature;
    params[i].topK = samples[i].params.topK;
    params[i].topP = samples[i].params.topP;
    params[i].seed = samples[i].params.seed;
    params[i].seqId = samples[i].seqId;
    params[i].step = samples[i].step;
  }
  bytes = layout_.blockTables + size_t(B * stride) * 4;
  return Status::success();
}

Status CudaBackend::runProgram(CudaProgram &program, bool graphable,
                               const StepShape &shape) {
  cudaStream_t main = streams_[0];
  if (!graphable)
    return program.issue(state_, shape);
  ++counters_.decodeSteps;
  const auto key = std::make_pair(&program.program(), shape.batch);
  auto it = graphs_.find(key);
  if (it != graphs_.end()) {
    ++counters_.graphReplays;
    return kernels::cudaStatus(cudaGraphLaunch(it->second, main),
                               "decode graph replay");
  }
  if (!seenEager_.count(key)) {
    seenEager_.insert(key);
    return program.issue(state_, shape);
  }
  STRATA_CUDA_RETURN_IF_ERROR(
      cudaStreamBeginCapture(main, cudaStreamCaptureModeThreadLocal),
      "decode graph capture");
  Status issued = program.issue(state_, shape);
  cudaGraph_t graph = nullptr;
  cudaError_t ended = cudaStreamEndCapture(main, &graph);
  if (!issued.ok()) {
    if (graph)
      cudaGraphDestroy(graph);
    return Status::error("while capturing the decode graph of batch " +
                         std::to_string(shape.batch) + ": " + issued.message());
  }
  STRATA_CUDA_RETURN_IF_ERROR(ended, "decode graph capture");
  cudaGraphExec_t exec = nullptr;
  cudaError_t made = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  STRATA_CUDA_RETURN_IF_ERROR(made, "decode graph instantiation");
  graphs_[key] = exec;
  ++counters_.graphCaptures;
  ++counters_.graphReplays;
  return kernels::cudaStatus(cudaGraphLaunch(exec, main),
                             "decode graph replay");
}

void CudaBackend::dropGraphs() {
  for (auto &[key, exec] : graphs_)
    cudaGraphExecDestroy(exec);
  graphs_.clear();
  seenEager_.clear();
}

bool CudaBackend::step(const plan::Program &program, const StepInputs &in,
                       const std::vector<StepSample> &samples,
                       std::vector<int32_t> &tokens, std::vector<float> *logits,
                       std::string &error) {
  auto failed = [&](const Status &s) {
    error = "cuda: " + s.message();
    return false;
  };
  cudaSetDevice(options_.device);
  CudaProgram *exec = programOf(program, error);
  if (!exec)
    return false;
  if (!inputs_.get()) {
    error = "cuda: step before reserve()";
    return false;
  }
  const int64_t T = in.numTokens(), B = in.batch();
  const plan::Limits &lim = plan_.limits;
  if (T > lim.maxTokens || B > lim.maxBatch) {
    error = "step of " + std::to_string(T) + " tokens in " + std::to_string(B) +
            " sequences exceeds the plan's limits (" +
            std::to_string(lim.maxTokens) + " tokens, " +
            std::to_string(lim.maxBatch) + " sequences)";
    return false;
  }
  if (!samples.empty() && int64_t(samples.size()) != B) {
    error = "cuda: " + std::to_string(samples.size()) + " samples for " +
            std::to_string(B) + " sequences";
    return false;
  }
  // Decode steps replay graphs by batch bucket: the batch is padded with
  // sequences whose block tables are empty and whose state slot is -1, so
  // they write nothing and read zeros.
  const bool graphable =
      options_.graphs && T == B && B > 0 && program.phase == "decode";
  StepInputs padded;
  const StepInputs *step = &in;
  int64_t bucket = B;
  if (graphable) {
    bucket = std::min<int64_t>(nextPow2(B), lim.maxBatch);
    if (bucket > B) {
      padded = in;
      for (int64_t b = B; b < bucket; ++b) {
        padded.tokenIds.push_back(0);
        padded.positions.push_back(0);
        padded.cuQLens.push_back(padded.cuQLens.back() + 1);
        padded.kvLens.push_back(1);
        padded.stateSlots.push_back(-1);
        padded.blockTables.insert(padded.blockTables.end(),
                                  size_t(padded.maxBlocksPerSeq), -1);
      }
      step = &padded;
    }
  }
  size_t bytes = 0;
  if (Status s = stage(*step, samples, bytes); !s.ok())
    return failed(s);
  cudaStream_t main = streams_[0];
  if (Status s = kernels::cudaStatus(
          cudaMemcpyAsync(inputs_.get(), staging_.get(), bytes,
                          cudaMemcpyHostToDevice, main),
          "step input upload");
      !s.ok())
    return failed(s);
  StepShape shape;
  shape.tokens = graphable ? bucket : T;
  shape.batch = graphable ? bucket : B;
  for (int64_t b = 0; b < B; ++b) {
    shape.maxQLen = std::max<int64_t>(shape.maxQLen, in.cuQLens[size_t(b) + 1] -
                                                         in.cuQLens[size_t(b)]);
    shape.maxKvLen = std::max<int64_t>(shape.maxKvLen, in.kvLens[size_t(b)]);
  }
  shape.host = graphable ? nullptr : step;
  if (Status s = runProgram(*exec, graphable, shape); !s.ok())
    return failed(s);

  tokens.clear();
  if (!samples.empty()) {
    const float *rows = exec->logits();
    if (!rows) {
      error = "cuda: the program has no fp32 output (logits)";
      return false;
    }
    const int64_t vocab = plan_.vocabSize;
    bool greedy = true;
    for (const StepSample &s : samples)
      greedy = greedy && s.params.temperature == 0.0;
    Status picked =
        greedy ? kernels::argmaxRows(rows, B, vocab, outIds_.as<int32_t>(),
                                     argmaxWorkspace_.get(),
                                     argmaxWorkspace_.bytes(), main)
               : kernels::sampleRows(
                     rows, B, vocab,
                     reinterpret_cast<const kernels::SampleRowParams *>(
                         inputs_.as<char>() + layout_.sampleParams),
                     outIds_.as<int32_t>(), main);
    if (!picked.ok())
      return failed(picked);
    if (Status s = kernels::cudaStatus(
            cudaMemcpyAsync(outIdsHost_.get(), outIds_.get(), size_t(B) * 4,
                            cudaMemcpyDeviceToHost, main),
            "sampled id download");
        !s.ok())
      return failed(s);
    if (logits) {
      const size_t need = size_t(B * vocab) * 4;
      if (logitsHost_.bytes() < need)
        if (Status s = logitsHost_.allocate(size_t(lim.maxBatch * vocab) * 4,
                                            "the logits");
            !s.ok())
          return failed(s);
      if (Status s =
              kernels::cudaStatus(cudaMemcpyAsync(logitsHost_.get(), rows, need,
                                                  cudaMemcpyDeviceToHost, main),
                                  "logits download");
          !s.ok())
        return failed(s);
    }
  }
  // The staging buffer is rewritten by the next step, so this one's copy
  // must have happened: every step ends synchronised.
  if (Status s = kernels::cudaStatus(cudaStreamSynchronize(main),
                                     (program.phase + " step").c_str());
      !s.ok())
    return failed(s);
  if (launchProfileEnabled() && !graphable) {
    exec->collectProfile(profile_[program.phase]);
    ++profileSteps_[program.phase];
  }
  if (!samples.empty()) {
    tokens.assign(outIdsHost_.as<int32_t>(), outIdsHost_.as<int32_t>() + B);
    if (logits)
      logits->assign(logitsHost_.as<float>(),
                     logitsHost_.as<float>() + B * plan_.vocabSize);
  }
  return true;
}

bool CudaBackend::stepLogits(const plan::Program &program, const StepInputs &in,
                             std::vector<float> &logits, std::string &error) {
  std::vector<int32_t> tokens;
  // step() ends synchronised and leaves the logits in the program's output
  // buffer until its next step.
  if (!step(program, in, {}, tokens, nullptr, error))
    return false;
  CudaProgram *exec = programOf(program, error);
  if (!exec)
    return false;
  const float *rows = exec->logits();
  if (!rows) {
    error = "cuda: the program has no fp32 output (logits)";
    return false;
  }
  bool allTokens = false;
  for (const plan::Launch &l : program.launches)
    if (l.kernel() == plan::Kernel::Logits)
      allTokens = l.as<plan::LogitsParams>().allTokens;
  const int64_t count = allTokens ? in.numTokens() : in.batch();
  logits.resize(size_t(count * plan_.vocabSize));
  if (logits.empty())
    return true;
  if (Status s =
          kernels::cudaStatus(cudaMemcpy(logits.data(), rows, logits.size() * 4,
                                         cudaMemcpyDeviceToHost),
                              "logits download");
      !s.ok()) {
    error = "cuda: " + s.message();
    return false;
  }
  return true;
}

} // namespace strata
