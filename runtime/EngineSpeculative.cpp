// Speculative decoding in Engine::generate (docs/speculative.md): a drafter
// (a draft engine, or prompt lookup in the sequence's own tokens) proposes
// a chain of tokens per sequence, the target scores the whole chain in one
// step of its verify program, keeps what greedy decoding or lossless
// speculative sampling accepts, and both caches are rolled back past the
// rest.
#include "runtime/Clock.h"
#include "runtime/Engine.h"
#include "runtime/PromptLookup.h"
#include "runtime/SpecSampling.h"

#include <algorithm>
#include <cmath>

namespace strata {

namespace {

/// The most tokens a drafter may propose per sequence and round: as a
/// chain, and as a tree (whose verify step holds the root too).
constexpr int64_t kMaxSpecTokens = 16;
constexpr int64_t kMaxTreeTokens = 63;
/// A tree's levels and children per node.
constexpr int64_t kMaxTreeDepth = 16;
constexpr int64_t kMaxBranching = 8;

/// Speculative sampling draws its uniforms from streams of its own (the
/// request's seed mixed with one of these), keyed by the index of the
/// generated token they decide: the draft's proposal, the acceptance test
/// and the draw from the residual (or from the model's distribution after
/// the last accepted proposal). Each (stream, index) pair decides at most
/// one kept token.
constexpr uint64_t kDraftDrawStream = 0x9d2c5680a3b1e4f7ull;
constexpr uint64_t kAcceptStream = 0x3c6ef372fe94f82bull;
constexpr uint64_t kResampleStream = 0xa54ff53a5f1d36f1ull;

} // namespace

bool Engine::checkSpeculation(int64_t tokens, std::string &error) const {
  if (speculative()) {
    error = "model '" + plan_.modelName +
            "' already has a drafter attached; speculative decoding takes "
            "one";
    return false;
  }
  if (tokens < 1 || tokens > kMaxSpecTokens) {
    error = "the drafter proposes 1 to " + std::to_string(kMaxSpecTokens) +
            " tokens per step, not " + std::to_string(tokens);
    return false;
  }
  if (!verify_) {
    error = "model '" + plan_.modelName +
            "': the plan has no 'verify' program, which scores the draft's "
            "tokens (compile it with --emit=fused)";
    return false;
  }
  if (plan_.linearState.layers > 0) {
    error = "model '" + plan_.modelName +
            "' has lightning-attention layers, whose state speculative "
            "decoding does not roll back yet";
    return false;
  }
  return true;
}

bool Engine::attachDraft(std::unique_ptr<Engine> draft, int64_t tokens,
                         std::string &error, const std::vector<int64_t> &tree) {
  if (!draft) {
    error = "no draft model";
    return false;
  }
  if (!tree.empty()) {
    if (int64_t(tree.size()) > kMaxTreeDepth) {
      error = "a token tree has 1 to " + std::to_string(kMaxTreeDepth) +
              " levels, not " + std::to_string(tree.size());
      return false;
    }
    for (int64_t branching : tree)
      if (branching < 1 || branching > kMaxBranching) {
        error = "a token tree branches into 1 to " +
                std::to_string(kMaxBranching) + " tokens per node, not " +
                std::to_string(branching);
        return false;
      }
    if (tokens < 1 || tokens > kMaxTreeTokens) {
      error = "a token tree has 1 to " + std::to_string(kMaxTreeTokens) +
              " tokens, not " + std::to_string(tokens);
      return false;
    }
    if (tree.size() > 1 && !draft->verify_) {
      error = "the draft model '" + draft->plan_.modelName +
              "' has no 'verify' program, which a token tree of more than "
              "one level needs (compile it with --emit=fused)";
      return false;
    }
  }
  // A tree's budget is checked above; the other checks apply as to chains.
  if (!checkSpeculation(tree.empty() ? tokens : 1, error))
    return false;
  if (draft->plan_.vocabSize != plan_.vocabSize) {
    error = "the draft model '" + draft->plan_.modelName + "' has a vocabulary "
            "of " + std::to_string(draft->plan_.vocabSize) + " tokens and "
            "model '" + plan_.modelName + "' one of " +
            std::to_string(plan_.vocabSize) +
            "; speculative decoding needs the same vocabulary";
    return false;
  }
  if (draft->plan_.linearState.layers > 0) {
    error = "model '" + draft->plan_.modelName +
            "' has lightning-attention layers, whose state speculative "
            "decoding does not roll back yet";
    return false;
  }
  if (draft->options_.device != options_.device) {
    error = "the draft model runs on another device than the model";
    return false;
  }
  if (draft->speculative()) {
    error = "the draft model has a drafter of its own";
    return false;
  }
  draft_ = std::move(draft);
  specTokens_ = tokens;
  specTree_ = tree;
  return true;
}

bool Engine::attachLookup(int64_t tokens, std::string &error) {
  if (!checkSpeculation(tokens, error))
    return false;
  lookup_ = true;
  specTokens_ = tokens;
  return true;
}

bool Engine::startDraft(const std::vector<GenerationRequest> &requests,
                        std::vector<Sequence> &draftSeqs, std::string &error) {
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
    const int64_t length =
        int64_t(req.prompt.size()) + req.maxNewTokens + treeSlack();
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

int32_t Engine::VerifyRows::best(int64_t t) const {
  return argmax.empty() ? int32_t(strata::argmax(row(t), vocab))
                        : argmax[size_t(t)];
}

bool Engine::verifyNeedsLogits(
    const std::vector<const GenerationRequest *> &requests) const {
  if (options_.keepLogits)
    return true;
  for (const GenerationRequest *r : requests)
    if (r->sampling.temperature != 0.0)
      return true;
  return false;
}

bool Engine::verifyStep(std::vector<Sequence *> &batch,
                        const std::vector<int64_t> &counts,
                        const std::vector<int32_t> &parents, bool wantLogits,
                        VerifyRows &out, std::string &error) {
  StepInputs in;
  if (!buildInputs(batch, counts, in, error))
    return false;
  // A tree per sequence: each token hangs from its parent among the
  // sequence's tokens of this step (-1: from the cached prefix), and its
  // position is the cached length plus its depth.
  in.parentIds = parents;
  int64_t first = 0;
  for (int64_t count : counts) {
    std::vector<int32_t> depth(size_t(count), 0);
    for (int64_t t = 0; t < count; ++t) {
      const int32_t parent = parents[size_t(first + t)];
      depth[size_t(t)] = parent < 0 ? 0 : depth[size_t(parent)] + 1;
      in.positions[size_t(first + t)] =
          in.positions[size_t(first)] + depth[size_t(t)];
    }
    first += count;
  }
  const int64_t vocab = plan_.vocabSize;
  out.vocab = vocab;
  out.logits.clear();
  out.argmax.clear();
  if (!wantLogits) {
    // As a greedy decode step: the device picks, the logits stay there.
    if (!backend_->stepArgmax(*verify_, in, out.argmax, error))
      return false;
    advance(batch, counts);
    return true;
  }
  std::vector<float> &rows = out.logits;
  if (!backend_->stepLogits(*verify_, in, rows, error))
    return false;
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

bool Engine::syncDraft(size_t i, int64_t kept,
                       const std::vector<const GenerationRequest *> &requests,
                       const std::vector<GenerationResult> &results,
                       std::string &error) {
  if (!draft_)
    return true;
  Sequence &ds = (*draftRun_)[i];
  if (ds.position > kept && !draft_->rollBack(ds, kept, error)) {
    error = "the draft model: " + error;
    return false;
  }
  const std::vector<int32_t> &prompt = requests[i]->prompt;
  ds.pending.clear();
  for (int64_t p = ds.position; p <= kept; ++p)
    ds.pending.push_back(
        p < int64_t(prompt.size())
            ? prompt[size_t(p)]
            : results[i].tokens[size_t(p - int64_t(prompt.size()))]);
  return true;
}

int64_t Engine::acceptChain(Sequence &s, const GenerationRequest &req,
                            GenerationResult &result, const VerifyRows &rows,
                            int64_t first,
                            const std::vector<int32_t> &proposed,
                            const std::vector<std::vector<double>> &drawnFrom,
                            uint64_t streamId) const {
  const int64_t vocab = plan_.vocabSize;
  const int64_t n = int64_t(proposed.size());
  const int64_t index0 = int64_t(result.tokens.size());
  const bool sampled = req.sampling.temperature != 0.0;
  std::vector<double> p;
  // Greedy: proposals are kept while each is the target's argmax, then
  // the target's own token follows. Sampling: each proposal passes the
  // acceptance test or is replaced by a draw from the residual, and after
  // a run of accepted ones the target draws the next token itself.
  int64_t accepted = 0;
  for (int64_t e = 0; e <= n && !s.done; ++e) {
    const float *at = rows.row(first + e);
    int32_t token = 0;
    bool kept = false;
    if (!sampled) {
      token = rows.best(first + e);
      kept = e < n && token == proposed[size_t(e)];
    } else {
      samplingDistribution(at, vocab, req.sampling, p);
      const double resample =
          specUniform(req.sampling, kResampleStream, streamId,
                      uint64_t(index0 + e));
      if (e < n) {
        const SpecVerdict verdict = judgeProposal(
            p, drawnFrom.empty() ? nullptr : &drawnFrom[size_t(e)],
            proposed[size_t(e)],
            specUniform(req.sampling, kAcceptStream, streamId,
                        uint64_t(index0 + e)),
            resample);
        token = verdict.token;
        kept = verdict.accepted;
      } else {
        token = drawFrom(p, resample);
      }
    }
    acceptToken(s, req, result, token, options_.keepLogits ? at : nullptr);
    if (!kept)
      break;
    ++accepted;
  }
  return accepted;
}

bool Engine::speculativeDecode(
    std::vector<Sequence *> &seqs,
    const std::vector<const GenerationRequest *> &requests,
    std::vector<GenerationResult> &results, GenerationTimings &timings,
    std::string &error) {
  Engine *d = draft_.get();
  const int64_t vocab = plan_.vocabSize;
  // A round of a group: at most specTokens_ + 1 tokens per sequence in the
  // verify step, and one or two (a catch-up) in each draft step.
  int64_t maxBatch = plan_.limits.maxBatch;
  int64_t maxTokens = plan_.limits.maxTokens;
  if (d) {
    maxBatch = std::min(maxBatch, d->plan_.limits.maxBatch);
    maxTokens = std::min(maxTokens, d->plan_.limits.maxTokens);
  }
  const int64_t perSeq = std::max<int64_t>(specTokens_ + 1, 2);
  const int64_t groupSize =
      std::max<int64_t>(1, std::min(maxBatch, maxTokens / perSeq));
  auto catchUp = [&](size_t i, int64_t kept) {
    return syncDraft(i, kept, requests, results, error);
  };
  // The draft has taken in the prompts; it feeds the first generated
  // token (the target's pending one) in its first round.
  for (size_t i = 0; i < seqs.size(); ++i)
    if (!seqs[i]->done && !catchUp(i, seqs[i]->position))
      return false;
  std::vector<float> logits;
  std::vector<float> *keep = options_.keepLogits ? &logits : nullptr;
  std::vector<int32_t> tokens;
  VerifyRows rows;
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
      for (size_t g = 0; g < group.size(); ++g) {
        const size_t i = group[g];
        const int64_t left = requests[i]->maxNewTokens - seqs[i]->generated;
        k[g] = std::clamp<int64_t>(left - 1, 0, specTokens_);
      }
      if (!specTree_.empty()) {
        if (!treeRound(seqs, group, requests, results, timings, error))
          return false;
        continue;
      }
      std::vector<std::vector<int32_t>> proposals(group.size());
      // Per proposal of a sampled request, the draft's distribution it was
      // drawn from (prompt lookup proposes for certain: none).
      std::vector<std::vector<std::vector<double>>> drawnFrom(group.size());
      const double draftStart = secondsNow();
      if (d) {
        std::vector<DraftChain> chains;
        for (size_t g = 0; g < group.size(); ++g) {
          const size_t i = group[g];
          Sequence &ds = (*draftRun_)[i];
          chains.push_back({&ds, requests[i], k[g],
                            int64_t(results[i].tokens.size()),
                            uint64_t(ds.id)});
        }
        if (!draftChains(chains, proposals, drawnFrom, timings, error))
          return false;
      } else {
        for (size_t g = 0; g < group.size(); ++g) {
          const size_t i = group[g];
          std::vector<int32_t> context = requests[i]->prompt;
          context.insert(context.end(), results[i].tokens.begin(),
                         results[i].tokens.end());
          proposals[g] = lookupProposals(context, k[g]);
        }
      }
      timings.draftSeconds += secondsNow() - draftStart;

      std::vector<Sequence *> batch;
      std::vector<int64_t> counts;
      for (size_t i : group)
        batch.push_back(seqs[i]);
      const bool anyProposal =
          std::any_of(proposals.begin(), proposals.end(),
                      [](const std::vector<int32_t> &v) { return !v.empty(); });
      if (!anyProposal) {
        // Nothing to verify (no lookup matched, or one token is left):
        // a plain decode step.
        std::vector<StepSample> samples;
        for (size_t i : group) {
          StepSample draw;
          draw.params = requests[i]->sampling;
          draw.seqId = uint64_t(seqs[i]->id);
          draw.step = uint64_t(seqs[i]->draws);
          samples.push_back(draw);
        }
        if (!step(batch, std::vector<int64_t>(batch.size(), 1), samples,
                  tokens, keep, error))
          return false;
        ++timings.decodeSteps;
        for (size_t g = 0; g < group.size(); ++g) {
          const size_t i = group[g];
          acceptToken(*seqs[i], *requests[i], results[i], tokens[g],
                      keep ? logits.data() + g * vocab : nullptr);
          if (!seqs[i]->done && !catchUp(i, seqs[i]->position))
            return false;
        }
        continue;
      }

      // The target scores its pending token and the proposals as a chain.
      const double verifyStart = secondsNow();
      std::vector<int64_t> before;
      for (size_t g = 0; g < group.size(); ++g) {
        Sequence &s = *seqs[group[g]];
        before.push_back(s.position);
        s.pending.insert(s.pending.end(), proposals[g].begin(),
                         proposals[g].end());
        counts.push_back(int64_t(s.pending.size()));
      }
      std::vector<int32_t> chain;
      for (int64_t count : counts)
        for (int64_t t = 0; t < count; ++t)
          chain.push_back(int32_t(t - 1));
      std::vector<const GenerationRequest *> judged;
      for (size_t i : group)
        judged.push_back(requests[i]);
      if (!verifyStep(batch, counts, chain, verifyNeedsLogits(judged), rows,
                      error))
        return false;
      timings.verifySeconds += secondsNow() - verifyStart;
      ++timings.verifySteps;
      ++timings.decodeSteps;

      int64_t row = 0;
      for (size_t g = 0; g < group.size(); ++g) {
        const size_t i = group[g];
        Sequence &s = *seqs[i];
        const GenerationRequest &req = *requests[i];
        const std::vector<int32_t> &proposed = proposals[g];
        const int64_t n = int64_t(proposed.size());
        const int64_t accepted =
            acceptChain(s, req, results[i], rows, row, proposed, drawnFrom[g],
                        uint64_t(s.id));
        row += counts[g];
        timings.proposedTokens += n;
        timings.acceptedTokens += accepted;
        ++timings.verifiedSequences;
        if (s.done)
          continue;
        // Both caches keep the pending token and the accepted proposals.
        const int64_t kept = before[g] + accepted + 1;
        if (!rollBack(s, kept, error) || !catchUp(i, kept))
          return false;
      }
    }
  }
  timings.decodeSeconds = secondsNow() - start;
  return true;
}

bool Engine::draftChains(
    const std::vector<DraftChain> &chains,
    std::vector<std::vector<int32_t>> &proposals,
    std::vector<std::vector<std::vector<double>>> &drawnFrom,
    GenerationTimings &timings, std::string &error) {
  Engine &d = *draft_;
  const int64_t vocab = plan_.vocabSize;
  int64_t rounds = 0;
  for (const DraftChain &c : chains)
    rounds = std::max(rounds, c.tokens);
  std::vector<int32_t> tokens;
  std::vector<float> rows;
  for (int64_t r = 0; r < rounds; ++r) {
    std::vector<size_t> live;
    for (size_t c = 0; c < chains.size(); ++c)
      if (chains[c].tokens > r)
        live.push_back(c);
    for (size_t first = 0; first < live.size();) {
      std::vector<Sequence *> batch;
      std::vector<int64_t> counts;
      std::vector<StepSample> samples;
      std::vector<size_t> which;
      bool anySampled = false;
      int64_t budget = d.plan_.limits.maxTokens;
      for (; first < live.size() &&
             int64_t(batch.size()) < d.plan_.limits.maxBatch;
           ++first) {
        const DraftChain &c = chains[live[first]];
        const int64_t count = int64_t(c.draft->pending.size());
        if (count > budget)
          break;
        budget -= count;
        batch.push_back(c.draft);
        counts.push_back(count);
        // The device picks greedy proposals; sampled ones are drawn below
        // from the logits, whose distribution the acceptance test needs.
        StepSample draw;
        draw.seqId = uint64_t(c.draft->id);
        draw.step = uint64_t(c.draft->draws);
        samples.push_back(draw);
        which.push_back(live[first]);
        anySampled |= c.request->sampling.temperature != 0.0;
      }
      if (batch.empty()) {
        error = "the draft model: a sequence's catch-up of " +
                std::to_string(chains[live[first]].draft->pending.size()) +
                " tokens exceeds its plan's " +
                std::to_string(d.plan_.limits.maxTokens) +
                " tokens per step";
        return false;
      }
      if (!d.step(batch, counts, samples, tokens,
                  anySampled ? &rows : nullptr, error)) {
        error = "the draft model: " + error;
        return false;
      }
      for (size_t b = 0; b < batch.size(); ++b) {
        const size_t c = which[b];
        const GenerationRequest &req = *chains[c].request;
        int32_t token = tokens[b];
        if (req.sampling.temperature != 0.0) {
          std::vector<double> q;
          samplingDistribution(rows.data() + int64_t(b) * vocab, vocab,
                               req.sampling, q);
          token = drawFrom(q, specUniform(req.sampling, kDraftDrawStream,
                                          chains[c].streamId,
                                          uint64_t(chains[c].index0 + r)));
          drawnFrom[c].push_back(std::move(q));
        }
        batch[b]->pending = {token};
        ++batch[b]->draws;
        proposals[c].push_back(token);
      }
      ++timings.draftSteps;
    }
  }
  return true;
}

} // namespace strata
