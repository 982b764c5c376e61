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

Status CudaBackend::runProgram(CudaProgram &program, const GraphKey *key,
                               const StepShape &shape) {
  cudaStream_t main = streams_[0];
  if (!key)
    return program.issue(state_, shape);
  const bool verify = key->perSeq > 0;
  ++(verify ? counters_.verifySteps : counters_.decodeSteps);
  int64_t &replays = verify ? counters_.verifyGraphReplays
                            : counters_.graphReplays;
  auto it = graphs_.find(*key);
  if (it != graphs_.end()) {
    ++replays;
    return kernels::cudaStatus(cudaGraphLaunch(it->second, main),
                               "graph replay");
  }
  if (!seenEager_.count(*key)) {
    seenEager_.insert(*key);
    return program.issue(state_, shape);
  }
  const std::string what =
      verify ? "the verify graph of batch " + std::to_string(shape.batch) +
                   " x " + std::to_string(key->perSeq) + " tokens"
             : "the decode graph of batch " + std::to_string(shape.batch);
  STRATA_CUDA_RETURN_IF_ERROR(
      cudaStreamBeginCapture(main, cudaStreamCaptureModeThreadLocal),
      "graph capture");
  Status issued = program.issue(state_, shape);
  cudaGraph_t graph = nullptr;
  cudaError_t ended = cudaStreamEndCapture(main, &graph);
  if (!issued.ok()) {
    if (graph)
      cudaGraphDestroy(graph);
    return Status::error("while capturing " + what + ": " + issued.message());
  }
  STRATA_CUDA_RETURN_IF_ERROR(ended, "graph capture");
  cudaGraphExec_t exec = nullptr;
  cudaError_t made = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  STRATA_CUDA_RETURN_IF_ERROR(made, "graph instantiation");
  graphs_[*key] = exec;
  ++(verify ? counters_.verifyGraphCaptures : counters_.graphCaptures);
  ++replays;
  return kernels::cudaStatus(cudaGraphLaunch(exec, main), "graph replay");
}

void CudaBackend::dropGraphs() {
  for (auto &[key, exec] : graphs_)
    cudaGraphExecDestroy(exec);
  graphs_.clear();
  seenEager_.clear();
}

int64_t CudaBackend::verifyBucket(int64_t tokens) {
  // Powers of two up to 8, then multiples of 8: a 16-token tree and its
  // root (17) run as 24, not 32.
  return tokens <= 8 ? nextPow2(tokens) : (tokens + 7) / 8 * 8;
}

namespace {

bool allTokenLogits(const plan::Program &program) {
  for (const plan::Launch &l : program.launches)
    if (l.kernel() == plan::Kernel::Logits)
      return l.as<plan::LogitsParams>().allTokens;
  return false;
}

/// `in` with every sequence padded to `perSeq` tokens and the batch to
/// `batch` sequences. A padding token hangs from the cached prefix (parent
/// -1, the position of the sequence's first token) after the real ones;
/// its keys land in slots past the sequence's tokens, in blocks it owns or
/// nowhere (a -1 block-table entry), and no real token attends to it (it
/// is nobody's ancestor). A padding sequence has an empty block table and
/// state slot -1, as decode's. `rowOf[t]` is real token t's row.
StepInputs padVerify(const StepInputs &in, int64_t batch, int64_t perSeq,
                     std::vector<int64_t> &rowOf) {
  StepInputs out;
  out.maxBlocksPerSeq = in.maxBlocksPerSeq;
  out.blockTables = in.blockTables;
  out.stateSlots = in.stateSlots;
  out.cuQLens.push_back(0);
  rowOf.clear();
  for (int64_t b = 0; b < batch; ++b) {
    const bool real = b < in.batch();
    const int64_t first = real ? in.cuQLens[size_t(b)] : 0;
    const int64_t count = real ? in.cuQLens[size_t(b) + 1] - first : 0;
    const int32_t root = count > 0 ? in.positions[size_t(first)] : 0;
    for (int64_t t = 0; t < perSeq; ++t) {
      const bool own = t < count;
      if (own)
        rowOf.push_back(b * perSeq + t);
      out.tokenIds.push_back(own ? in.tokenIds[size_t(first + t)] : 0);
      out.positions.push_back(own ? in.positions[size_t(first + t)] : root);
      out.parentIds.push_back(own ? in.parentIds[size_t(first + t)] : -1);
    }
    out.cuQLens.push_back(int32_t((b + 1) * perSeq));
    const int32_t cached =
        real ? in.kvLens[size_t(b)] - int32_t(count) : 0;
    out.kvLens.push_back(cached + int32_t(perSeq));
    if (!real) {
      out.stateSlots.push_back(-1);
      out.blockTables.insert(out.blockTables.end(),
                             size_t(out.maxBlocksPerSeq), -1);
    }
  }
  return out;
}

} // namespace

