#include "runtime/Engine.h"

#include <algorithm>
#include <chrono>

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
  const plan::Program *forward = nullptr, *prefill = nullptr, *extend = nullptr,
                      *decode = nullptr;
  for (const plan::Program &p : engine->plan_.programs) {
    if (p.phase == "forward")
      forward = &p;
    else if (p.phase == "prefill")
      prefill = &p;
    else if (p.phase == "extend")
      extend = &p;
    else if (p.phase == "decode")
      decode = &p;
  }
  if (!forward && !(prefill && extend && decode)) {
    error = "the plan has neither a 'forward' program nor the 'prefill', "
            "'extend' and 'decode' programs generation needs";
    return nullptr;
  }
  // Weights last: loading a checkpoint is the slow part, so the plan's
  // cheap checks answer first.
  if (options.weightsPath.empty()) {
    engine->weights_ = WeightStore::random(engine->plan_);
  } else {
    auto loaded =
        WeightStore::fromSafetensors(engine->plan_, options.weightsPath, error);
    if (!loaded)
      return nullptr;
    engine->weights_ = std::move(*loaded);
  }
  auto make = [&](const plan::Program *p) {
    return p ? std::make_unique<CpuExecutor>(engine->plan_, *p,
                                             engine->weights_)
             : nullptr;
  };
  engine->forward_ = make(forward);
  engine->prefill_ = make(prefill);
  engine->extend_ = make(extend);
  engine->decode_ = make(decode);
  return engine;
}

CpuExecutor *Engine::executorFor(const std::vector<Sequence *> &batch,
                                 const std::vector<int64_t> &counts) {
  if (forward_)
    return forward_.get();
  bool allFresh = true, allSingle = true;
  for (size_t i = 0; i < batch.size(); ++i) {
    allFresh = allFresh && batch[i]->position == 0;
    allSingle = allSingle && counts[i] == 1;
  }
  if (allFresh)
    return prefill_.get();
  return allSingle ? decode_.get() : extend_.get();
}
bool Engine::step(std::vector<Sequence *> &batch,
                  const std::vector<int64_t> &counts,
                  std::vector<float> &logits, std::string &error) {
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
  kernels::Status status = executorFor(batch, counts)->run(in, caches_, logits);
  if (!status.ok()) {
    error = status.message();
    return false;
  }
  for (size_t i = 0; i < batch.size(); ++i) {
    Sequence &s = *batch[i];
    s.position += counts[i];
    s.pending.erase(s.pending.begin(), s.pending.begin() + counts[i]);
  }
  return true;
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
  }

  // Storage for this call: enough blocks for every request at full length
  // unless the pool size was given, and one state slot per request.
  int64_t blockSize = std::max<int64_t>(1, plan_.kvCache.blockSize);
  int64_t blocks = options_.kvBlocks;
  if (blocks == 0)
    for (const GenerationRequest &req : requests)
      blocks +=
          (int64_t(req.prompt.size()) + req.maxNewTokens + blockSize - 1) /
          blockSize;
  if (!KvBlockPool::create(std::max<int64_t>(blocks, 1), blockSize, pool_,
                           error))
    return false;
  slots_ = StateSlots(int32_t(requests.size()));
  caches_ = CpuCaches::create(plan_, pool_.numBlocks(), slots_.numSlots());

  std::vector<Sequence> seqs(requests.size());
  for (size_t r = 0; r < requests.size(); ++r) {
    seqs[r].id = int64_t(r);
    seqs[r].pending = requests[r].prompt;
    pool_.addSequence(int64_t(r));
    if (!slots_.allocate(seqs[r].slot, error))
      return false;
    seqs[r].done = requests[r].maxNewTokens == 0;
  }

  auto sample = [&](Sequence &s, const float *row) {
    const GenerationRequest &req = requests[s.id];
    int32_t token = int32_t(sampleToken(row, vocab, req.sampling,
                                        uint64_t(s.id), uint64_t(s.generated)));
    results[s.id].tokens.push_back(token);
    results[s.id].lastLogits.assign(row, row + vocab);
    s.pending = {token};
    if (++s.generated >= req.maxNewTokens)
      s.done = true;
  };

  std::vector<float> logits;
  // Prompts: one sequence at a time, in chunks of at most maxTokens.
  double start = now();
  for (Sequence &s : seqs) {
    const int64_t promptLen = int64_t(requests[s.id].prompt.size());
    while (s.position < promptLen) {
      int64_t chunk = std::min<int64_t>(maxTokens, promptLen - s.position);
      bool last = s.position + chunk == promptLen;
      std::vector<Sequence *> one{&s};
      timings.prefillTokens += chunk;
      if (!step(one, {chunk}, logits, error))
        return false;
      if (last && !s.done)
        sample(s, logits.data());
    }
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
      if (!step(batch, std::vector<int64_t>(batch.size(), 1), logits, error))
        return false;
      for (size_t i = 0; i < batch.size(); ++i)
        sample(*batch[i], logits.data() + i * vocab);
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
