// Speculative decoding in the serving loop (docs/speculative.md, "Serving"):
// with a drafter attached (prompt lookup or a draft model), a step in which
// every planned sequence decodes becomes a verify step of each sequence's
// pending token and the tokens its drafter proposes.
#include "runtime/Engine.h"
#include "runtime/PromptLookup.h"

#include <algorithm>

namespace strata {

void Engine::registerServedBlocks(Served &r) {
  if (!pool_.prefixCaching())
    return;
  const int64_t first = pool_.firstUnregistered(r.seq.id);
  if (r.seq.position - first < pool_.blockSize())
    return;
  std::vector<int32_t> tokens;
  for (int64_t p = first; p < r.seq.position; ++p)
    tokens.push_back(servedToken(r, p));
  pool_.registerFullBlocks(r.seq.id, tokens.data(), first);
}

void Engine::releaseServedDraft(Served &r) {
  if (!r.drafting)
    return;
  if (draft_->plan_.kvCache.layers > 0)
    draft_->pool_.release(r.draft.id);
  draft_->slots_.release(r.draft.slot);
  r.draft = Sequence{};
  r.drafting = false;
}

bool Engine::serveDraftProposals(
    const std::vector<Served *> &planned, const std::vector<int64_t> &k,
    std::vector<std::vector<int32_t>> &proposals,
    std::vector<std::vector<std::vector<double>>> &drawnFrom,
    std::string &error) {
  Engine &d = *draft_;
  const bool cached = d.plan_.kvCache.layers > 0;
  int64_t freeBlocks = d.pool_.freeBlocks();
  std::vector<DraftChain> chains;
  std::vector<size_t> chainOf;
  std::vector<Sequence *> feed;
  std::vector<int32_t> last;
  for (size_t b = 0; b < planned.size(); ++b) {
    Served &r = *planned[b];
    if (k[b] == 0)
      continue;
    // The draft writes up to the position of its last fed proposal; a
    // draft of fewer positions than the model stops proposing there.
    if (r.seq.position + k[b] > d.plan_.maxPositions) {
      releaseServedDraft(r);
      continue;
    }
    Sequence &ds = r.draft;
    if (!r.drafting) {
      ds = Sequence{};
      ds.id = r.seq.id;
      if (!d.slots_.allocate(ds.slot, error)) {
        error.clear();
        continue;
      }
      if (cached)
        d.pool_.addSequence(ds.id);
      r.drafting = true;
    }
    // What the draft cached past the model's tokens was a rejected
    // proposal; what it lacks, up to the model's pending token, it takes
    // in now.
    if (ds.position > r.seq.position && !d.rollBack(ds, r.seq.position, error))
      return false;
    ds.pending.clear();
    for (int64_t p = ds.position; p < r.seq.position; ++p)
      ds.pending.push_back(servedToken(r, p));
    ds.pending.push_back(r.seq.pending.front());
    const int64_t need =
        d.blocksToGrow(ds, int64_t(ds.pending.size()) + k[b] - 1);
    if (need > freeBlocks) {
      releaseServedDraft(r);
      continue;
    }
    freeBlocks -= need;
    last.push_back(ds.pending.back());
    ds.pending.pop_back();
    feed.push_back(&ds);
    chains.push_back({&ds, &r.request, k[b],
                      int64_t(r.result.tokens.size()), 0});
    chainOf.push_back(b);
  }
  if (chains.empty())
    return true;
  // The catch-up first (a whole prompt after admission, in chunks), so
  // that each chain then drafts from one token per step.
  if (!d.feedPending(feed, error)) {
    error = "the draft model: " + error;
    return false;
  }
  for (size_t c = 0; c < chains.size(); ++c)
    chains[c].draft->pending = {last[c]};
  std::vector<std::vector<int32_t>> drafted(chains.size());
  std::vector<std::vector<std::vector<double>>> drawn(chains.size());
  GenerationTimings timings;
  if (!draftChains(chains, drafted, drawn, timings, error))
    return false;
  for (size_t c = 0; c < chains.size(); ++c) {
    proposals[chainOf[c]] = std::move(drafted[c]);
    drawnFrom[chainOf[c]] = std::move(drawn[c]);
  }
  return true;
}

bool Engine::serveSpeculativeStep(const std::vector<Served *> &planned,
                                  std::vector<ServeResult> &ended,
                                  bool &handled, std::string &error) {
  handled = false;
  // How many tokens each sequence may have proposed: within what is left
  // of the step's tokens and of the pool (the plan reserved one token's
  // blocks per sequence).
  int64_t freeBlocks = pool_.freeBlocks();
  int64_t budget =
      std::min(serve_.stepTokens, plan_.limits.maxTokens) -
      int64_t(planned.size());
  for (const Served *r : planned)
    freeBlocks -= blocksToGrow(r->seq, 1);
  std::vector<int64_t> k(planned.size());
  for (size_t b = 0; b < planned.size(); ++b) {
    const Served &r = *planned[b];
    const int64_t left = r.request.maxNewTokens - r.seq.generated;
    k[b] = std::min(budget, std::clamp<int64_t>(left - 1, 0, specTokens_));
    const int64_t own = blocksToGrow(r.seq, 1);
    while (k[b] > 0 && blocksToGrow(r.seq, 1 + k[b]) - own > freeBlocks)
      --k[b];
    freeBlocks -= blocksToGrow(r.seq, 1 + k[b]) - own;
    budget -= k[b];
  }
  std::vector<std::vector<int32_t>> proposals(planned.size());
  std::vector<std::vector<std::vector<double>>> drawnFrom(planned.size());
  if (draft_) {
    if (!serveDraftProposals(planned, k, proposals, drawnFrom, error)) {
      // The draft's cache is in an unknown state: every request ends.
      stopServing();
      return false;
    }
  } else {
    for (size_t b = 0; b < planned.size(); ++b) {
      const Served &r = *planned[b];
      std::vector<int32_t> context = r.request.prompt;
      context.insert(context.end(), r.result.tokens.begin(),
                     r.result.tokens.end());
      proposals[b] = lookupProposals(context, k[b]);
    }
  }
  const bool any =
      std::any_of(proposals.begin(), proposals.end(),
                  [](const std::vector<int32_t> &v) { return !v.empty(); });
  if (!any)
    return true;
  handled = true;

  std::vector<Sequence *> batch;
  std::vector<int64_t> counts, before;
  std::vector<int32_t> parents;
  for (size_t b = 0; b < planned.size(); ++b) {
    Sequence &s = planned[b]->seq;
    before.push_back(s.position);
    s.pending.insert(s.pending.end(), proposals[b].begin(),
                     proposals[b].end());
    batch.push_back(&s);
    counts.push_back(int64_t(s.pending.size()));
    for (int64_t t = 0; t < counts.back(); ++t)
      parents.push_back(int32_t(t - 1));
  }
  std::vector<const GenerationRequest *> judged;
  for (Served *r : planned)
    judged.push_back(&r->request);
  VerifyRows rows;
  if (!verifyStep(batch, counts, parents, verifyNeedsLogits(judged), rows,
                  error)) {
    // The cache is in an unknown state: every request ends.
    stopServing();
    return false;
  }
  ++serveCounters_.steps;
  ++serveCounters_.verifySteps;
  int64_t row = 0;
  for (size_t b = 0; b < planned.size(); ++b) {
    Served &r = *planned[b];
    const size_t had = r.result.tokens.size();
    // Served draws do not depend on the request's id (stream 0), as the
    // plain steps' do not.
    const int64_t accepted = acceptChain(r.seq, r.request, r.result, rows,
                                         row, proposals[b], drawnFrom[b], 0);
    row += counts[b];
    serveCounters_.proposedTokens += int64_t(proposals[b].size());
    serveCounters_.acceptedTokens += accepted;
    serveCounters_.generatedTokens += int64_t(r.result.tokens.size() - had);
    if (!r.seq.done) {
      if (!rollBack(r.seq, before[b] + accepted + 1, error)) {
        stopServing();
        return false;
      }
      registerServedBlocks(r);
      continue;
    }
    registerServedBlocks(r);
    finishServed(r, ended);
  }
  return true;
}

} // namespace strata
