// Engine's continuous-batching loop (Engine::startServing and the calls
// after it): a waiting queue and a running set of requests, one step at a
// time, KV blocks taken as sequences grow and preemption by recomputation
// when the pool runs dry.
#include "runtime/Engine.h"

#include <algorithm>

namespace strata {

bool Engine::startServing(const ServeOptions &options, std::string &error) {
  if (session_) {
    error = "serving while a conversation is open; close it first";
    return false;
  }
  if (draft_ && !specTree_.empty()) {
    error = "serving with a token tree (--spec-tree) is not supported; a "
            "draft model's chains are";
    return false;
  }
  stopServing();
  const bool hasCache = plan_.kvCache.layers > 0;
  if (hasCache && options.kvBlocks < 1) {
    error = "serving needs a KV pool of at least one block, got " +
            std::to_string(options.kvBlocks);
    return false;
  }
  if (options.maxRunning < 0 || options.stepTokens < 0) {
    error = "serving limits must not be negative";
    return false;
  }
  serve_ = options;
  if (serve_.maxRunning == 0 || serve_.maxRunning > plan_.limits.maxBatch)
    serve_.maxRunning = plan_.limits.maxBatch;
  if (serve_.stepTokens == 0 || serve_.stepTokens > plan_.limits.maxTokens)
    serve_.stepTokens = plan_.limits.maxTokens;
  if (!prepareStorage(std::max<int64_t>(options.kvBlocks, 1), serve_.maxRunning,
                      plan_.maxPositions, error))
    return false;
  if (draft_) {
    // The draft's pool holds as many tokens as the model's, plus a partial
    // block and a chain per running sequence; it caches no prefixes, so
    // where the model's requests share theirs the draft may run out, and
    // a sequence it cannot hold proposes nothing.
    Engine &d = *draft_;
    const int64_t blockSize = std::max<int64_t>(1, plan_.kvCache.blockSize);
    const int64_t draftBlock = std::max<int64_t>(1, d.plan_.kvCache.blockSize);
    const int64_t tokens =
        std::max<int64_t>(options.kvBlocks, 1) * blockSize +
        serve_.maxRunning * (draftBlock + specTokens_);
    if (!d.prepareStorage((tokens + draftBlock - 1) / draftBlock,
                          serve_.maxRunning, d.plan_.maxPositions, error)) {
      error = "the draft model: " + error;
      return false;
    }
  }
  serving_ = true;
  serveCounters_ = {};
  if (options.prefixCache && hasCache && plan_.linearState.layers == 0) {
    pool_.enablePrefixCache();
    serveCounters_.prefixCache = true;
  }
  return true;
}

void Engine::stopServing() {
  for (auto &[id, r] : served_)
    releaseServed(*r);
  served_.clear();
  waiting_.clear();
  running_.clear();
  cancelled_.clear();
  serving_ = false;
}

bool Engine::serveBusy() const { return !served_.empty(); }

ServeStats Engine::serveStats() const {
  ServeStats stats = serveCounters_;
  stats.running = int64_t(running_.size());
  stats.waiting = int64_t(waiting_.size());
  stats.kvBlocks = pool_.numBlocks();
  stats.freeKvBlocks = pool_.freeBlocks();
  return stats;
}

int64_t Engine::blocksToGrow(const Sequence &s, int64_t count) const {
  if (plan_.kvCache.layers == 0)
    return 0;
  const int64_t blockSize = pool_.blockSize();
  const int64_t held =
      pool_.hasSequence(s.id) ? int64_t(pool_.blockTable(s.id).size()) : 0;
  const int64_t need = (s.position + count + blockSize - 1) / blockSize;
  return std::max<int64_t>(0, need - held);
}

int32_t Engine::servedToken(const Served &r, int64_t p) {
  const int64_t prompt = int64_t(r.request.prompt.size());
  return p < prompt ? r.request.prompt[size_t(p)]
                    : r.result.tokens[size_t(p - prompt)];
}

void Engine::releaseServed(Served &r) {
  releaseServedDraft(r);
  if (!r.admitted)
    return;
  pool_.release(r.seq.id);
  slots_.release(r.seq.slot);
  r.seq.slot = kPaddingSlot;
  r.admitted = false;
}

void Engine::preempt(Served &r) {
  releaseServed(r);
  // Everything it holds is fed again: the prompt and the tokens it
  // generated (the last one was still pending). Its draw counter stays, so
  // the tokens that follow are those it would have drawn anyway.
  r.seq.pending = r.request.prompt;
  r.seq.pending.insert(r.seq.pending.end(), r.result.tokens.begin(),
                       r.result.tokens.end());
  r.seq.position = 0;
  running_.erase(std::find(running_.begin(), running_.end(), r.id));
  waiting_.push_front(r.id);
  ++serveCounters_.preemptions;
}

bool Engine::submit(GenerationRequest request, uint64_t &id,
                    std::string &error) {
  if (!serving_) {
    error = "submit() before startServing()";
    return false;
  }
  if (!checkRequest(request, size_t(nextServeId_), 0, plan_.maxPositions,
                    error))
    return false;
  const int64_t length = int64_t(request.prompt.size()) + request.maxNewTokens;
  if (plan_.kvCache.layers > 0) {
    const int64_t blockSize = pool_.blockSize();
    const int64_t blocks = (length + blockSize - 1) / blockSize;
    if (blocks > pool_.numBlocks()) {
      error = "a prompt of " + std::to_string(request.prompt.size()) +
              " tokens and " + std::to_string(request.maxNewTokens) +
              " new tokens need " + std::to_string(blocks) + " KV blocks of " +
              std::to_string(blockSize) + " tokens; the pool has " +
              std::to_string(pool_.numBlocks());
      return false;
    }
  }
  auto r = std::make_unique<Served>();
  r->id = nextServeId_++;
  r->seq.id = int64_t(r->id);
  r->seq.pending = request.prompt;
  r->seq.done = request.maxNewTokens == 0;
  r->request = std::move(request);
  id = r->id;
  waiting_.push_back(id);
  served_.emplace(id, std::move(r));
  return true;
}

bool Engine::cancel(uint64_t id) {
  auto it = served_.find(id);
  if (it == served_.end())
    return false;
  Served &r = *it->second;
  releaseServed(r);
  if (auto w = std::find(waiting_.begin(), waiting_.end(), id);
      w != waiting_.end())
    waiting_.erase(w);
  if (auto run = std::find(running_.begin(), running_.end(), id);
      run != running_.end())
    running_.erase(run);
  cancelled_.push_back({id, true, std::move(r.result)});
  served_.erase(it);
  return true;
}

bool Engine::serveStep(std::vector<ServeResult> &ended, std::string &error) {
  for (ServeResult &c : cancelled_)
    ended.push_back(std::move(c));
  cancelled_.clear();
  if (!serving_) {
    error = "serveStep() before startServing()";
    return false;
  }
  // A request that asked for no tokens ends without a step.
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    Served &r = *served_.at(*it);
    if (!r.seq.done) {
      ++it;
      continue;
    }
    ended.push_back({r.id, false, std::move(r.result)});
    served_.erase(*it);
    it = waiting_.erase(it);
  }

