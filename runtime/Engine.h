// The Engine: generates tokens for a batch of requests with a plan.
//
// It owns the weights, the paged KV block pool and the linear-state slots,
// builds each step's inputs (positions, block tables, KV write slots, state
// slots) and runs the plan's program on a backend (runtime/Backend.h), which
// also picks the next tokens. A prompt is
// processed in chunks of at most the plan's token limit (the first chunk
// onto an empty cache, the rest onto what is cached: chunked prefill),
// then all live sequences decode together, one token each per step. A
// sequence ends at its token budget, at one of its stop tokens (the model's
// EOS) or when its token callback says so (a stop string); a conversation
// (openSession) keeps one sequence's cache between calls.
#ifndef STRATA_RUNTIME_ENGINE_H
#define STRATA_RUNTIME_ENGINE_H

#include "runtime/Backend.h"
#include "runtime/KvBlockPool.h"
#include "runtime/Sampler.h"
#include "runtime/StateSlots.h"
#include "runtime/StepInputs.h"
#include "runtime/Weights.h"
#include "runtime/plan/Plan.h"

#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
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
  /// Ids that end the sequence when it generates one (the model's EOS
  /// ids); the id is the last token of the result.
  std::vector<int32_t> stopTokens;
  /// Called with each new token as soon as its step ends, in order;
  /// returning false ends the sequence after that token (a stop string
  /// seen in the decoded text). May be empty.
  std::function<bool(int32_t token)> onToken;
};

/// Why a sequence ended.
enum class FinishReason : uint8_t {
  Length,    ///< it generated maxNewTokens tokens
  StopToken, ///< it generated one of its stop tokens
  Callback,  ///< onToken returned false
};
const char *toString(FinishReason reason);

struct GenerationResult {
  std::vector<int32_t> tokens;
  /// Logits of the last step that produced a token for this request
  /// (empty when EngineOptions::keepLogits is off).
  std::vector<float> lastLogits;
  FinishReason finish = FinishReason::Length;
};

struct GenerationTimings {
  double prefillSeconds = 0.0;
  int64_t prefillTokens = 0;
  /// Steps the prompts took (several sequences share a step).
  int64_t prefillSteps = 0;
  double decodeSeconds = 0.0;
  int64_t decodeSteps = 0;
  /// Speculative decoding (Engine::attachDraft): the decode phase's draft
  /// steps and their time, the target's verify steps and their time, the
  /// draft tokens proposed and those the target accepted.
  int64_t draftSteps = 0, verifySteps = 0;
  double draftSeconds = 0.0, verifySeconds = 0.0;
  int64_t proposedTokens = 0, acceptedTokens = 0;
  /// Sequences scored by verify steps (a step verifies several).
  int64_t verifiedSequences = 0;
};

/// Engine::timeVerifySteps: median wall times of one step, from its launch
/// to its results on the host.
struct VerifyTiming {
  double decodeSeconds = 0.0; ///< a decode step (one token per sequence)
  /// A verify step (a tree per sequence) whose argmaxes come back (greedy
  /// verification), and one whose every row of logits comes back (sampled).
  double verifySeconds = 0.0;
  double verifyLogitsSeconds = 0.0;
};

/// Continuous batching (Engine::startServing): the pool and the limits of
/// one serving session.
struct ServeOptions {
  /// KV blocks in the pool (> 0 when the model has softmax layers). A
  /// request needing more than the whole pool is refused at submit().
  int64_t kvBlocks = 0;
  /// Sequences running at once, each holding a state slot; 0: the plan's
  /// sequences per step.
  int64_t maxRunning = 0;
  /// Tokens per step, decode tokens and prompt chunks together; 0: the
  /// plan's tokens per step.
  int64_t stepTokens = 0;
  /// Reuse the KV blocks of prompts that start alike (full blocks,
  /// content-keyed). Models with linear-attention layers never do: their
  /// state summarises the whole prefix and is not kept per block.
  bool prefixCache = true;
};

/// A request that ended: finished (result.finish says why) or cancelled.
struct ServeResult {
  uint64_t id = 0;
  bool cancelled = false;
  GenerationResult result;
};

