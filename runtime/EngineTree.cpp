// Token trees for speculative decoding (docs/speculative.md, "Trees"): the
// draft proposes the top few tokens at each depth of a tree (the shape of
// Engine::attachDraft's `tree`), the target verifies the whole tree in one
// step, the longest path it accepts is kept, and its keys and values are
// moved down to follow the sequence's cached prefix (paged-cache
// compaction) before the rest is released.
#include "runtime/Clock.h"
#include "runtime/Engine.h"
#include "runtime/SpecSampling.h"

#include <algorithm>
#include <cmath>

namespace strata {

namespace {

/// A drafted tree node; `parent` indexes the tree's nodes (-1: the root,
/// the sequence's pending token).
struct TreeNode {
  int32_t token = 0;
  int32_t parent = -1;
  int32_t depth = 1;
  /// log of the draft's probability of the path from the root.
  double logProb = 0.0;
};

/// The draft's `count` most likely tokens after `logits` [vocab], with
/// their log probabilities (softmax at temperature 1), best first, ties to
/// the lower id.
std::vector<std::pair<int32_t, double>> topTokens(const float *logits,
                                                  int64_t vocab,
                                                  int64_t count) {
  std::vector<int32_t> ids(static_cast<size_t>(vocab));
  for (int64_t v = 0; v < vocab; ++v)
    ids[size_t(v)] = int32_t(v);
  count = std::min(count, vocab);
  std::partial_sort(ids.begin(), ids.begin() + count, ids.end(),
                    [&](int32_t a, int32_t b) {
                      return logits[a] > logits[b] ||
                             (logits[a] == logits[b] && a < b);
                    });
  const double top = logits[ids[0]];
  double total = 0.0;
  for (int64_t v = 0; v < vocab; ++v)
    total += std::exp(double(logits[v]) - top);
  std::vector<std::pair<int32_t, double>> out;
  for (int64_t k = 0; k < count; ++k)
    out.push_back({ids[size_t(k)],
                   double(logits[ids[size_t(k)]]) - top - std::log(total)});
  return out;
}

/// Adds the children `candidates` (parent, token, path log probability)
/// to `tree`, the most likely first, while `budget` nodes remain.
void keepBest(std::vector<TreeNode> &tree,
              std::vector<TreeNode> candidates, int64_t budget) {
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const TreeNode &a, const TreeNode &b) {
                     return a.logProb > b.logProb;
                   });
  for (const TreeNode &c : candidates) {
    if (int64_t(tree.size()) >= budget)
      break;
    tree.push_back(c);
  }
}

// Speculative sampling's uniforms for trees: the acceptance test of the
// j-th child of a node, and the draw after the last accepted one, keyed by
// the index of the generated token they decide.
constexpr uint64_t kTreeAcceptStream = 0x510e527fade682d1ull;
constexpr uint64_t kTreeResampleStream = 0x9b05688c2b3e6c1full;
constexpr uint64_t kMaxChildren = 64;

} // namespace