  // Plan the step. Running sequences come first: those decoding (one token
  // each, so that a long prompt never stalls them), then those still
  // feeding a prompt, each group oldest first. When the pool cannot grow
  // one, the youngest running sequence gives its blocks up (possibly the
  // one asking).
  int64_t budget = serve_.stepTokens;
  int64_t freeBlocks = pool_.freeBlocks();
  std::vector<Served *> planned;
  std::vector<int64_t> counts;
  std::vector<uint64_t> order;
  for (int pass = 0; pass < 2; ++pass)
    for (uint64_t id : running_)
      if ((served_.at(id)->seq.pending.size() == 1) == (pass == 0))
        order.push_back(id);
  bool preempted = false;
  for (uint64_t id : order) {
    if (budget == 0)
      break;
    Served &r = *served_.at(id);
    if (!r.admitted) // preempted earlier in this loop
      continue;
    const int64_t count =
        std::min<int64_t>(budget, int64_t(r.seq.pending.size()));
    const int64_t need = blocksToGrow(r.seq, count);
    while (need > freeBlocks && r.admitted) {
      Served &victim = *served_.at(running_.back());
      if (std::find(planned.begin(), planned.end(), &victim) != planned.end())
        break; // planned ones keep their blocks; r waits for the next step
      // Blocks it shares with others (a cached prefix, or a twin's tokens)
      // stay taken.
      freeBlocks += pool_.exclusiveBlocks(victim.seq.id);
      preempt(victim);
      preempted = true;
    }
    if (!r.admitted || need > freeBlocks)
      continue;
    freeBlocks -= need;
    budget -= count;
    planned.push_back(&r);
    counts.push_back(count);
  }
  // Then waiting requests in order, while a slot, the budget and the pool
  // allow; the queue is not overtaken (a request that does not fit now
  // stops admission until it does), and a step that had to preempt admits
  // nobody.
  while (!preempted && !waiting_.empty() && budget > 0 &&
         int64_t(running_.size()) < serve_.maxRunning &&
         int64_t(planned.size()) < plan_.limits.maxBatch) {
    Served &r = *served_.at(waiting_.front());
    // Cached blocks of its first tokens (all but the last: a step must
    // compute at least one token to sample from).
    std::vector<int32_t> prefix;
    if (pool_.prefixCaching())
      prefix = pool_.matchPrefix(r.seq.pending.data(),
                                 int64_t(r.seq.pending.size()) - 1);
    const int64_t blockSize = std::max<int64_t>(1, pool_.blockSize());
    const int64_t reused = int64_t(prefix.size()) * blockSize;
    const int64_t count =
        std::min<int64_t>(budget, int64_t(r.seq.pending.size()) - reused);
    const int64_t need =
        plan_.kvCache.layers == 0
            ? 0
            : pool_.idleAmong(prefix) +
                  (reused + count + blockSize - 1) / blockSize -
                  int64_t(prefix.size());
    if (need > freeBlocks)
      break;
    if (plan_.kvCache.layers > 0)
      pool_.addSequence(r.seq.id, prefix);
    if (pool_.prefixCaching()) {
      serveCounters_.prefixQueryTokens += int64_t(r.seq.pending.size());
      serveCounters_.prefixHitTokens += reused;
    }
    r.seq.position = reused;
    r.seq.pending.erase(r.seq.pending.begin(), r.seq.pending.begin() + reused);
    if (!slots_.allocate(r.seq.slot, error) ||
        !backend_->resetState(r.seq.slot, error)) {
      stopServing();
      return false;
    }
    r.admitted = true;
    waiting_.pop_front();
    running_.push_back(r.id);
    freeBlocks -= need;
    budget -= count;
    planned.push_back(&r);
    counts.push_back(count);
  }
  if (planned.empty())
    return true;