/// What the serving loop holds now, and its counters since startServing.
struct ServeStats {
  int64_t running = 0, waiting = 0;
  int64_t kvBlocks = 0, freeKvBlocks = 0;
  int64_t steps = 0, preemptions = 0;
  int64_t promptTokens = 0;      ///< prompt tokens fed (recomputed ones too)
  int64_t generatedTokens = 0;   ///< tokens sampled and kept
  int64_t mixedSteps = 0;        ///< steps with prompt chunks and decode tokens
  bool prefixCache = false;      ///< whether prefix caching is on
  int64_t prefixQueryTokens = 0; ///< prompt tokens looked up in the cache
  int64_t prefixHitTokens = 0;   ///< of those, found cached (not computed)
  /// With prompt lookup (attachLookup): verify steps run, tokens the
  /// lookups proposed and those kept.
  int64_t verifySteps = 0;
  int64_t proposedTokens = 0, acceptedTokens = 0;
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

  /// Speculative decoding in generate() (docs/speculative.md): from now on
  /// the decode phase lets `draft` propose up to `tokens` tokens per
  /// sequence (one draft step each), scores them in one step of this
  /// engine's `verify` program and keeps what the acceptance rule keeps:
  /// greedy requests the longest run the target's argmax agrees with, plus
  /// the target's own next token (the output equals plain greedy
  /// decoding's up to the rounding of the verify step); sampled requests
  /// the proposals that pass lossless speculative sampling, so their
  /// tokens are distributed as the target's own samples. Both caches are
  /// rolled back past the rest. False (nothing attached) when the plan has
  /// no verify program, the vocabularies differ, a model has lightning
  /// layers (their state is not rolled back), the draft does not run on
  /// the same device, a drafter is attached already or `tokens` is outside
  /// [1, 16].
  ///
  /// With `tree` (branching per depth, e.g. {4, 2, 1}) the draft proposes
  /// a token tree instead of a chain: the `tree[0]` most likely tokens
  /// after the pending one, the `tree[1]` most likely after each of those,
  /// and so on, at most `tokens` nodes (1 to 63) chosen by the draft's
  /// path probability; the target verifies the tree in one step and keeps
  /// its longest accepted path (docs/speculative.md, "Trees"). A tree of
  /// depth 2 or more needs a draft plan with a verify program.
  bool attachDraft(std::unique_ptr<Engine> draft, int64_t tokens,
                   std::string &error,
                   const std::vector<int64_t> &tree = {});
  /// Speculative decoding with prompt lookup as the drafter: the proposals
  /// are the tokens that followed the last earlier occurrence of the
  /// sequence's final n-gram (runtime/PromptLookup.h); otherwise as
  /// attachDraft.
  bool attachLookup(int64_t tokens, std::string &error);
  bool speculative() const { return draft_ != nullptr || lookup_; }

  /// The cost of speculative verification, measured: each prompt is
  /// cached but its last token, then `repetitions` times (after two untimed
  /// rounds) one decode step feeds that token for every sequence, and one
  /// verify step feeds it with a binary tree of `treeTokens` more under it
  /// (the logits of every token copied to the host, as speculative decoding
  /// copies them); each step is rolled back. Needs a verify program and no
  /// open conversation or serving session.
  bool timeVerifySteps(const std::vector<std::vector<int32_t>> &prompts,
                       int64_t treeTokens, int64_t repetitions,
                       VerifyTiming &out, std::string &error);

  /// A conversation: one sequence whose cache is kept from one call of
  /// continueSession to the next, so that each turn feeds only its new
  /// tokens. `maxLength` bounds the tokens the conversation may hold (at
  /// most the model's positions); its KV blocks are reserved here.
  bool openSession(int64_t maxLength, std::string &error);
  /// Feeds `turn.prompt` after what the conversation holds (the last token
  /// generated in the previous turn goes first), then generates as
  /// `turn` says. A turn that would pass the session's length fails
  /// before anything runs, and the conversation stays as it was.
  bool continueSession(const GenerationRequest &turn, GenerationResult &result,
                       GenerationTimings &timings, std::string &error);
  /// Tokens of the conversation so far: cached ones and the pending one.
  int64_t sessionLength() const;
  void closeSession();

  /// Scores `tokens` as one sequence on an empty cache: `logprobs[i - 1]`
  /// receives log p(tokens[i] | tokens[0..i)) for i in [1, size), in
  /// double from a log-softmax of the fp32 logits. The prompt is fed in
  /// chunks of the plan's token limit (prefill, then extend), and every
  /// chunk's logits come back, so the plan's logits must be all-token
  /// (BuildOptions::allTokenLogits; scoresEveryToken()). Needs 2 to the
  /// model's positions tokens and no open conversation.
  bool score(const std::vector<int32_t> &tokens, std::vector<double> &logprobs,
             std::string &error);
  /// Whether the programs score every token (their logits are all-token).
  bool scoresEveryToken() const;

