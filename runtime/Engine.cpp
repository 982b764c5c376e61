#include "runtime/Engine.h"

#include "runtime/MemoryBudget.h"
#include "runtime/plan/InputFile.h"

#include "runtime/cpu/CpuBackend.h"
#ifdef STRATA_HAVE_CUDA
#include "runtime/cuda/CudaBackend.h"
#endif

#include <algorithm>
#include <chrono>
#include <cmath>

namespace strata {

namespace {

double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

} // namespace

Engine::Engine(plan::Plan plan, const EngineOptions &options)
    : plan_(std::move(plan)), options_(options) {}

std::unique_ptr<Engine> Engine::create(plan::Plan plan,
                                       const EngineOptions &options,
                                       std::string &error) {
  if (std::string invalid = plan::validatePlan(plan); !invalid.empty()) {
    error = "invalid plan: " + invalid;
    return nullptr;
  }
  std::unique_ptr<Engine> engine(new Engine(std::move(plan), options));
  for (const plan::Program &p : engine->plan_.programs) {
    if (p.phase == "forward")
      engine->forward_ = &p;
    else if (p.phase == "prefill")
      engine->prefill_ = &p;
    else if (p.phase == "extend")
      engine->extend_ = &p;
    else if (p.phase == "decode")
      engine->decode_ = &p;
  }
  if (!engine->forward_ &&
      !(engine->prefill_ && engine->extend_ && engine->decode_)) {
    error = "the plan has neither a 'forward' program nor the 'prefill', "
            "'extend' and 'decode' programs generation needs";
    return nullptr;
  }
  const bool cuda = options.device == Device::Cuda;
  // Without --weights the plan's own: its checkpoint, or random weights from
  // its seed. A plan that names a checkpoint never falls back to random
  // weights.
  const plan::Plan &p = engine->plan_;
  const std::string weightsPath =
      options.weightsPath.empty() ? p.checkpoint : options.weightsPath;
  if (options.weightsPath.empty() && !p.checkpoint.empty()) {
    uint64_t size = 0;
    std::string missing =
        plan::checkRegularFile(p.checkpoint, "checkpoint", size);
    if (!missing.empty()) {
      error = missing + " (the model's checkpoint; --weights loads "
                        "another)";
      return nullptr;
    }
  }
#ifndef STRATA_HAVE_CUDA
  if (cuda) {
    error = "this build of strata has no CUDA support (nvcc was not found "
            "when it was configured); use the CPU backend";
    return nullptr;
  }
#endif
  // Weights last: loading a checkpoint is the slow part, so the plan's
  // cheap checks answer first. The CUDA backend draws random weights on the
  // device (the same values, far faster than on the host) and streams a
  // checkpoint tensor by tensor, so the host never holds the whole model.
  if (!cuda) {
    // The host holds the weights some launch reads and one arena per
    // program the engine runs.
    uint64_t arenaBytes = 0;
    for (const plan::Program *program :
         {engine->forward_, engine->prefill_, engine->extend_,
          engine->decode_})
      if (program)
        arenaBytes = saturatingAdd(arenaBytes, program->arenaBytes);
    error = memoryShortfall(
        "model '" + p.modelName + "'",
        {{"weights", weightBytesRead(p)}, {"activations", arenaBytes}},
        availableHostBytes(), "host memory");
    if (!error.empty())
      return nullptr;
  }
  if (!weightsPath.empty() && !cuda) {
    auto loaded = WeightStore::fromSafetensors(
        engine->plan_, weightsPath, error, WeightSubset::ReadByLaunches);
    if (!loaded)
      return nullptr;
    engine->weights_ = std::move(*loaded);
  } else if (!cuda) {
    engine->weights_ =
        WeightStore::random(engine->plan_, WeightSubset::ReadByLaunches);
  }
  if (!cuda) {
    engine->backend_ = createCpuBackend(engine->plan_, engine->weights_);
    return engine;
  }
#ifdef STRATA_HAVE_CUDA
  CudaBackendOptions cudaOptions;
  cudaOptions.device = options.deviceIndex;
  cudaOptions.graphs = options.cudaGraphs;
  cudaOptions.dependentLaunch = options.cudaDependentLaunch;
  cudaOptions.decodeGemv = options.cudaDecodeGemv;
  cudaOptions.weightsPath = weightsPath;
  engine->backend_ = createCudaBackend(engine->plan_, cudaOptions, error);
  if (!engine->backend_)
    return nullptr;
#endif
  return engine;
}

const plan::Program *
Engine::programFor(const std::vector<Sequence *> &batch,
                   const std::vector<int64_t> &counts) const {
  if (forward_)
    return forward_;
  bool allFresh = true, allSingle = true;
  for (size_t i = 0; i < batch.size(); ++i) {
    allFresh = allFresh && batch[i]->position == 0;
    allSingle = allSingle && counts[i] == 1;
  }
  if (allFresh)
    return prefill_;
  return allSingle ? decode_ : extend_;
}

bool Engine::step(std::vector<Sequence *> &batch,
                  const std::vector<int64_t> &counts,
                  const std::vector<StepSample> &samples,
                  std::vector<int32_t> &tokens, std::vector<float> *logits,
                  std::string &error) {
  StepInputs in;
  in.cuQLens.push_back(0);
  const bool hasCache = plan_.kvCache.layers > 0;
  for (size_t i = 0; i < batch.size(); ++i) {
    Sequence &s = *batch[i];
    for (int64_t t = 0; t < counts[i]; ++t) {
      in.tokenIds.push_back(s.pending[t]);
      in.positions.push_back(int32_t(s.position + t));
    }
    in.cuQLens.push_back(int32_t(in.tokenIds.size()));
    if (hasCache) {
      std::vector<int64_t> slots;
      if (!pool_.append(s.id, counts[i], slots, error))
        return false;
      in.slotMapping.insert(in.slotMapping.end(), slots.begin(), slots.end());
      in.maxBlocksPerSeq = std::max<int64_t>(
          in.maxBlocksPerSeq, int64_t(pool_.blockTable(s.id).size()));
    }
    in.kvLens.push_back(int32_t(s.position + counts[i]));
    in.stateSlots.push_back(s.slot);
  }
  if (hasCache) {
    in.blockTables.assign(batch.size() * in.maxBlocksPerSeq, -1);
    for (size_t i = 0; i < batch.size(); ++i) {
      const std::vector<int32_t> &table = pool_.blockTable(batch[i]->id);
      std::copy(table.begin(), table.end(),
                in.blockTables.begin() + i * in.maxBlocksPerSeq);
    }
  }
  const plan::Program &program = *programFor(batch, counts);
  if (!backend_->step(program, in, samples, tokens, logits, error))
    return false;
  // A non-finite logit means an overflow or a bad weight somewhere in the
  // step; sampling from it would print a plausible token (argmax of NaNs
  // is 0) with nothing to say it is wrong.
  if (logits && !samples.empty()) {
    const int64_t vocab = plan_.vocabSize;
    for (size_t i = 0; i < samples.size(); ++i) {
      const float *row = logits->data() + i * vocab;
      for (int64_t v = 0; v < vocab; ++v)
        if (!std::isfinite(row[v])) {
          error = "step " + std::to_string(stepCount_) + " (" + program.phase +
                  "): the logits of sequence " +
                  std::to_string(batch[i]->id) + " are " +
                  (std::isnan(row[v]) ? "NaN" : "infinite") + " at token " +
                  std::to_string(v) +
                  "; STRATA_TRACE=1 prints every launch's output to find "
                  "where it starts";
          return false;
        }
    }
  }
  ++stepCount_;
  for (size_t i = 0; i < batch.size(); ++i) {
    Sequence &s = *batch[i];
    s.position += counts[i];
    s.pending.erase(s.pending.begin(), s.pending.begin() + counts[i]);
  }
  return true;
}

bool Engine::checkCacheMemory(int64_t blocks, int64_t slots,
                              std::string &error) const {
  // The CUDA backend checks device memory itself when it reserves.
  if (options_.device == Device::Cuda)
    return true;
  error = memoryShortfall("the KV cache of " + std::to_string(blocks) +
                              " blocks",
                          cacheNeeds(plan_, blocks, slots),
                          availableHostBytes(), "host memory");
  return error.empty();
}

bool Engine::generate(const std::vector<GenerationRequest> &requests,
                      std::vector<GenerationResult> &results,
                      GenerationTimings &timings, std::string &error) {
  const int64_t vocab = plan_.vocabSize;
  const int64_t maxTokens = plan_.limits.maxTokens;
  const int64_t maxBatch = plan_.limits.maxBatch;
  results.assign(requests.size(), {});
  timings = {};
  for (size_t r = 0; r < requests.size(); ++r) {
    const GenerationRequest &req = requests[r];
    if (req.prompt.empty()) {
      error = "request " + std::to_string(r) + " has an empty prompt";
      return false;
    }
    for (int32_t id : req.prompt)
      if (id < 0 || id >= vocab) {
        error = "request " + std::to_string(r) + ": token id " +
                std::to_string(id) + " is outside the vocabulary of " +
                std::to_string(vocab);
        return false;
      }
    if (std::string bad = req.sampling.validate(); !bad.empty()) {
      error = "request " + std::to_string(r) + ": " + bad;
      return false;
    }
    if (req.maxNewTokens < 0 ||
        int64_t(req.prompt.size()) + req.maxNewTokens > plan_.maxPositions) {
      error = "request " + std::to_string(r) + ": a prompt of " +
              std::to_string(req.prompt.size()) + " tokens and " +
              std::to_string(req.maxNewTokens) +
              " new tokens exceed the model's " +
              std::to_string(plan_.maxPositions) + " positions";
      return false;
    }
  }

  // Storage for this call: enough blocks for every request at full length
  // unless the pool size was given, and one state slot per request.
  // Every request of the call is live until the end, so together they
  // need each one's blocks at its full length.
  int64_t blockSize = std::max<int64_t>(1, plan_.kvCache.blockSize);
  int64_t needed = 0;
  for (const GenerationRequest &req : requests)
    needed += (int64_t(req.prompt.size()) + req.maxNewTokens + blockSize - 1) /
              blockSize;
  int64_t blocks = options_.kvBlocks ? options_.kvBlocks : needed;
  if (plan_.kvCache.layers > 0 && blocks < needed) {
    error = "the KV pool has " + std::to_string(blocks) +
            (blocks == 1 ? " block but " : " blocks but ") +
            std::to_string(requests.size()) + " request" +
            (requests.size() == 1 ? " needs " : "s need ") +
            std::to_string(needed) + " blocks of " + std::to_string(blockSize) +
            " tokens (prompt and new tokens)";
    return false;
  }
  blocks = std::max<int64_t>(blocks, 1);
  if (!checkCacheMemory(blocks, int64_t(requests.size()), error))
    return false;
  if (!KvBlockPool::create(blocks, blockSize, pool_, error))
    return false;
  slots_ = StateSlots(int32_t(requests.size()));
  int64_t maxContext = 1;
  for (const GenerationRequest &req : requests)
    maxContext = std::max<int64_t>(
        maxContext, int64_t(req.prompt.size()) + req.maxNewTokens);
  if (!backend_->reserve(pool_.numBlocks(), slots_.numSlots(), maxContext,
                         error))
    return false;

  std::vector<Sequence> seqs(requests.size());
  for (size_t r = 0; r < requests.size(); ++r) {
    seqs[r].id = int64_t(r);
    seqs[r].pending = requests[r].prompt;
    pool_.addSequence(int64_t(r));
    if (!slots_.allocate(seqs[r].slot, error))
      return false;
    seqs[r].done = requests[r].maxNewTokens == 0;
  }

  auto sampleOf = [&](const Sequence &s) {
    StepSample draw;
    draw.params = requests[s.id].sampling;
    draw.seqId = uint64_t(s.id);
    draw.step = uint64_t(s.generated);
    return draw;
  };
  auto accept = [&](Sequence &s, int32_t token, const float *row) {
    const GenerationRequest &req = requests[s.id];
    results[s.id].tokens.push_back(token);
    if (row)
      results[s.id].lastLogits.assign(row, row + vocab);
    s.pending = {token};
    if (++s.generated >= req.maxNewTokens)
      s.done = true;
  };

  std::vector<float> logits;
  std::vector<float> *keep = options_.keepLogits ? &logits : nullptr;
  std::vector<int32_t> tokens;
  // Prompts: each step packs the pending prompt tokens of as many
  // sequences as the plan's limits allow (maxBatch sequences, maxTokens
  // tokens), in request order; a prompt longer than what is left of the
  // step continues in the next one. A step samples when some sequence's
  // prompt ends in it, and only those sequences keep their token (the draw
  // is counter-based, so a discarded draw changes nothing).
  double start = now();
  while (true) {
    std::vector<Sequence *> batch;
    std::vector<int64_t> counts;
    std::vector<bool> ends;
    int64_t budget = maxTokens;
    for (Sequence &s : seqs) {
      const int64_t promptLen = int64_t(requests[s.id].prompt.size());
      if (s.position >= promptLen)
        continue;
      if (budget == 0 || int64_t(batch.size()) == maxBatch)
        break;
      const int64_t chunk = std::min<int64_t>(budget, promptLen - s.position);
      batch.push_back(&s);
      counts.push_back(chunk);
      ends.push_back(s.position + chunk == promptLen && !s.done);
      budget -= chunk;
    }
    if (batch.empty())
      break;
    std::vector<StepSample> samples;
    if (std::find(ends.begin(), ends.end(), true) != ends.end())
      for (Sequence *s : batch)
        samples.push_back(sampleOf(*s));
    timings.prefillTokens += maxTokens - budget;
    ++timings.prefillSteps;
    if (!step(batch, counts, samples, tokens, keep, error))
      return false;
    for (size_t i = 0; i < batch.size(); ++i)
      if (ends[i])
        accept(*batch[i], tokens[i],
               keep ? logits.data() + i * vocab : nullptr);
  }
  timings.prefillSeconds = now() - start;

  // Decode: every live sequence feeds its last token, up to maxBatch each
  // step.
  start = now();
  while (true) {
    std::vector<Sequence *> live;
    for (Sequence &s : seqs)
      if (!s.done)
        live.push_back(&s);
    if (live.empty())
      break;
    for (size_t first = 0; first < live.size(); first += maxBatch) {
      std::vector<Sequence *> batch(
          live.begin() + first,
          live.begin() + std::min<size_t>(live.size(), first + maxBatch));
      std::vector<StepSample> samples;
      for (Sequence *s : batch)
        samples.push_back(sampleOf(*s));
      if (!step(batch, std::vector<int64_t>(batch.size(), 1), samples, tokens,
                keep, error))
        return false;
      for (size_t i = 0; i < batch.size(); ++i)
        accept(*batch[i], tokens[i], keep ? logits.data() + i * vocab : nullptr);
      ++timings.decodeSteps;
    }
  }
  timings.decodeSeconds = now() - start;
  for (Sequence &s : seqs) {
    pool_.release(s.id);
    slots_.release(s.slot);
  }
  return true;
}

} // namespace strata
