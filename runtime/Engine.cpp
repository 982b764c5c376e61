#include "runtime/Engine.h"

#include "runtime/Clock.h"

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

double now() { return secondsNow(); }

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
    else if (p.phase == "verify")
      engine->verify_ = &p;
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
         {engine->forward_, engine->prefill_, engine->extend_, engine->decode_})
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

bool Engine::buildInputs(const std::vector<Sequence *> &batch,
                         const std::vector<int64_t> &counts, StepInputs &in,
                         std::string &error) {
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
  return true;
}

bool Engine::step(std::vector<Sequence *> &batch,
                  const std::vector<int64_t> &counts,
                  const std::vector<StepSample> &samples,
                  std::vector<int32_t> &tokens, std::vector<float> *logits,
                  std::string &error) {
  StepInputs in;
  if (!buildInputs(batch, counts, in, error))
    return false;
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
                  "): the logits of sequence " + std::to_string(batch[i]->id) +
                  " are " + (std::isnan(row[v]) ? "NaN" : "infinite") +
                  " at token " + std::to_string(v) +
                  "; STRATA_TRACE=1 prints every launch's output to find "
                  "where it starts";
          return false;
        }
    }
  }
  advance(batch, counts);
  return true;
}

void Engine::advance(std::vector<Sequence *> &batch,
                     const std::vector<int64_t> &counts) {
  ++stepCount_;
  for (size_t i = 0; i < batch.size(); ++i) {
    Sequence &s = *batch[i];
    s.position += counts[i];
    s.pending.erase(s.pending.begin(), s.pending.begin() + counts[i]);
  }
}

bool Engine::checkCacheMemory(int64_t blocks, int64_t slots,
                              std::string &error) const {
  // The CUDA backend checks device memory itself when it reserves.
  if (options_.device == Device::Cuda)
    return true;
  error = memoryShortfall(
      "the KV cache of " + std::to_string(blocks) + " blocks",
      cacheNeeds(plan_, blocks, slots), availableHostBytes(), "host memory");
  return error.empty();
}

const char *toString(FinishReason reason) {
  switch (reason) {
  case FinishReason::Length:
    return "length";
  case FinishReason::StopToken:
    return "stop token";
  case FinishReason::Callback:
    return "stopped";
  }
  return "unknown";
}

bool Engine::checkRequest(const GenerationRequest &req, size_t index,
                          int64_t cached, int64_t positions,
                          std::string &error) const {
  const int64_t vocab = plan_.vocabSize;
  const std::string name = "request " + std::to_string(index);
  if (req.prompt.empty() && cached == 0) {
    error = name + " has an empty prompt";
    return false;
  }
  for (int32_t id : req.prompt)
    if (id < 0 || id >= vocab) {
      error = name + ": token id " + std::to_string(id) +
              " is outside the vocabulary of " + std::to_string(vocab);
      return false;
    }
  for (int32_t id : req.stopTokens)
    if (id < 0 || id >= vocab) {
      error = name + ": stop token id " + std::to_string(id) +
              " is outside the vocabulary of " + std::to_string(vocab);
      return false;
    }
  if (std::string bad = req.sampling.validate(); !bad.empty()) {
    error = name + ": " + bad;
    return false;
  }
  const int64_t length = cached + int64_t(req.prompt.size()) +
                         std::max<int64_t>(req.maxNewTokens, 0);
  if (req.maxNewTokens < 0 || length > positions) {
    error = name + ": " +
            (cached ? std::to_string(cached) + " tokens held, " : "") +
            "a prompt of " + std::to_string(req.prompt.size()) +
            " tokens and " + std::to_string(req.maxNewTokens) +
            " new tokens exceed the " +
            (positions == plan_.maxPositions
                 ? "model's " + std::to_string(positions) + " positions"
                 : std::to_string(positions) + " positions of the session");
    return false;
  }
  return true;
}

int64_t Engine::kvBlocksFor(uint64_t bytes, int64_t slots) const {
  const uint64_t perBlock = cacheNeeds(plan_, 1, 0)[0].bytes;
  const uint64_t states = cacheNeeds(plan_, 0, slots)[1].bytes;
  if (perBlock == 0 || bytes <= states)
    return 0;
  return int64_t(std::min<uint64_t>((bytes - states) / perBlock, INT32_MAX));
}

bool Engine::prepareStorage(int64_t blocks, int64_t slots, int64_t maxContext,
                            std::string &error) {
  const int64_t blockSize = std::max<int64_t>(1, plan_.kvCache.blockSize);
  blocks = std::max<int64_t>(blocks, 1);
  if (!checkCacheMemory(blocks, slots, error))
    return false;
  if (!KvBlockPool::create(blocks, blockSize, pool_, error))
    return false;
  slots_ = StateSlots(int32_t(slots));
  return backend_->reserve(pool_.numBlocks(), slots_.numSlots(),
                           std::max<int64_t>(maxContext, 1), error);
}