bool CudaBackend::launchStep(const plan::Program &program,
                             const StepInputs &in,
                             const std::vector<StepSample> &samples,
                             IssuedStep &issued, std::string &error) {
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
  int64_t maxQLen = 0, maxKvLen = 0;
  for (int64_t b = 0; b < B; ++b) {
    maxQLen = std::max<int64_t>(maxQLen, in.cuQLens[size_t(b) + 1] -
                                             in.cuQLens[size_t(b)]);
    maxKvLen = std::max<int64_t>(maxKvLen, in.kvLens[size_t(b)]);
  }
  // Decode steps replay graphs by batch bucket, verify steps by batch
  // bucket and tokens per sequence: the batch is padded with sequences
  // whose block tables are empty and whose state slot is -1, so they write
  // nothing and read zeros; a verify step's sequences are padded to the
  // same number of tokens (padVerify).
  const bool verify = !in.parentIds.empty();
  GraphKey key{&program, 0, 0};
  bool graphable = false;
  if (options_.graphs && B > 0) {
    key.batch = std::min<int64_t>(nextPow2(B), lim.maxBatch);
    if (!verify) {
      graphable = T == B && program.phase == "decode";
    } else {
      // Padding keys must stay inside the context the attention's splits
      // were sized for; a sequence that close to it runs eagerly.
      key.perSeq = verifyBucket(maxQLen);
      graphable = key.batch * key.perSeq <= lim.maxTokens;
      for (int64_t b = 0; b < B && graphable; ++b) {
        const int64_t qLen = in.cuQLens[size_t(b) + 1] - in.cuQLens[size_t(b)];
        graphable = in.kvLens[size_t(b)] - qLen + key.perSeq <=
                    state_.maxContext;
      }
    }
  }
  StepInputs padded;
  const StepInputs *step = &in;
  issued.rowOf.clear();
  if (graphable && verify) {
    padded = padVerify(in, key.batch, key.perSeq, issued.rowOf);
    step = &padded;
  } else if (graphable && key.batch > B) {
    padded = in;
    for (int64_t b = B; b < key.batch; ++b) {
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
  // A graphable step is issued as its graph is (no host copy: kernels size
  // their work for the longest context reserved), also when it runs
  // eagerly before its capture, so every step of a bucket computes alike.
  StepShape shape;
  shape.tokens = step->numTokens();
  shape.batch = step->batch();
  shape.maxQLen = graphable && verify ? key.perSeq : maxQLen;
  shape.maxKvLen = maxKvLen;
  shape.host = graphable ? nullptr : step;
  if (Status s = runProgram(*exec, graphable ? &key : nullptr, shape);
      !s.ok())
    return failed(s);
  issued.exec = exec;
  issued.rows = allTokenLogits(program) ? shape.tokens : shape.batch;
  issued.graphed = graphable;
  return true;
}

Status CudaBackend::finishStep(const plan::Program &program, bool graphed) {
  // The staging buffer is rewritten by the next step, so this one's copy
  // must have happened: every step ends synchronised.
  STRATA_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(streams_[0]),
                              (program.phase + " step").c_str());
  if (launchProfileEnabled() && !graphed) {
    programs_.at(&program)->collectProfile(profile_[program.phase]);
    ++profileSteps_[program.phase];
  }
  return Status::success();
}

bool CudaBackend::step(const plan::Program &program, const StepInputs &in,
                       const std::vector<StepSample> &samples,
                       std::vector<int32_t> &tokens, std::vector<float> *logits,
                       std::string &error) {
  auto failed = [&](const Status &s) {
    error = "cuda: " + s.message();
    return false;
  };
  if (!in.parentIds.empty() && !samples.empty()) {
    error = "cuda: a verify step picks no tokens (stepLogits, stepArgmax)";
    return false;
  }
  IssuedStep issued;
  if (!launchStep(program, in, samples, issued, error))
    return false;
  const int64_t B = in.batch();
  cudaStream_t main = streams_[0];
  tokens.clear();
  if (!samples.empty()) {
    const float *rows = issued.exec->logits();
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
      if (Status s = growLogitsHost(need); !s.ok())
        return failed(s);
      if (Status s =
              kernels::cudaStatus(cudaMemcpyAsync(logitsHost_.get(), rows, need,
                                                  cudaMemcpyDeviceToHost, main),
                                  "logits download");
          !s.ok())
        return failed(s);
    }
  }
  if (Status s = finishStep(program, issued.graphed); !s.ok())
    return failed(s);
  if (!samples.empty()) {
    tokens.assign(outIdsHost_.as<int32_t>(), outIdsHost_.as<int32_t>() + B);
    if (logits)
      logits->assign(logitsHost_.as<float>(),
                     logitsHost_.as<float>() + B * plan_.vocabSize);
  }
  return true;
}