  /// Continuous batching. After startServing, requests join with submit()
  /// and leave when they finish or are cancelled; each serveStep() runs
  /// one step: every running sequence's next token (decode) and chunks of
  /// the prompts of running and waiting requests (oldest first), under the
  /// step's token budget. KV blocks are taken as sequences grow; when the
  /// pool runs dry the youngest running sequence is preempted: its blocks
  /// and state slot are freed and it waits again, to recompute its prompt
  /// and the tokens it generated (the tokens it already streamed are not
  /// repeated). A request's draws depend on its seed and its token index
  /// only, so its tokens do not depend on what it was batched with. Not
  /// thread-safe: one thread drives the loop.
  bool startServing(const ServeOptions &options, std::string &error);
  /// Queues `request` (checked like generate()'s) and sets its id.
  bool submit(GenerationRequest request, uint64_t &id, std::string &error);
  /// Ends a waiting or running request; its blocks and slot are freed now
  /// and the next serveStep() reports it. False for an unknown id.
  bool cancel(uint64_t id);
  /// Runs one step (nothing when no request is queued) and appends the
  /// requests that ended to `ended`. A failed step ends every request.
  bool serveStep(std::vector<ServeResult> &ended, std::string &error);
  /// Whether a request is waiting or running.
  bool serveBusy() const;
  ServeStats serveStats() const;
  /// Drops every request (without reporting them) and the pool.
  void stopServing();

  /// Free bytes where the KV cache and states are allocated (device memory
  /// on CUDA, host memory on the CPU; Backend::freeCacheMemory), as they
  /// are now: after the weights, before a pool is reserved.
  uint64_t freeCacheMemory() const { return backend_->freeCacheMemory(); }
  /// The KV blocks `bytes` hold once the linear-attention states of `slots`
  /// sequences are taken from them (0 when they do not fit, or when the
  /// model keeps no KV cache).
  int64_t kvBlocksFor(uint64_t bytes, int64_t slots) const;

