// Engine::timeVerifySteps: the cost of one verify step against one decode
// step at the same context, measured on the engine itself (strata bench
// --verify-tokens; docs/speculative.md). What a speculative round costs the
// model follows from it and the acceptance rate.
#include "runtime/Clock.h"
#include "runtime/Engine.h"

#include <algorithm>

namespace strata {

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

} // namespace

bool Engine::timeVerifySteps(const std::vector<std::vector<int32_t>> &prompts,
                             int64_t treeTokens, int64_t repetitions,
                             VerifyTiming &out, std::string &error) {
  if (!verify_) {
    error = "model '" + plan_.modelName +
            "': the plan has no 'verify' program (compile it with "
            "--emit=fused)";
    return false;
  }
  if (session_ || serving_) {
    error = "a conversation or serving session is open";
    return false;
  }
  if (prompts.empty() || treeTokens < 1 || repetitions < 1) {
    error = "timing verify steps needs prompts, a tree and repetitions";
    return false;
  }
  const int64_t batch = int64_t(prompts.size());
  const int64_t blockSize = std::max<int64_t>(1, plan_.kvCache.blockSize);
  int64_t blocks = 0, maxContext = 1;
  for (const std::vector<int32_t> &p : prompts) {
    GenerationRequest r;
    r.prompt = p;
    r.maxNewTokens = treeTokens + 1;
    if (!checkRequest(r, size_t(&p - prompts.data()), 0, plan_.maxPositions,
                      error))
      return false;
    const int64_t length = int64_t(p.size()) + treeTokens + 2;
    blocks += (length + blockSize - 1) / blockSize;
    maxContext = std::max(maxContext, length);
  }
  if (int64_t(treeTokens) + 1 > plan_.limits.maxTokens / batch) {
    error = "a verify step of " + std::to_string(batch) + " sequences with " +
            std::to_string(treeTokens + 1) +
            " tokens each exceeds the plan's " +
            std::to_string(plan_.limits.maxTokens) + " tokens per step";
    return false;
  }
  if (!prepareStorage(blocks, batch, maxContext, error))
    return false;
  std::vector<Sequence> seqs(prompts.size());
  std::vector<Sequence *> all;
  for (size_t b = 0; b < prompts.size(); ++b) {
    seqs[b].id = int64_t(b);
    seqs[b].pending = prompts[b];
    pool_.addSequence(seqs[b].id);
    if (!slots_.allocate(seqs[b].slot, error))
      return false;
    all.push_back(&seqs[b]);
  }
  auto release = [&] {
    for (Sequence &s : seqs) {
      pool_.release(s.id);
      slots_.release(s.slot);
    }
  };
  // Every prompt but its last token is cached; that token is what each
  // timed step feeds (alone, or as the root of the tree), and every step
  // is rolled back to this point.
  std::vector<int32_t> last;
  for (Sequence &s : seqs) {
    last.push_back(s.pending.back());
    s.pending.pop_back();
  }
  if (!feedPending(all, error)) {
    release();
    return false;
  }
  std::vector<int64_t> cached;
  for (Sequence &s : seqs)
    cached.push_back(s.position);
  auto reset = [&] {
    for (size_t b = 0; b < seqs.size(); ++b) {
      if (!rollBack(seqs[b], cached[b], error))
        return false;
      seqs[b].pending = {last[b]};
    }
    return true;
  };
  // A binary tree in breadth-first order under the root: node i's parent
  // is (i - 1) / 2, so its depth grows as log2 of the tree's size.
  std::vector<int32_t> parents;
  std::vector<int64_t> counts(static_cast<size_t>(batch), treeTokens + 1);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t t = 0; t <= treeTokens; ++t)
      parents.push_back(t == 0 ? -1 : int32_t((t - 1) / 2));
  std::vector<StepSample> samples(static_cast<size_t>(batch));
  for (int64_t b = 0; b < batch; ++b)
    samples[size_t(b)].seqId = uint64_t(b);
  std::vector<int32_t> tokens;
  VerifyRows rows;
  std::vector<double> decode, verify, verifyLogits;
  auto timeVerify = [&](bool wantLogits, std::vector<double> &into,
                        bool timed) {
    if (!reset())
      return false;
    for (size_t b = 0; b < seqs.size(); ++b)
      for (int64_t t = 0; t < treeTokens; ++t)
        seqs[b].pending.push_back(
            int32_t((last[b] + 7919 * (t + 1)) % plan_.vocabSize));
    const double start = secondsNow();
    if (!verifyStep(all, counts, parents, wantLogits, rows, error))
      return false;
    if (timed)
      into.push_back(secondsNow() - start);
    return true;
  };
  // Two untimed rounds first: graphs are captured on the second.
  for (int64_t r = 0; r < repetitions + 2; ++r) {
    if (!reset()) {
      release();
      return false;
    }
    const double start = secondsNow();
    if (!step(all, std::vector<int64_t>(size_t(batch), 1), samples, tokens,
              nullptr, error)) {
      release();
      return false;
    }
    if (r >= 2)
      decode.push_back(secondsNow() - start);
    if (!timeVerify(false, verify, r >= 2) ||
        !timeVerify(true, verifyLogits, r >= 2)) {
      release();
      return false;
    }
  }
  release();
  out.decodeSeconds = median(decode);
  out.verifySeconds = median(verify);
  out.verifyLogitsSeconds = median(verifyLogits);
  return true;
}

} // namespace strata