bool Engine::treeRound(std::vector<Sequence *> &seqs,
                       const std::vector<size_t> &group,
                       const std::vector<const GenerationRequest *> &requests,
                       std::vector<GenerationResult> &results,
                       GenerationTimings &timings, std::string &error) {
  Engine &d = *draft_;
  std::vector<Sequence> &drafts = *draftRun_;
  const int64_t vocab = plan_.vocabSize;
  // Each sequence's tree: at most specTokens_ nodes, and no deeper than
  // what it may still keep besides the target's own next token.
  std::vector<int64_t> budget(group.size()), maxDepth(group.size());
  std::vector<std::vector<TreeNode>> trees(group.size());
  std::vector<float> rows;
  VerifyRows levelRows;
  std::vector<int32_t> tokens;

  const double draftStart = secondsNow();
  // The draft takes in what it has not cached, up to the root (the
  // target's pending token); the root's logits give the first depth.
  {
    std::vector<Sequence *> batch;
    std::vector<int64_t> counts;
    std::vector<StepSample> samples;
    std::vector<size_t> which;
    for (size_t g = 0; g < group.size(); ++g) {
      const size_t i = group[g];
      const int64_t left = requests[i]->maxNewTokens - seqs[i]->generated;
      maxDepth[g] = std::min<int64_t>(left - 1, int64_t(specTree_.size()));
      budget[g] = maxDepth[g] > 0 ? specTokens_ : 0;
      if (budget[g] == 0)
        continue;
      Sequence &ds = drafts[i];
      batch.push_back(&ds);
      counts.push_back(int64_t(ds.pending.size()));
      StepSample draw;
      draw.seqId = uint64_t(ds.id);
      draw.step = uint64_t(ds.draws);
      samples.push_back(draw);
      which.push_back(g);
    }
    if (!batch.empty()) {
      if (!d.step(batch, counts, samples, tokens, &rows, error)) {
        error = "the draft model: " + error;
        return false;
      }
      ++timings.draftSteps;
      for (size_t b = 0; b < batch.size(); ++b) {
        std::vector<TreeNode> candidates;
        for (const auto &[token, logProb] :
             topTokens(rows.data() + int64_t(b) * vocab, vocab, specTree_[0]))
          candidates.push_back({token, -1, 1, logProb});
        keepBest(trees[which[b]], candidates, budget[which[b]]);
      }
    }
  }
  // Deeper levels: the draft scores its whole tree so far in one verify
  // step (tree attention keeps siblings apart) and drops it again; the
  // nodes of the last level get children.
  for (size_t level = 1; level < specTree_.size(); ++level) {
    std::vector<Sequence *> batch;
    std::vector<int64_t> counts;
    std::vector<int32_t> parents;
    std::vector<size_t> which;
    for (size_t g = 0; g < group.size(); ++g) {
      const std::vector<TreeNode> &tree = trees[g];
      if (int64_t(tree.size()) >= budget[g] || tree.empty() ||
          tree.back().depth != int32_t(level) ||
          int64_t(level) + 1 > maxDepth[g])
        continue;
      Sequence &ds = drafts[group[g]];
      ds.pending.clear();
      for (const TreeNode &n : tree) {
        ds.pending.push_back(n.token);
        parents.push_back(n.parent);
      }
      batch.push_back(&ds);
      counts.push_back(int64_t(tree.size()));
      which.push_back(g);
    }
    if (batch.empty())
      break;
    std::vector<int64_t> before;
    for (Sequence *ds : batch)
      before.push_back(ds->position);
    // Ranking children needs the draft's whole rows.
    if (!d.verifyStep(batch, counts, parents, true, levelRows, error)) {
      error = "the draft model: " + error;
      return false;
    }
    ++timings.draftSteps;
    int64_t row = 0;
    for (size_t b = 0; b < batch.size(); ++b) {
      const size_t g = which[b];
      std::vector<TreeNode> &tree = trees[g];
      std::vector<TreeNode> candidates;
      for (size_t n = 0; n < tree.size(); ++n) {
        if (tree[n].depth != int32_t(level))
          continue;
        for (const auto &[token, logProb] :
             topTokens(levelRows.row(row + int64_t(n)), vocab,
                       specTree_[level]))
          candidates.push_back({token, int32_t(n), int32_t(level) + 1,
                                tree[n].logProb + logProb});
      }
      row += counts[b];
      keepBest(tree, candidates, budget[g]);
      if (!d.rollBack(*batch[b], before[b], error)) {
        error = "the draft model: " + error;
        return false;
      }
    }
  }
  timings.draftSeconds += secondsNow() - draftStart;

  // The target verifies its pending token (the root, row 0) and the tree
  // (node n at row n + 1).
  const double verifyStart = secondsNow();
  std::vector<Sequence *> batch;
  std::vector<int64_t> counts, before;
  std::vector<int32_t> parents;
  for (size_t g = 0; g < group.size(); ++g) {
    Sequence &s = *seqs[group[g]];
    before.push_back(s.position);
    parents.push_back(-1);
    for (const TreeNode &n : trees[g]) {
      s.pending.push_back(n.token);
      parents.push_back(n.parent + 1);
    }
    batch.push_back(&s);
    counts.push_back(int64_t(s.pending.size()));
  }
  std::vector<const GenerationRequest *> judged;
  for (size_t i : group)
    judged.push_back(requests[i]);
  VerifyRows verified;
  if (!verifyStep(batch, counts, parents, verifyNeedsLogits(judged), verified,
                  error))
    return false;
  timings.verifySeconds += secondsNow() - verifyStart;
  ++timings.verifySteps;
  ++timings.decodeSteps;

  std::vector<int64_t> moves;
  std::vector<std::pair<size_t, int64_t>> keep; // (group index, kept length)
  int64_t row = 0;
  for (size_t g = 0; g < group.size(); ++g) {
    const size_t i = group[g];
    Sequence &s = *seqs[i];
    const GenerationRequest &req = *requests[i];
    const std::vector<TreeNode> &tree = trees[g];
    const int64_t base = row;
    row += counts[g];
    // Children of each fed row, in the order the draft ranked them.
    std::vector<std::vector<int64_t>> children(tree.size() + 1);
    for (size_t n = 0; n < tree.size(); ++n)
      children[size_t(tree[n].parent + 1)].push_back(int64_t(n) + 1);
    // Walk from the root: greedy follows the child that is the target's
    // argmax; sampling tests the children in turn (each a proposal made
    // for certain: kept with its probability under what the rejected ones
    // left), and the target's own draw ends the path.
    std::vector<int64_t> path{0};
    int64_t at = 0;
    std::vector<double> p, full;
    while (!s.done) {
      const float *logits = verified.row(base + at);
      const uint64_t index = uint64_t(results[i].tokens.size());
      int32_t token = 0;
      int64_t next = -1;
      if (req.sampling.temperature == 0.0) {
        token = verified.best(base + at);
        for (int64_t c : children[size_t(at)])
          if (tree[size_t(c - 1)].token == token)
            next = c;
      } else {
        samplingDistribution(logits, vocab, req.sampling, full);
        p = full;
        const std::vector<int64_t> &kids = children[size_t(at)];
        for (size_t j = 0; j < kids.size() && next < 0; ++j) {
          const int32_t x = tree[size_t(kids[j] - 1)].token;
          double total = 0.0;
          for (double v : p)
            total += v;
          if (!(total > 0.0))
            break;
          if (specUniform(req.sampling, kTreeAcceptStream, uint64_t(s.id),
                          index * kMaxChildren + j) *
                  total <
              p[size_t(x)]) {
            token = x;
            next = kids[j];
          } else {
            p[size_t(x)] = 0.0;
          }
        }
        if (next < 0) {
          // What the rejected children left; rounding alone can leave
          // nothing, and then the whole distribution is the right one.
          const bool left =
              std::any_of(p.begin(), p.end(), [](double v) { return v > 0; });
          token = drawFrom(left ? p : full,
                           specUniform(req.sampling, kTreeResampleStream,
                                       uint64_t(s.id), index));
        }
      }
      acceptToken(s, req, results[i], token,
                  options_.keepLogits ? logits : nullptr);
      if (next < 0)
        break;
      path.push_back(next);
      at = next;
    }
    timings.proposedTokens += int64_t(tree.size());
    timings.acceptedTokens += int64_t(path.size()) - 1;
    ++timings.verifiedSequences;
    if (s.done)
      continue;
    // The accepted path's rows move down to follow the pending token, in
    // order (a node's index is never below its depth, so no row is
    // overwritten before it is read).
    const std::vector<int32_t> &table = pool_.blockTable(s.id);
    const int64_t blockSize = plan_.kvCache.blockSize;
    auto slotOf = [&](int64_t position) {
      return int64_t(table[size_t(position / blockSize)]) * blockSize +
             position % blockSize;
    };
    for (size_t j = 1; j < path.size(); ++j)
      if (path[j] != int64_t(j) && plan_.kvCache.layers > 0) {
        moves.push_back(slotOf(before[g] + path[j]));
        moves.push_back(slotOf(before[g] + int64_t(j)));
      }
    keep.push_back({g, before[g] + int64_t(path.size())});
  }
  if (!backend_->moveKvSlots(moves, error))
    return false;
  for (const auto &[g, kept] : keep)
    if (!rollBack(*seqs[group[g]], kept, error) ||
        !syncDraft(group[g], kept, requests, results, error))
      return false;
  return true;
}

} // namespace strata