  std::vector<Sequence *> batch;
  std::vector<StepSample> samples;
  bool anyEnds = false, anyPrompt = false, anyDecode = false;
  for (size_t b = 0; b < planned.size(); ++b) {
    Sequence &s = planned[b]->seq;
    batch.push_back(&s);
    anyEnds = anyEnds || counts[b] == int64_t(s.pending.size());
    const bool decoding = !planned[b]->result.tokens.empty() &&
                          s.pending.size() == 1 && s.position > 0;
    anyDecode = anyDecode || decoding;
    anyPrompt = anyPrompt || !decoding;
    if (!decoding)
      serveCounters_.promptTokens += counts[b];
  }
  // With a drafter, a decode-only step verifies what it proposes (when it
  // proposes anything).
  if (speculative() && !anyPrompt) {
    bool handled = false;
    if (!serveSpeculativeStep(planned, ended, handled, error))
      return false;
    if (handled)
      return true;
  }
  // A step samples when some sequence feeds its last pending token; the
  // others' draws are discarded (counter-based, so that changes nothing).
  if (anyEnds)
    for (Served *r : planned) {
      StepSample draw;
      draw.params = r->request.sampling;
      draw.seqId = 0;
      draw.step = uint64_t(r->seq.draws);
      samples.push_back(draw);
    }
  std::vector<bool> ends(planned.size());
  for (size_t b = 0; b < planned.size(); ++b)
    ends[b] = counts[b] == int64_t(planned[b]->seq.pending.size());
  std::vector<float> logits;
  std::vector<float> *keep = options_.keepLogits ? &logits : nullptr;
  std::vector<int32_t> tokens;
  if (!step(batch, counts, samples, tokens, keep, error)) {
    // The cache is in an unknown state: every request ends.
    stopServing();
    return false;
  }
  ++serveCounters_.steps;
  // Full blocks become cached for later prompts (before a finished
  // request releases them).
  for (Served *r : planned)
    registerServedBlocks(*r);
  if (anyPrompt && anyDecode)
    ++serveCounters_.mixedSteps;
  const int64_t vocab = plan_.vocabSize;
  for (size_t b = 0; b < planned.size(); ++b) {
    if (!ends[b])
      continue;
    Served &r = *planned[b];
    acceptToken(r.seq, r.request, r.result, tokens[b],
                keep ? logits.data() + b * vocab : nullptr);
    ++serveCounters_.generatedTokens;
    if (r.seq.done)
      finishServed(r, ended);
  }
  return true;
}

void Engine::finishServed(Served &r, std::vector<ServeResult> &ended) {
  releaseServed(r);
  running_.erase(std::find(running_.begin(), running_.end(), r.id));
  ended.push_back({r.id, false, std::move(r.result)});
  served_.erase(r.id); // r is gone from here on
}

} // namespace strata
