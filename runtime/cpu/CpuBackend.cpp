#include "runtime/cpu/CpuBackend.h"

#include "kernels/cpu/KvMoveRef.h"
#include "runtime/MemoryBudget.h"
#include "runtime/Sampler.h"
#include "runtime/cpu/CpuExecutor.h"

#include <map>

namespace strata {

namespace {

class CpuBackend final : public Backend {
public:
  CpuBackend(const plan::Plan &plan, const WeightStore &weights)
      : plan_(plan), weights_(weights) {}

  const char *name() const override { return "cpu"; }

  bool reserve(int64_t numBlocks, int64_t numSlots, int64_t /*maxContext*/,
               std::string & /*error*/) override {
    caches_ = CpuCaches::create(plan_, numBlocks, numSlots);
    return true;
  }

  bool resetState(int32_t slot, std::string &error) override {
    if (slot < 0 || slot >= caches_.numSlots) {
      error = "state slot " + std::to_string(slot) + " is outside the " +
              std::to_string(caches_.numSlots) + " reserved";
      return false;
    }
    for (std::vector<float> &layer : caches_.state) {
      const size_t perSlot = layer.size() / size_t(caches_.numSlots);
      std::fill_n(layer.begin() + ptrdiff_t(size_t(slot) * perSlot), perSlot,
                  0.0f);
    }
    return true;
  }

  bool moveKvSlots(const std::vector<int64_t> &moves,
                   std::string &error) override {
    const plan::KvCacheDesc &kv = plan_.kvCache;
    if (moves.empty() || kv.layers == 0)
      return true;
    const kernels::KvMoveDims d =
        kvMoveDimsOf(plan_, caches_.numBlocks, int64_t(moves.size() / 2));
    std::vector<void *> pools;
    for (int64_t l = 0; l < kv.layers; ++l) {
      pools.push_back(caches_.k[size_t(l)].data());
      pools.push_back(caches_.v[size_t(l)].data());
    }
    if (kernels::Status s = kernels::kvMoveRef(d, pools.data(), moves.data());
        !s.ok()) {
      error = "cpu: " + s.message();
      return false;
    }
    return true;
  }

  uint64_t freeCacheMemory() const override { return availableHostBytes(); }

  bool step(const plan::Program &program, const StepInputs &in,
            const std::vector<StepSample> &samples,
            std::vector<int32_t> &tokens, std::vector<float> *logits,
            std::string &error) override {
    std::unique_ptr<CpuExecutor> &exec = executors_[&program];
    if (!exec)
      exec = std::make_unique<CpuExecutor>(plan_, program, weights_);
    if (kernels::Status s = exec->run(in, caches_, logits_); !s.ok()) {
      error = s.message();
      return false;
    }
    tokens.clear();
    if (samples.empty())
      return true;
    const int64_t vocab = plan_.vocabSize;
    if (int64_t(logits_.size()) < int64_t(samples.size()) * vocab) {
      error = "the program returned " + std::to_string(logits_.size()) +
              " logits for " + std::to_string(samples.size()) + " sequences";
      return false;
    }
    for (size_t i = 0; i < samples.size(); ++i)
      tokens.push_back(int32_t(sampleToken(logits_.data() + i * vocab, vocab,
                                           samples[i].params, samples[i].seqId,
                                           samples[i].step)));
    if (logits)
      logits->assign(logits_.begin(),
                     logits_.begin() + int64_t(samples.size()) * vocab);
    return true;
  }

  bool stepLogits(const plan::Program &program, const StepInputs &in,
                  std::vector<float> &logits, std::string &error) override {
    std::vector<int32_t> tokens;
    if (!step(program, in, {}, tokens, nullptr, error))
      return false;
    logits = logits_; // exactly the rows of this step (CpuExecutor::run)
    return true;
  }

  bool stepArgmax(const plan::Program &program, const StepInputs &in,
                  std::vector<int32_t> &ids, std::string &error) override {
    std::vector<int32_t> tokens;
    if (!step(program, in, {}, tokens, nullptr, error))
      return false;
    const int64_t vocab = plan_.vocabSize;
    if (int64_t(logits_.size()) != in.numTokens() * vocab) {
      error = "cpu: the program has no all-token logits to take the argmax "
              "of";
      return false;
    }
    ids.resize(size_t(in.numTokens()));
    for (size_t t = 0; t < ids.size(); ++t)
      ids[t] = int32_t(argmax(logits_.data() + int64_t(t) * vocab, vocab));
    return true;
  }

private:
  const plan::Plan &plan_;
  const WeightStore &weights_;
  std::map<const plan::Program *, std::unique_ptr<CpuExecutor>> executors_;
  CpuCaches caches_;
  std::vector<float> logits_;
};

} // namespace

std::unique_ptr<Backend> createCpuBackend(const plan::Plan &plan,
                                          const WeightStore &weights) {
  return std::make_unique<CpuBackend>(plan, weights);
}

} // namespace strata
