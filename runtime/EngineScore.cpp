// Engine::score: the log-probability of each token of a sequence given the
// ones before it, for perplexity. It runs the same programs generation does
// (prefill, then extend for a sequence longer than a step), with all-token
// logits, and never samples.
#include "runtime/Engine.h"

#include <algorithm>
#include <cmath>

namespace strata {

namespace {

/// log softmax(row)[target] in double: the row's maximum is subtracted
/// before exponentiating, so no logit overflows, and the sum runs in double
/// so that a large vocabulary loses no precision. False when the row holds
/// a non-finite value.
bool logProbability(const float *row, int64_t vocab, int32_t target,
                    double &out) {
  double max = -INFINITY;
  for (int64_t v = 0; v < vocab; ++v) {
    if (!std::isfinite(row[v]))
      return false;
    max = std::max(max, double(row[v]));
  }
  double sum = 0.0;
  for (int64_t v = 0; v < vocab; ++v)
    sum += std::exp(double(row[v]) - max);
  out = double(row[target]) - max - std::log(sum);
  return true;
}

} // namespace

bool Engine::scoresEveryToken() const {
  for (const plan::Program *p : {forward_, prefill_, extend_, decode_}) {
    if (!p)
      continue;
    for (const plan::Launch &l : p->launches)
      if (l.kernel() == plan::Kernel::Logits &&
          !l.as<plan::LogitsParams>().allTokens)
        return false;
  }
  return true;
}

bool Engine::score(const std::vector<int32_t> &tokens,
                   std::vector<double> &logprobs, std::string &error) {
  logprobs.clear();
  if (session_) {
    error = "score() while a conversation is open; close it first";
    return false;
  }
  if (!scoresEveryToken()) {
    error = "the plan's logits are one row per sequence; scoring needs a "
            "plan built with all-token logits";
    return false;
  }
  const int64_t n = int64_t(tokens.size());
  if (n < 2 || n > plan_.maxPositions) {
    error = "score() takes 2 to " + std::to_string(plan_.maxPositions) +
            " tokens (the model's positions), got " + std::to_string(n);
    return false;
  }
  const int64_t vocab = plan_.vocabSize;
  for (int32_t id : tokens)
    if (id < 0 || id >= vocab) {
      error = "token id " + std::to_string(id) +
              " is outside the vocabulary of " + std::to_string(vocab);
      return false;
    }
  const int64_t blockSize = std::max<int64_t>(1, plan_.kvCache.blockSize);
  if (!prepareStorage((n + blockSize - 1) / blockSize, 1, n, error))
    return false;
  Sequence s;
  s.pending = tokens;
  pool_.addSequence(s.id);
  if (!slots_.allocate(s.slot, error))
    return false;
  // The last token predicts nothing, so it is not fed.
  s.pending.pop_back();
  std::vector<Sequence *> batch{&s};
  std::vector<float> logits;
  bool ok = true;
  while (ok && !s.pending.empty()) {
    const int64_t count =
        std::min<int64_t>(plan_.limits.maxTokens, int64_t(s.pending.size()));
    StepInputs in;
    ok = buildInputs(batch, {count}, in, error);
    const plan::Program *program = programFor(batch, {count});
    ok = ok && backend_->stepLogits(*program, in, logits, error);
    if (ok && int64_t(logits.size()) != count * vocab) {
      error = "the " + program->phase + " program returned " +
              std::to_string(logits.size() / std::max<int64_t>(vocab, 1)) +
              " logits rows for " + std::to_string(count) + " tokens";
      ok = false;
    }
    for (int64_t t = 0; ok && t < count; ++t) {
      const int64_t next = s.position + t + 1;
      double lp = 0.0;
      if (!logProbability(logits.data() + t * vocab, vocab, tokens[next], lp)) {
        error = "step " + std::to_string(stepCount_) + " (" + program->phase +
                "): the logits of position " + std::to_string(next - 1) +
                " are not finite; STRATA_TRACE=1 prints every launch's "
                "output to find where it starts";
        ok = false;
      }
      logprobs.push_back(lp);
    }
    ++stepCount_;
    s.position += count;
    s.pending.erase(s.pending.begin(), s.pending.begin() + count);
  }
  pool_.release(s.id);
  slots_.release(s.slot);
  if (!ok)
    logprobs.clear();
  return ok;
}

} // namespace strata