bool Engine::generate(const std::vector<GenerationRequest> &requests,
                      std::vector<GenerationResult> &results,
                      GenerationTimings &timings, std::string &error) {
  results.assign(requests.size(), {});
  timings = {};
  if (session_) {
    error = "generate() while a conversation is open; close it first";
    return false;
  }
  for (size_t r = 0; r < requests.size(); ++r)
    if (!checkRequest(requests[r], r, 0, plan_.maxPositions, error))
      return false;
  // The draft's sequences first take in the prompts.
  std::vector<Sequence> draftSeqs;
  const double draftStart = now();
  if (draft_ && !startDraft(requests, draftSeqs, error))
    return false;
  const double draftPrompts = now() - draftStart;
  auto releaseDraft = [&] {
    for (Sequence &d : draftSeqs) {
      draft_->pool_.release(d.id);
      draft_->slots_.release(d.slot);
    }
  };

  // Storage for this call: enough blocks for every request at full length
  // unless the pool size was given, and one state slot per request.
  // Every request of the call is live until the end, so together they
  // need each one's blocks at its full length.
  const int64_t blockSize = std::max<int64_t>(1, plan_.kvCache.blockSize);
  int64_t needed = 0, maxContext = 1;
  // A token tree's verify step writes all its nodes before the rejected
  // ones are released: up to treeSlack() slots past the final length.
  for (const GenerationRequest &req : requests) {
    const int64_t length =
        int64_t(req.prompt.size()) + req.maxNewTokens + treeSlack();
    needed += (length + blockSize - 1) / blockSize;
    maxContext = std::max(maxContext, length);
  }
  const int64_t blocks = options_.kvBlocks ? options_.kvBlocks : needed;
  if (plan_.kvCache.layers > 0 && blocks < needed) {
    error = "the KV pool has " + std::to_string(blocks) +
            (blocks == 1 ? " block but " : " blocks but ") +
            std::to_string(requests.size()) + " request" +
            (requests.size() == 1 ? " needs " : "s need ") +
            std::to_string(needed) + " blocks of " + std::to_string(blockSize) +
            " tokens (prompt and new tokens)";
    releaseDraft();
    return false;
  }
  if (!prepareStorage(blocks, int64_t(requests.size()), maxContext, error)) {
    releaseDraft();
    return false;
  }

  std::vector<Sequence> seqs(requests.size());
  std::vector<Sequence *> live;
  std::vector<const GenerationRequest *> reqs;
  for (size_t r = 0; r < requests.size(); ++r) {
    seqs[r].id = int64_t(r);
    seqs[r].pending = requests[r].prompt;
    pool_.addSequence(int64_t(r));
    if (!slots_.allocate(seqs[r].slot, error)) {
      releaseDraft();
      return false;
    }
    live.push_back(&seqs[r]);
    reqs.push_back(&requests[r]);
  }
  draftRun_ = draft_ ? &draftSeqs : nullptr;
  speculating_ = speculative();
  const bool ok = run(live, reqs, results, timings, error);
  draftRun_ = nullptr;
  speculating_ = false;
  timings.prefillSeconds += draftPrompts;
  for (Sequence &s : seqs) {
    pool_.release(s.id);
    slots_.release(s.slot);
  }
  releaseDraft();
  return ok;
}

bool Engine::openSession(int64_t maxLength, std::string &error) {
  if (session_) {
    error = "a conversation is already open";
    return false;
  }
  if (maxLength < 1 || maxLength > plan_.maxPositions) {
    error = "a conversation of " + std::to_string(maxLength) +
            " tokens: expected 1 to the model's " +
            std::to_string(plan_.maxPositions) + " positions";
    return false;
  }
  const int64_t blockSize = std::max<int64_t>(1, plan_.kvCache.blockSize);
  const int64_t blocks = (maxLength + blockSize - 1) / blockSize;
  if (!prepareStorage(blocks, 1, maxLength, error))
    return false;
  auto s = std::make_unique<Sequence>();
  s->id = 0;
  pool_.addSequence(0);
  if (!slots_.allocate(s->slot, error))
    return false;
  session_ = std::move(s);
  sessionLimit_ = maxLength;
  return true;
}

int64_t Engine::sessionLength() const {
  return session_ ? session_->position + int64_t(session_->pending.size()) : 0;
}

void Engine::closeSession() {
  if (!session_)
    return;
  pool_.release(session_->id);
  slots_.release(session_->slot);
  session_.reset();
}

bool Engine::continueSession(const GenerationRequest &turn,
                             GenerationResult &result,
                             GenerationTimings &timings, std::string &error) {
  result = {};
  timings = {};
  if (!session_) {
    error = "no conversation is open";
    return false;
  }
  if (!checkRequest(turn, 0, sessionLength(), sessionLimit_, error))
    return false;
  Sequence &s = *session_;
  s.pending.insert(s.pending.end(), turn.prompt.begin(), turn.prompt.end());
  s.generated = 0;
  s.done = false;
  std::vector<Sequence *> seqs{&s};
  std::vector<GenerationResult> results(1);
  if (!run(seqs, {&turn}, results, timings, error)) {
    // A failed step leaves the cache in an unknown state.
    closeSession();
    return false;
  }
  result = std::move(results[0]);
  return true;
}