Status CudaBackend::growLogitsHost(size_t bytes) {
  if (logitsHost_.bytes() >= bytes)
    return Status::success();
  // A row per sequence at least; more only when a step's every-token
  // logits are asked for (a plan's tokens per step x vocabulary can be a
  // gigabyte of pinned memory).
  const size_t batchRows =
      size_t(plan_.limits.maxBatch) * size_t(plan_.vocabSize) * 4;
  return logitsHost_.allocate(std::max(bytes, batchRows), "the logits");
}

bool CudaBackend::stepLogits(const plan::Program &program, const StepInputs &in,
                             std::vector<float> &logits, std::string &error) {
  auto failed = [&](const Status &s) {
    error = "cuda: " + s.message();
    return false;
  };
  IssuedStep issued;
  if (!launchStep(program, in, {}, issued, error))
    return false;
  const float *rows = issued.exec->logits();
  if (!rows) {
    error = "cuda: the program has no fp32 output (logits)";
    return false;
  }
  const int64_t vocab = plan_.vocabSize;
  const int64_t count =
      allTokenLogits(program) ? in.numTokens() : in.batch();
  const size_t rowBytes = size_t(vocab) * 4;
  if (Status s = growLogitsHost(size_t(count) * rowBytes); !s.ok())
    return failed(s);
  // Rows of a padded verify step are gathered back to the step's own
  // tokens, a run of a sequence's rows per copy.
  char *host = logitsHost_.as<char>();
  const char *device = reinterpret_cast<const char *>(rows);
  for (int64_t r = 0; r < count;) {
    const int64_t from = issued.rowOf.empty() ? r : issued.rowOf[size_t(r)];
    int64_t run = 1;
    while (r + run < count &&
           (issued.rowOf.empty() ||
            issued.rowOf[size_t(r + run)] == from + run))
      ++run;
    if (Status s = kernels::cudaStatus(
            cudaMemcpyAsync(host + size_t(r) * rowBytes,
                            device + size_t(from) * rowBytes,
                            size_t(run) * rowBytes, cudaMemcpyDeviceToHost,
                            streams_[0]),
            "logits download");
        !s.ok())
      return failed(s);
    r += run;
  }
  if (Status s = finishStep(program, issued.graphed); !s.ok())
    return failed(s);
  logits.assign(logitsHost_.as<float>(),
                logitsHost_.as<float>() + count * vocab);
  return true;
}

bool CudaBackend::stepArgmax(const plan::Program &program,
                             const StepInputs &in, std::vector<int32_t> &ids,
                             std::string &error) {
  auto failed = [&](const Status &s) {
    error = "cuda: " + s.message();
    return false;
  };
  if (!allTokenLogits(program)) {
    error = "cuda: the program has no all-token logits to take the argmax of";
    return false;
  }
  // A step, padded or not, has at most the plan's tokens.
  if (plan_.limits.maxTokens > argmaxRowsReserved_) {
    error = "cuda: the argmax of up to " +
            std::to_string(plan_.limits.maxTokens) + " rows exceeds the " +
            std::to_string(argmaxRowsReserved_) + " it takes";
    return false;
  }
  IssuedStep issued;
  if (!launchStep(program, in, {}, issued, error))
    return false;
  const float *rows = issued.exec->logits();
  cudaStream_t main = streams_[0];
  if (Status s = kernels::argmaxRows(rows, issued.rows, plan_.vocabSize,
                                     outIds_.as<int32_t>(),
                                     argmaxWorkspace_.get(),
                                     argmaxWorkspace_.bytes(), main);
      !s.ok())
    return failed(s);
  if (Status s = kernels::cudaStatus(
          cudaMemcpyAsync(outIdsHost_.get(), outIds_.get(),
                          size_t(issued.rows) * 4, cudaMemcpyDeviceToHost,
                          main),
          "argmax download");
      !s.ok())
    return failed(s);
  if (Status s = finishStep(program, issued.graphed); !s.ok())
    return failed(s);
  const int32_t *all = outIdsHost_.as<int32_t>();
  ids.resize(size_t(in.numTokens()));
  for (size_t t = 0; t < ids.size(); ++t)
    ids[t] = all[issued.rowOf.empty() ? t : size_t(issued.rowOf[t])];
  return true;
}

} // namespace strata