  /// How the backend ran its decode steps (CUDA graph replays and
  /// captures), since the engine was created.
  BackendCounters backendCounters() const { return backend_->counters(); }

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
    int64_t generated = 0;        // in this call (against maxNewTokens)
    int64_t draws = 0;            // ever: the sampler's step counter
    bool done = false;
  };
  /// What a verify step returns per token: its logits row, or (greedy
  /// requests, no logits kept) only its argmax.
  struct VerifyRows {
    int64_t vocab = 0;
    std::vector<float> logits;   // [tokens, vocab] or empty
    std::vector<int32_t> argmax; // [tokens] or empty
    /// Token t's logits; null when only argmaxes were returned.
    const float *row(int64_t t) const {
      return logits.empty() ? nullptr : logits.data() + t * vocab;
    }
    /// Token t's argmax, ties to the lowest id.
    int32_t best(int64_t t) const;
  };
  /// Records `token`, sampled for `s` (from logits `row`, kept when
  /// non-null), and ends the sequence at a stop token, a callback that
  /// says so, or its token budget.
  void acceptToken(Sequence &s, const GenerationRequest &req,
                   GenerationResult &result, int32_t token,
                   const float *row) const;
  /// Validates a request against the vocabulary and `positions` (the
  /// positions it may reach, after `cached` tokens already held).
  bool checkRequest(const GenerationRequest &req, size_t index, int64_t cached,
                    int64_t positions, std::string &error) const;
  /// Creates the KV pool and state slots, and reserves the backend.
  bool prepareStorage(int64_t blocks, int64_t slots, int64_t maxContext,
                      std::string &error);
  /// One step of the verify program feeding `counts[i]` pending tokens of
  /// `batch[i]` as a tree: `parents` holds, per fed token, the index of
  /// its parent among its sequence's tokens of this step (-1: it hangs
  /// from the cached prefix); positions are the cached length plus the
  /// depth. `out` receives every token's logits when `wantLogits`, else
  /// only their argmax (picked on the device).
  bool verifyStep(std::vector<Sequence *> &batch,
                  const std::vector<int64_t> &counts,
                  const std::vector<int32_t> &parents, bool wantLogits,
                  VerifyRows &out, std::string &error);
  /// Whether a verify step for `requests` must return logits rather than
  /// argmaxes: a sampled request, or logits kept for the caller.
  bool verifyNeedsLogits(
      const std::vector<const GenerationRequest *> &requests) const;
  /// Takes the tokens a verify step yields for `s` from `rows`, from row
  /// `first` on (its pending token's, then its chain of `proposed` tokens):
  /// greedy, the proposals while each is the argmax, then the argmax;
  /// sampled, lossless speculative sampling against `drawnFrom` (the
  /// distribution each proposal was drawn from; empty for proposals made
  /// for certain), with uniforms of the streams of `streamId`. Each token
  /// goes through acceptToken; returns the proposals kept.
  int64_t acceptChain(Sequence &s, const GenerationRequest &req,
                      GenerationResult &result, const VerifyRows &rows,
                      int64_t first,
                      const std::vector<int32_t> &proposed,
                      const std::vector<std::vector<double>> &drawnFrom,
                      uint64_t streamId) const;
  /// Keeps the draft's sequence `i` in step with the target's first `kept`
  /// cached tokens: cuts what it cached past them and queues what it
  /// lacks, up to and including the target's pending token.
  bool syncDraft(size_t i, int64_t kept,
                 const std::vector<const GenerationRequest *> &requests,
                 const std::vector<GenerationResult> &results,
                 std::string &error);
  /// One round of tree speculation for the sequences `group`
  /// (runtime/EngineTree.cpp): the draft's tree, the target's verify step,
  /// the walk of the accepted path, its KV compaction and the rollback.
  bool treeRound(std::vector<Sequence *> &seqs,
                 const std::vector<size_t> &group,
                 const std::vector<const GenerationRequest *> &requests,
                 std::vector<GenerationResult> &results,
                 GenerationTimings &timings, std::string &error);
  /// The decode phase of run() with the attached draft: each round drafts
  /// up to specTokens_ tokens per live sequence and verifies them in one
  /// target step.
  bool speculativeDecode(std::vector<Sequence *> &seqs,
                         const std::vector<const GenerationRequest *> &requests,
                         std::vector<GenerationResult> &results,
                         GenerationTimings &timings, std::string &error);
  /// Why speculative decoding with `tokens` proposals per round cannot
  /// run on this engine (attachDraft, attachLookup).
  bool checkSpeculation(int64_t tokens, std::string &error) const;
  /// One sequence the draft proposes a chain for: its draft sequence
  /// (pending: what the draft has not taken in, up to the target's pending
  /// token), its request, how many tokens, the index of the generated
  /// token the first proposal would be, and the id its sampled draws are
  /// keyed by.
  struct DraftChain {
    Sequence *draft = nullptr;
    const GenerationRequest *request = nullptr;
    int64_t tokens = 0;
    int64_t index0 = 0;
    uint64_t streamId = 0;
  };
  /// The draft's proposals for `chains`: up to `tokens` each, one draft
  /// step per token (batches within the draft's limits); for sampled
  /// requests also the distribution each was drawn from.
  bool draftChains(const std::vector<DraftChain> &chains,
                   std::vector<std::vector<int32_t>> &proposals,
                   std::vector<std::vector<std::vector<double>>> &drawnFrom,
                   GenerationTimings &timings, std::string &error);
  /// The draft's storage and sequences for `requests` (one each, the same
  /// index), with their prompts fed.
  bool startDraft(const std::vector<GenerationRequest> &requests,
                  std::vector<Sequence> &draftSeqs, std::string &error);
  /// Feeds every pending token of `seqs` (in chunks under the plan's
  /// limits), sampling nothing: the draft's prompts.
  bool feedPending(std::vector<Sequence *> &seqs, std::string &error);
  /// Shortens `s` to its first `length` cached tokens.
  bool rollBack(Sequence &s, int64_t length, std::string &error);
  /// Runs `seqs[i]` for `requests[i]` until each is done: first every
  /// pending token (prompts, in chunks), then one token per step.
  bool run(std::vector<Sequence *> &seqs,
           const std::vector<const GenerationRequest *> &requests,
           std::vector<GenerationResult> &results, GenerationTimings &timings,
           std::string &error);
  /// Feeds `counts[i]` pending tokens of `batch[i]` in one step; with
  /// `samples` non-empty, `tokens` receives each sequence's next token.
  bool step(std::vector<Sequence *> &batch, const std::vector<int64_t> &counts,
            const std::vector<StepSample> &samples,
            std::vector<int32_t> &tokens, std::vector<float> *logits,
            std::string &error);

  /// After a step ran: each sequence's fed tokens are cached.
  void advance(std::vector<Sequence *> &batch,
               const std::vector<int64_t> &counts);

  /// The inputs of a step feeding `counts[i]` pending tokens of
  /// `batch[i]`; appends their KV slots to the pool.
  bool buildInputs(const std::vector<Sequence *> &batch,
                   const std::vector<int64_t> &counts, StepInputs &in,
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

  /// A request of the serving loop.
  struct Served {
    uint64_t id = 0;
    GenerationRequest request;
    GenerationResult result;
    Sequence seq;
    /// Whether it holds a pool sequence and a state slot (it runs).
    bool admitted = false;
    /// With a draft model: its sequence in the draft's pool (same id),
    /// held while `drafting`.
    Sequence draft;
    bool drafting = false;
  };
  /// Frees the blocks and slot of a running request and queues it again
  /// (front of the queue) to recompute its tokens.
  void preempt(Served &r);
  /// Frees what a request holds.
  void releaseServed(Served &r);
  /// Ends a running request that is done: frees what it holds, reports
  /// it in `ended` and forgets it (`r` is destroyed).
  void finishServed(Served &r, std::vector<ServeResult> &ended);
  /// Registers the full blocks of `r` not in the prefix cache yet.
  void registerServedBlocks(Served &r);
  /// With a drafter attached, the decode-only step of `planned` as a
  /// verify step of the drafter's proposals (runtime/
  /// EngineServeSpeculative.cpp); `handled` is false, and nothing ran,
  /// when no sequence has a proposal.
  bool serveSpeculativeStep(const std::vector<Served *> &planned,
                            std::vector<ServeResult> &ended, bool &handled,
                            std::string &error);
  /// The draft model's proposals for the served `planned`, at most `k[b]`
  /// each: each draft sequence is admitted to the draft's pool when it has
  /// none, cut back to what the target keeps, fed what it lacks, and then
  /// drafts; a sequence whose draft does not fit the draft's pool or
  /// slots proposes nothing this step (its draft sequence is released).
  bool serveDraftProposals(const std::vector<Served *> &planned,
                           const std::vector<int64_t> &k,
                           std::vector<std::vector<int32_t>> &proposals,
                           std::vector<std::vector<std::vector<double>>>
                               &drawnFrom,
                           std::string &error);
  /// Frees the draft sequence of a served request.
  void releaseServedDraft(Served &r);
  /// KV blocks `s` needs beyond those it holds to take `count` more tokens.
  int64_t blocksToGrow(const Sequence &s, int64_t count) const;
  /// Token `p` of a served request: its prompt, then what it generated.
  static int32_t servedToken(const Served &r, int64_t p);

  plan::Plan plan_;
  EngineOptions options_;
  /// The serving loop: requests by id, the waiting queue and the running
  /// ones in admission order.
  bool serving_ = false;
  ServeOptions serve_;
  uint64_t nextServeId_ = 1;
  std::unordered_map<uint64_t, std::unique_ptr<Served>> served_;
  std::deque<uint64_t> waiting_;
  std::vector<uint64_t> running_;
  std::vector<ServeResult> cancelled_;
  ServeStats serveCounters_;
  /// Steps run so far, for naming a failing step.
  int64_t stepCount_ = 0;
  WeightStore weights_;
  const plan::Program *forward_ = nullptr, *prefill_ = nullptr,
                      *extend_ = nullptr, *decode_ = nullptr,
                      *verify_ = nullptr;
  /// attachDraft, attachLookup: the drafter and the tokens it proposes per
  /// round.
  std::unique_ptr<Engine> draft_;
  bool lookup_ = false;
  int64_t specTokens_ = 0;
  /// The draft's tree shape (branching per depth); empty for chains.
  std::vector<int64_t> specTree_;
  /// KV slots a sequence may take past its final length: a token tree's
  /// verify step writes every node before the rejected ones are released.
  int64_t treeSlack() const { return specTree_.empty() ? 0 : specTokens_; }
  /// During generate() with a drafter attached.
  bool speculating_ = false;
  /// During generate() with a draft: the draft's sequences, by request.
  std::vector<Sequence> *draftRun_ = nullptr;
  std::unique_ptr<Backend> backend_;
  KvBlockPool pool_;
  StateSlots slots_;
  /// The conversation of openSession, and the length it may reach.
  std::unique_ptr<Sequence> session_;
  int64_t sessionLimit_ = 0;
};

} // namespace strata

#endif // STRATA_RUNTIME_ENGINE_H
