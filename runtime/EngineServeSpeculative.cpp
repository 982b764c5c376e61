// Speculative decoding in the serving loop (docs/speculative.md, "Serving"):
// with prompt lookup attached, a step in which every planned sequence
// decodes becomes a verify step of each sequence's pending token and the
// tokens its lookup proposes.
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

bool Engine::serveLookupStep(const std::vector<Served *> &planned,
                             std::vector<ServeResult> &ended, bool &handled,
                             std::string &error) {
  handled = false;
  // Proposals within what is left of the step's tokens and of the pool
  // (the plan reserved one token's blocks per sequence).
  int64_t freeBlocks = pool_.freeBlocks();
  int64_t budget =
      std::min(serve_.stepTokens, plan_.limits.maxTokens) -
      int64_t(planned.size());
  for (const Served *r : planned)
    freeBlocks -= blocksToGrow(r->seq, 1);
  std::vector<std::vector<int32_t>> proposals(planned.size());
  bool any = false;
  for (size_t b = 0; b < planned.size(); ++b) {
    const Served &r = *planned[b];
    const int64_t left = r.request.maxNewTokens - r.seq.generated;
    const int64_t k =
        std::min(budget, std::clamp<int64_t>(left - 1, 0, specTokens_));
    std::vector<int32_t> context = r.request.prompt;
    context.insert(context.end(), r.result.tokens.begin(),
                   r.result.tokens.end());
    std::vector<int32_t> &proposed = proposals[b];
    proposed = lookupProposals(context, k);
    const int64_t own = blocksToGrow(r.seq, 1);
    while (!proposed.empty() &&
           blocksToGrow(r.seq, 1 + int64_t(proposed.size())) - own >
               freeBlocks)
      proposed.pop_back();
    freeBlocks -= blocksToGrow(r.seq, 1 + int64_t(proposed.size())) - own;
    budget -= int64_t(proposed.size());
    any = any || !proposed.empty();
  }
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
                                         row, proposals[b], {}, 0);
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