void Engine::acceptToken(Sequence &s, const GenerationRequest &req,
                         GenerationResult &result, int32_t token,
                         const float *row) const {
  result.tokens.push_back(token);
  if (row)
    result.lastLogits.assign(row, row + plan_.vocabSize);
  s.pending = {token};
  ++s.draws;
  if (std::find(req.stopTokens.begin(), req.stopTokens.end(), token) !=
      req.stopTokens.end()) {
    result.finish = FinishReason::StopToken;
    s.done = true;
  }
  if (req.onToken && !req.onToken(token) && !s.done) {
    result.finish = FinishReason::Callback;
    s.done = true;
  }
  if (++s.generated >= req.maxNewTokens && !s.done) {
    result.finish = FinishReason::Length;
    s.done = true;
  }
}

bool Engine::run(std::vector<Sequence *> &seqs,
                 const std::vector<const GenerationRequest *> &requests,
                 std::vector<GenerationResult> &results,
                 GenerationTimings &timings, std::string &error) {
  const int64_t vocab = plan_.vocabSize;
  const int64_t maxTokens = plan_.limits.maxTokens;
  const int64_t maxBatch = plan_.limits.maxBatch;
  // Each sequence first feeds all it has pending (a prompt; in a
  // conversation, the last reply's final token and the new turn).
  std::vector<bool> inPrompt(seqs.size());
  for (size_t i = 0; i < seqs.size(); ++i) {
    seqs[i]->done = requests[i]->maxNewTokens == 0;
    inPrompt[i] = !seqs[i]->pending.empty();
  }
  auto sampleOf = [&](size_t i) {
    StepSample draw;
    draw.params = requests[i]->sampling;
    draw.seqId = uint64_t(seqs[i]->id);
    draw.step = uint64_t(seqs[i]->draws);
    return draw;
  };
  auto accept = [&](size_t i, int32_t token, const float *row) {
    acceptToken(*seqs[i], *requests[i], results[i], token, row);
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
    std::vector<size_t> which;
    std::vector<int64_t> counts;
    std::vector<bool> ends;
    int64_t budget = maxTokens;
    for (size_t i = 0; i < seqs.size(); ++i) {
      if (!inPrompt[i])
        continue;
      if (budget == 0 || int64_t(batch.size()) == maxBatch)
        break;
      Sequence &s = *seqs[i];
      const int64_t left = int64_t(s.pending.size());
      const int64_t chunk = std::min<int64_t>(budget, left);
      batch.push_back(&s);
      which.push_back(i);
      counts.push_back(chunk);
      ends.push_back(chunk == left && !s.done);
      if (chunk == left)
        inPrompt[i] = false;
      budget -= chunk;
    }
    if (batch.empty())
      break;
    std::vector<StepSample> samples;
    if (std::find(ends.begin(), ends.end(), true) != ends.end())
      for (size_t i : which)
        samples.push_back(sampleOf(i));
    timings.prefillTokens += maxTokens - budget;
    ++timings.prefillSteps;
    if (!step(batch, counts, samples, tokens, keep, error))
      return false;
    for (size_t b = 0; b < batch.size(); ++b)
      if (ends[b])
        accept(which[b], tokens[b], keep ? logits.data() + b * vocab : nullptr);
  }
  timings.prefillSeconds = now() - start;
  if (speculating_)
    return speculativeDecode(seqs, requests, results, timings, error);

  // Decode: every live sequence feeds its last token, up to maxBatch each
  // step.
  start = now();
  while (true) {
    std::vector<size_t> live;
    for (size_t i = 0; i < seqs.size(); ++i)
      if (!seqs[i]->done)
        live.push_back(i);
    if (live.empty())
      break;
    for (size_t first = 0; first < live.size(); first += size_t(maxBatch)) {
      const size_t end =
          std::min<size_t>(live.size(), first + size_t(maxBatch));
      std::vector<size_t> which(live.begin() + first, live.begin() + end);
      std::vector<Sequence *> batch;
      std::vector<StepSample> samples;
      for (size_t i : which) {
        batch.push_back(seqs[i]);
        samples.push_back(sampleOf(i));
      }
      if (!step(batch, std::vector<int64_t>(batch.size(), 1), samples, tokens,
                keep, error))
        return false;
      for (size_t b = 0; b < batch.size(); ++b)
        accept(which[b], tokens[b], keep ? logits.data() + b * vocab : nullptr);
      ++timings.decodeSteps;
    }
  }
  timings.decodeSeconds = now() - start;
  return true;
}

} // namespace strata
