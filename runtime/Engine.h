// The Engine: generates tokens for a batch of requests with a plan.
//
// It owns the weights, the paged KV block pool and the linear-state slots,
// builds each step's inputs (positions, block tables, KV write slots, state
// slots) and runs the plan's program on a backend (runtime/Backend.h), which
// also picks the next tokens. A prompt is
// processed in chunks of at most the plan's token limit (the first chunk
// onto an empty cache, the rest onto what is cached: chunked prefill),
// then all live sequences decode together, one token each per step.
#ifndef STRATA_RUNTIME_ENGINE_H
#define STRATA_RUNTIME_ENGINE_H

#include "runtime/Backend.h"
#include "runtime/KvBlockPool.h"
#include "runtime/Sampler.h"
#include "runtime/StateSlots.h"
#include "runtime/StepInputs.h"
#include "runtime/Weights.h"
#include "runtime/plan/Plan.h"

#include <memory>
#include <string>
#include <vector>

namespace strata {

enum class Device : uint8_t { Cpu, Cuda };

struct EngineOptions {
  /// KV blocks in the pool; 0 sizes the pool for the requests of each
  /// generate() call.
  int64_t kvBlocks = 0;
  /// A `.safetensors` file or `model.safetensors.index.json` to load the
  /// weights from; empty for the plan's own weights (its checkpoint, or
  /// random weights from its seed).
  std::string weightsPath;
  /// Where the programs run.
  Device device = Device::Cpu;
  /// CUDA: the device ordinal.
  int deviceIndex = 0;
  /// CUDA: replay one captured graph per decode batch-size bucket instead
  /// of launching every kernel of every step.
  bool cudaGraphs = true;
  /// CUDA: see CudaBackendOptions::dependentLaunch and ::decodeGemv.
  bool cudaDependentLaunch = true;
  bool cudaDecodeGemv = true;
  /// Copy each request's last logits row into its result (a device-to-host
  /// copy of [batch, vocab] fp32 per step on the GPU; benchmarks turn it
  /// off).
  bool keepLogits = true;
};

struct GenerationRequest {
  std::vector<int32_t> prompt;
  int64_t maxNewTokens = 16;
  SamplingParams sampling;
};

struct GenerationResult {
  std::vector<int32_t> tokens;
  /// Logits of the last step that produced a token for this request
  /// (empty when EngineOptions::keepLogits is off).
  std::vector<float> lastLogits;
};

struct GenerationTimings {
  double prefillSeconds = 0.0;
  int64_t prefillTokens = 0;
  /// Steps the prompts took (several sequences share a step).
  int64_t prefillSteps = 0;
  double decodeSeconds = 0.0;
  int64_t decodeSteps = 0;
};

class Engine {
public:
  /// Checks that the plan has the programs generation needs, loads or
  /// draws the weights and prepares the backend.
  static std::unique_ptr<Engine>
  create(plan::Plan plan, const EngineOptions &options, std::string &error);

  bool generate(const std::vector<GenerationRequest> &requests,
                std::vector<GenerationResult> &results,
                GenerationTimings &timings, std::string &error);

  const plan::Plan &plan() const { return plan_; }
  /// "cpu" or "cuda".
  const char *backendName() const { return backend_->name(); }

private:
  Engine(plan::Plan plan, const EngineOptions &options);

  struct Sequence {
    int64_t id = 0;
    int32_t slot = kPaddingSlot;
    std::vector<int32_t> pending; // tokens to feed in the next steps
    int64_t position = 0;         // tokens already in the cache
    int64_t generated = 0;
    bool done = false;
  };
  /// Feeds `counts[i]` pending tokens of `batch[i]` in one step; with
  /// `samples` non-empty, `tokens` receives each sequence's next token.
  bool step(std::vector<Sequence *> &batch, const std::vector<int64_t> &counts,
            const std::vector<StepSample> &samples,
            std::vector<int32_t> &tokens, std::vector<float> *logits,
            std::string &error);

  /// The program for a step: the generic forward when the plan has one,
  /// else prefill (every sequence starts on an empty cache), decode (one
  /// token each) or extend.
  const plan::Program *programFor(const std::vector<Sequence *> &batch,
                                  const std::vector<int64_t> &counts) const;

  /// Whether `blocks` KV blocks and `slots` state slots fit in host
  /// memory (CPU backend), before they are allocated.
  bool checkCacheMemory(int64_t blocks, int64_t slots,
                        std::string &error) const;

  plan::Plan plan_;
  EngineOptions options_;
  /// Steps run so far, for naming a failing step.
  int64_t stepCount_ = 0;
  WeightStore weights_;
  const plan::Program *forward_ = nullptr, *prefill_ = nullptr,
                      *extend_ = nullptr, *decode_ = nullptr;
  std::unique_ptr<Backend> backend_;
  KvBlockPool pool_;
  StateSlots slots_;
};

} // namespace strata

#endif // STRATA_RUNTIME_ENGINE_H
