// Speculative decoding in Engine::generate (docs/speculative.md): a draft
// engine proposes a chain of tokens per sequence, the target scores the
// whole chain in one step of its verify program, and both caches are
// rolled back past what the target did not accept.
#include "runtime/Clock.h"
#include "runtime/Engine.h"

#include <algorithm>
#include <cmath>

namespace strata {

namespace {

/// The most tokens a draft may propose per sequence and round.
constexpr int64_t kMaxSpecTokens = 16;

} // namespace

bool Engine::attachDraft(std::unique_ptr<Engine> draft, int64_t tokens,
                         std::string &error) {
  if (!draft) {
    error = "no draft model";
    return false;
  }
  if (tokens < 1 || tokens > kMaxSpecTokens) {
    error = "the draft proposes 1 to " + std::to_string(kMaxSpecTokens) +
            " tokens per step, not " + std::to_string(tokens);
    return false;
  }
  if (!verify_) {
    error = "model '" + plan_.modelName +
            "': the plan has no 'verify' program, which scores the draft's "
            "tokens (compile it with --emit=fused)";
    return false;
  }
  if (draft->plan_.vocabSize != plan_.vocabSize) {
    error = "the draft model '" + draft->plan_.modelName + "' has a vocabulary "
            "of " + std::to_string(draft->plan_.vocabSize) + " tokens and "
            "model '" + plan_.modelName + "' one of " +
            std::to_string(plan_.vocabSize) +
            "; speculative decoding needs the same vocabulary";
    return false;
  }
  for (const Engine *e : {static_cast<const Engine *>(this),
                          static_cast<const Engine *>(draft.get())})
    if (e->plan_.linearState.layers > 0) {
      error = "model '" + e->plan_.modelName +
              "' has lightning-attention layers, whose state speculative "
              "decoding does not roll back yet";
      return false;
    }
  if (draft->options_.device != options_.device) {
    error = "the draft model runs on another device than the model";
    return false;
  }
  if (draft->draft_) {
    error = "the draft model has a draft of its own";
    return false;
  }
  draft_ = std::move(draft);
  specTokens_ = tokens;
  return true;
}

bool Engine::startDraft(const std::vector<GenerationRequest> &requests,
                        std::vector<Sequence> &draftSeqs, std::string &error) {
  for (size_t r = 0; r < requests.size(); ++r)
    if (requests[r].sampling.temperature != 0.0) {
      error = "request " + std::to_string(r) +
              ": speculative decoding samples greedily (temperature 0) "
              "only so far";
      return false;
    }
  Engine &d = *draft_;
  for (size_t r = 0; r < requests.size(); ++r)
    if (!d.checkRequest(requests[r], r, 0, d.plan_.maxPositions, error)) {
      error = "the draft model: " + error;
      return false;
    }
  // Every request at full length, as for the target.
  const int64_t blockSize = std::max<int64_t>(1, d.plan_.kvCache.blockSize);
  int64_t needed = 0, maxContext = 1;
  for (const GenerationRequest &req : requests) {
    const int64_t length = int64_t(req.prompt.size()) + req.maxNewTokens;
    needed += (length + blockSize - 1) / blockSize;
    maxContext = std::max(maxContext, length);
  }
  const int64_t blocks =
      d.options_.kvBlocks ? std::max(d.options_.kvBlocks, needed) : needed;
  if (!d.prepareStorage(blocks, int64_t(requests.size()), maxContext, error)) {
    error = "the draft model: " + error;
    return false;
  }
  draftSeqs.assign(requests.size(), {});
  std::vector<Sequence *> all;
  for (size_t r = 0; r < requests.size(); ++r) {
    Sequence &s = draftSeqs[r];
    s.id = int64_t(r);
    s.pending = requests[r].prompt;
    d.pool_.addSequence(s.id);
    if (!d.slots_.allocate(s.slot, error))
      return false;
    all.push_back(&s);
  }
  if (!d.feedPending(all, error)) {
    error = "the draft model: " + error;
    return false;
  }
  return true;
}

bool Engine::feedPending(std::vector<Sequence *> &seqs, std::string &error) {
  const int64_t maxTokens = plan_.limits.maxTokens;
  const int64_t maxBatch = plan_.limits.maxBatch;
  std::vector<int32_t> unused;
  while (true) {
    std::vector<Sequence *> batch;
    std::vector<int64_t> counts;
    int64_t budget = maxTokens;
    for (Sequence *s : seqs) {
      if (s->pending.empty())
        continue;
      if (budget == 0 || int64_t(batch.size()) == maxBatch)
        break;
      const int64_t chunk = std::min<int64_t>(budget, s->pending.size());
      batch.push_back(s);
      counts.push_back(chunk);
      budget -= chunk;
    }
    if (batch.empty())
      return true;
    if (!step(batch, counts, {}, unused, nullptr, error))
      return false;
  }
}

bool Engine::rollBack(Sequence &s, int64_t length, std::string &error) {
  if (plan_.kvCache.layers > 0 && !pool_.truncate(s.id, length, error))
    return false;
  s.position = length;
  return true;
}

bool Engine::verifyStep(std::vector<Sequence *> &batch,
                        const std::vector<int64_t> &counts,
                        std::vector<float> &rows, std::string &error) {
  StepInputs in;
  if (!buildInputs(batch, counts, in, error))
    return false;
  // A chain: each token's parent is the one before it, the first hangs
  // from the cached prefix; positions are the cached length plus depth,
  // as buildInputs set them.
  for (int64_t count : counts)
    for (int64_t t = 0; t < count; ++t)
      in.parentIds.push_back(int32_t(t - 1));
  if (!backend_->stepLogits(*verify_, in, rows, error))
    return false;
  const int64_t vocab = plan_.vocabSize;
  if (int64_t(rows.size()) != in.numTokens() * vocab) {
    error = "the verify program returned " + std::to_string(rows.size()) +
            " logits for " + std::to_string(in.numTokens()) +
            " tokens; it must keep every token's (all-token logits)";
    return false;
  }
  for (size_t i = 0; i < rows.size(); ++i)
    if (!std::isfinite(rows[i])) {
      error = "step " + std::to_string(stepCount_) +
              " (verify): a logit is " +
              (std::isnan(rows[i]) ? "NaN" : "infinite") + " at token " +
              std::to_string(int64_t(i) % vocab);
      return false;
    }
  advance(batch, counts);
  return true;
}

bool Engine::speculativeDecode(
    std::vector<Sequence *> &seqs,
    const std::vector<const GenerationRequest *> &requests,
    std::vector<GenerationResult> &results, GenerationTimings &timings,
    std::string &error) {
  std::vector<Sequence> &drafts = *draftRun_;
  Engine &d = *draft_;
  const int64_t vocab = plan_.vocabSize;
  // A round of a group: at most specTokens_ + 1 tokens per sequence in the
  // verify step, and one or two (a catch-up) in each draft step.
  const int64_t maxBatch = std::min(plan_.limits.maxBatch,
                                    d.plan_.limits.maxBatch);
  const int64_t perSeq = std::max<int64_t>(specTokens_ + 1, 2);
  const int64_t maxTokens = std::min(plan_.limits.maxTokens,
                                     d.plan_.limits.maxTokens);
  const int64_t groupSize =
      std::max<int64_t>(1, std::min(maxBatch, maxTokens / perSeq));
  // Token p of sequence i: its prompt, then what it generated.
  auto tokenAt = [&](size_t i, int64_t p) {
    const std::vector<int32_t> &prompt = requests[i]->prompt;
    return p < int64_t(prompt.size())
               ? prompt[size_t(p)]
               : results[i].tokens[size_t(p - int64_t(prompt.size()))];
  };
  // The draft has taken in the prompts; it feeds the first generated
  // token (the target's pending one) in its first round.
  for (size_t i = 0; i < seqs.size(); ++i)
    if (!seqs[i]->done)
      for (int64_t p = drafts[i].position; p <= seqs[i]->position; ++p)
        drafts[i].pending.push_back(tokenAt(i, p));
  std::vector<int32_t> tokens;
  std::vector<float> rows;
  const double start = secondsNow();
  while (true) {
    std::vector<size_t> live;
    for (size_t i = 0; i < seqs.size(); ++i)
      if (!seqs[i]->done)
        live.push_back(i);
    if (live.empty())
      break;
    for (size_t first = 0; first < live.size(); first += size_t(groupSize)) {
      const std::vector<size_t> group(
          live.begin() + first,
          live.begin() + std::min(live.size(), first + size_t(groupSize)));
      // Each sequence drafts what it may still keep: the verify step adds
      // the target's own token after the accepted ones.
      std::vector<int64_t> k(group.size());
      int64_t rounds = 0;
      for (size_t g = 0; g < group.size(); ++g) {
        const size_t i = group[g];
        const int64_t left = requests[i]->maxNewTokens - seqs[i]->generated;
        k[g] = std::clamp<int64_t>(left - 1, 0, specTokens_);
        rounds = std::max(rounds, k[g]);
      }
      std::vector<std::vector<int32_t>> proposals(group.size());
      const double draftStart = secondsNow();
      for (int64_t r = 0; r < rounds; ++r) {
        std::vector<Sequence *> batch;
        std::vector<int64_t> counts;
        std::vector<StepSample> samples;
        std::vector<size_t> which;
        for (size_t g = 0; g < group.size(); ++g) {
          if (k[g] <= r)
            continue;
          Sequence &ds = drafts[group[g]];
          batch.push_back(&ds);
          counts.push_back(int64_t(ds.pending.size()));
          StepSample draw; // greedy
          draw.seqId = uint64_t(ds.id);
          draw.step = uint64_t(ds.draws);
          samples.push_back(draw);
          which.push_back(g);
        }
        if (!d.step(batch, counts, samples, tokens, nullptr, error)) {
          error = "the draft model: " + error;
          return false;
        }
        for (size_t b = 0; b < batch.size(); ++b) {
          batch[b]->pending = {tokens[b]};
          ++batch[b]->draws;
          proposals[which[b]].push_back(tokens[b]);
        }
        ++timings.draftSteps;
      }
      timings.draftSeconds += secondsNow() - draftStart;

      // The target scores its pending token and the proposals as a chain.
      const double verifyStart = secondsNow();
      std::vector<Sequence *> batch;
      std::vector<int64_t> counts;
      std::vector<int64_t> before;
      for (size_t g = 0; g < group.size(); ++g) {
        Sequence &s = *seqs[group[g]];
        before.push_back(s.position);
        s.pending.insert(s.pending.end(), proposals[g].begin(),
                         proposals[g].end());
        batch.push_back(&s);
        counts.push_back(int64_t(s.pending.size()));
      }
      if (!verifyStep(batch, counts, rows, error))
        return false;
      timings.verifySeconds += secondsNow() - verifyStart;
      ++timings.verifySteps;
      ++timings.decodeSteps;

      int64_t row = 0;
      for (size_t g = 0; g < group.size(); ++g) {
        const size_t i = group[g];
        Sequence &s = *seqs[i];
        const float *base = rows.data() + row * vocab;
        row += counts[g];
        // The longest run of proposals the target's argmax agrees with,
        // then the target's own token after it.
        int64_t accepted = 0;
        while (accepted < k[g] &&
               argmax(base + accepted * vocab, vocab) ==
                   proposals[g][size_t(accepted)])
          ++accepted;
        timings.proposedTokens += k[g];
        timings.acceptedTokens += accepted;
        ++timings.verifiedSequences;
        for (int64_t e = 0; e <= accepted && !s.done; ++e) {
          const float *at = base + e * vocab;
          const int32_t token = e < accepted ? proposals[g][size_t(e)]
                                             : int32_t(argmax(at, vocab));
          acceptToken(s, *requests[i], results[i], token,
                      options_.keepLogits ? at : nullptr);
        }
        if (s.done)
          continue;
        // Both caches keep the pending token and the accepted proposals:
        // the target's drops what it verified past them; the draft feeds
        // next whatever of them it has not cached, and the new token.
        const int64_t kept = before[g] + accepted + 1;
        if (!rollBack(s, kept, error))
          return false;
        Sequence &ds = drafts[i];
        if (ds.position > kept && !d.rollBack(ds, kept, error)) {
          error = "the draft model: " + error;
          return false;
        }
        ds.pending.clear();
        for (int64_t p = ds.position; p <= kept; ++p)
          ds.pending.push_back(tokenAt(i, p));
      }
    }
  }
  timings.decodeSeconds = secondsNow() - start;
  return true;
}

} // namespace strata
