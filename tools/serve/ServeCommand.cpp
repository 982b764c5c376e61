#include "tools/serve/ServeCommand.h"

#include "runtime/Engine.h"
#include "runtime/MemoryBudget.h"
#include "runtime/PlanTokenizer.h"
#include "tools/common/RunCommand.h"
#include "tools/common/TextSetup.h"
#include "tools/serve/EngineLoop.h"
#include "tools/serve/HttpRoutes.h"
#include "tools/serve/JobBuilder.h"
#include "tools/serve/KvMemory.h"
#include "tools/serve/ServeMetrics.h"

#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <memory>
#include <new>
#include <optional>
#include <pthread.h>
#include <thread>

namespace strata::serve {

namespace {

using tools::parseInteger;

constexpr int64_t kDefaultPort = 8000;
constexpr int64_t kDefaultMaxQueue = 256;
// The default KV pool holds --max-running sequences at the model's full
// length, but no more than this many tokens (a Llama-3-8B shape takes 128
// KiB per token: 32 GiB), and never less than one full-length sequence.
constexpr int64_t kDefaultPoolTokenCap = 262144;
// HTTP worker threads: one per request that may be running or queued
// (a handler waits for its request), plus a few for /health and /metrics
// and for the requests that get a 429; no more than this.
constexpr int64_t kMaxHttpThreads = 1024;
constexpr int64_t kSpareHttpThreads = 8;
// After SIGINT/SIGTERM, how long the answers to the ended requests may take
// to be written before the server closes their connections.
constexpr std::chrono::seconds kDrainTime{3};

int64_t defaultKvBlocks(int64_t maxRunning, int64_t positions,
                        int64_t blockSize) {
  const int64_t perSequence = (positions + blockSize - 1) / blockSize;
  const int64_t cap =
      std::max(perSequence, (kDefaultPoolTokenCap + blockSize - 1) / blockSize);
  return std::min(maxRunning * perSequence, cap);
}

/// An integer option in [lo, hi], or `fallback` when it is not given;
/// false with `error` naming the option otherwise.
bool integerOption(const tools::ArgParser &parser, const char *name, int64_t lo,
                   int64_t hi, const std::string &what, int64_t &out,
                   std::string &error) {
  if (!parser.has(name))
    return true;
  if (parseInteger(parser.get(name), lo, hi, out))
    return true;
  error = std::string("--") + name + " expects an integer in [" +
          std::to_string(lo) + ", " + std::to_string(hi) + "]" + what +
          ", got '" + parser.get(name) + "'";
  return false;
}

/// The chat format: --chat-format, else the one the tokenizer's template
/// writes. Without either the server still serves completions, and chat
/// requests are refused with the reason.
bool chatFormatOf(const tools::ArgParser &parser,
                  const tok::Tokenizer &tokenizer, ServedModel &model,
                  std::string &error) {
  if (parser.has("chat-format")) {
    tok::ChatFormat format;
    if (!tools::resolveChatFormat(parser, tokenizer, format, error))
      return false;
    model.chatFormat = format;
  } else if (auto format =
                 tok::recognizeChatTemplate(tokenizer.chatTemplate())) {
    model.chatFormat = *format;
  } else {
    model.noChatFormat =
        std::string("this server has no chat format: the model's tokenizer ") +
        (tokenizer.chatTemplate().empty()
             ? "has no chat template"
             : "has a chat template that is none of the known formats") +
        "; start the server with --chat-format (" + tok::knownChatFormats() +
        ")";
  }
  return true;
}

} // namespace

void addServeOptions(tools::ArgParser &parser) {
  parser.addOption("host", "HOST",
                   "the address to listen on (default 127.0.0.1)");
  parser.addOption("port", "PORT",
                   "the port (default 8000; 0 picks a free port, printed on "
                   "the 'listening on' line)");
  parser.addOption("device", "cpu|cuda",
                   "where the programs run (default cpu); cuda needs a "
                   "fused plan and a Hopper GPU");
  parser.addFlag("no-graphs",
                 "cuda: launch every decode and verify step eagerly");
  parser.addOption("weights", "PATH",
                   "load the weights from a .safetensors file or its index "
                   "(default: the model's own)");
  parser.addOption("tokenizer", "PATH",
                   "a tokenizer.json (or a folder holding one) instead of "
                   "the model's");
  parser.addOption("kv-blocks", "N",
                   "KV-cache blocks in the pool (default: --max-running "
                   "sequences at the model's full length, at most 262144 "
                   "tokens)");
  parser.addOption("kv-memory", "SHARE|SIZE",
                   "the KV pool takes this share of the memory free after "
                   "the weights (0.9), or this size (24GiB, 512MiB); instead "
                   "of --kv-blocks");
  parser.addFlag("no-prefix-cache",
                 "compute every prompt, even where a cached one starts alike");
  parser.addOption("max-running", "N",
                   "requests running at once (default: the plan's sequences "
                   "per step)");
  parser.addOption("step-tokens", "N",
                   "tokens per engine step, decode and prompt chunks "
                   "together (default: the plan's tokens per step)");
  parser.addOption("max-queue", "N",
                   "requests that may wait for a running place; more get "
                   "429 (default 256)");
  parser.addFlag("spec-lookup",
                 "speculative decoding with prompt lookup: decode-only "
                 "steps verify the tokens that followed each sequence's "
                 "last few tokens where they occurred before");
  parser.addOption("draft", "MODEL",
                   "speculative decoding with a draft model: this smaller "
                   "model of the same vocabulary (a compiled plan, or for "
                   "strata serve also a model file) proposes tokens that "
                   "decode-only steps verify");
  parser.addOption("spec-tokens", "N",
                   "with --draft or --spec-lookup: tokens proposed per step "
                   "and sequence, 1 to 16 (default 4)");
  parser.addOption("model-name", "NAME",
                   "the name clients give in \"model\" (default: the "
                   "model's name)");
  parser.addOption("chat-format", "NAME",
                   "llama3, chatml, mistral or llama2 (default: recognized "
                   "from the tokenizer's chat template)");
}

int runServer(const std::string &tool, const tools::ArgParser &parser,
              plan::Plan plan, const std::string &source) {
  auto usage = [&](const std::string &m) { return tools::usageError(tool, m); };
  auto failed = [&](const std::string &m) {
    return tools::inputError(tool, m);
  };
  // SIGINT and SIGTERM are blocked before any thread starts (the backend's,
  // the engine loop, httplib's workers inherit the mask), so that only the
  // thread that waits for them below takes them. A write to a client that
  // went away must fail with EPIPE, not end the process.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  std::string error;
  const std::string host = parser.get("host", "127.0.0.1");
  if (host.empty())
    return usage("--host expects an address");
  int64_t port = kDefaultPort, maxRunning = plan.limits.maxBatch,
          stepTokens = plan.limits.maxTokens, maxQueue = kDefaultMaxQueue;
  if (!integerOption(parser, "port", 0, 65535, "", port, error) ||
      !integerOption(parser, "max-running", 1, plan.limits.maxBatch,
                     " (the plan's sequences per step)", maxRunning, error) ||
      !integerOption(parser, "step-tokens", 1, plan.limits.maxTokens,
                     " (the plan's tokens per step)", stepTokens, error) ||
      !integerOption(parser, "max-queue", 0, 1 << 20, "", maxQueue, error))
    return usage(error);
  const bool lookup = parser.has("spec-lookup");
  const std::string draftPath = parser.get("draft");
  if (parser.has("draft") && draftPath.empty())
    return usage("--draft expects a model");
  if (lookup && !draftPath.empty())
    return usage("--draft and --spec-lookup are two drafters; give one");
  int64_t specTokens = 4;
  if (parser.has("spec-tokens") && !lookup && draftPath.empty())
    return usage("--spec-tokens applies with --draft or --spec-lookup");
  if (!integerOption(parser, "spec-tokens", 1, 16, "", specTokens, error))
    return usage(error);
  EngineOptions engineOptions;
  if (std::string bad = tools::parseEngineOptions(parser, engineOptions);
      !bad.empty())
    return usage(bad);
  std::optional<KvMemory> kvMemory;
  if (parser.has("kv-memory")) {
    if (parser.has("kv-blocks"))
      return usage("--kv-memory and --kv-blocks both size the KV pool; give "
                   "one");
    if (!parseKvMemory(parser.get("kv-memory"), kvMemory.emplace(), error))
      return usage(error);
    if (plan.kvCache.layers == 0)
      return usage("--kv-memory: the model has no softmax attention layers, "
                   "so no KV cache to size");
  }
  // Served requests never read their logits rows. On the CPU they are on
  // the host anyway, and keeping them keeps the engine's check that every
  // step's logits are finite; on the GPU they would cost a [batch, vocab]
  // download per step, which the benchmarks leave out too.
  engineOptions.keepLogits = engineOptions.device == Device::Cpu;

  ServedModel model;
  model.name = parser.get("model-name", plan.modelName);
  if (model.name.empty())
    return usage("--model-name expects a name");
  std::optional<tok::Tokenizer> tokenizer;
  if (!tools::loadRunTokenizer(parser, plan, source, tokenizer, error))
    return failed(error);
  if (!tokenizer)
    return failed(source + ": error: serving needs a tokenizer: the model "
                           "has none (a 'tokenizer:' entry in the model "
                           "file) and no --tokenizer was given");
  if (!chatFormatOf(parser, *tokenizer, model, error))
    return usage(error);
  model.tokenizer = &*tokenizer;
  model.eosIds = eosIdsOf(plan, &*tokenizer);
  model.vocabSize = plan.vocabSize;
  model.contextLength = plan.maxPositions;
  model.created = int64_t(std::time(nullptr));
  const bool hasCache = plan.kvCache.layers > 0;
  const int64_t blockSize = std::max<int64_t>(1, plan.kvCache.blockSize);
  ServeOptions serveOptions;
  serveOptions.maxRunning = maxRunning;
  serveOptions.stepTokens = stepTokens;
  serveOptions.prefixCache = !parser.has("no-prefix-cache");
  serveOptions.kvBlocks =
      engineOptions.kvBlocks
          ? engineOptions.kvBlocks
          : defaultKvBlocks(maxRunning, plan.maxPositions, blockSize);
  const int64_t maxPositions = plan.maxPositions;

  try {
    std::unique_ptr<Engine> engine =
        Engine::create(std::move(plan), engineOptions, error);
    if (!engine)
      return failed(error);
    if (lookup && !engine->attachLookup(specTokens, error))
      return failed(error);
    std::optional<plan::Plan> draftPlan;
    if (!draftPath.empty()) {
      if (int code = tools::loadDraftPlan(draftPath, draftPlan.emplace()))
        return code;
      // Its pool is sized when serving starts.
      if (!tools::attachDraftModel(*engine, *draftPlan, engineOptions,
                                   specTokens, {}, error))
        return failed(error);
    }
    // Measured once the weights are in place, before the pool exists.
    if (kvMemory) {
      const uint64_t freeBytes = engine->freeCacheMemory();
      uint64_t bytes = 0;
      if (!kvMemoryBytes(*kvMemory, freeBytes, bytes, error))
        return failed(error);
      // A draft's pool holds as many tokens as the model's: the share is
      // split between the two by their bytes per token.
      if (draftPlan && draftPlan->kvCache.layers > 0) {
        auto perToken = [](const plan::Plan &p) {
          return double(cacheNeeds(p, 1, 0)[0].bytes) /
                 double(std::max<int64_t>(1, p.kvCache.blockSize));
        };
        const double mine = perToken(engine->plan());
        bytes = uint64_t(double(bytes) * mine /
                         (mine + perToken(*draftPlan)));
      }
      serveOptions.kvBlocks = engine->kvBlocksFor(bytes, maxRunning);
      if (serveOptions.kvBlocks < 1)
        return failed(
            "--kv-memory " + parser.get("kv-memory") + ": " +
            formatBytes(bytes) + " of the " + formatBytes(freeBytes) +
            " free hold no KV block (" +
            formatBytes(cacheNeeds(engine->plan(), 1, 0)[0].bytes) +
            " each, after the states of " + std::to_string(maxRunning) +
            " sequences)");
    }
    model.poolTokens =
        hasCache ? serveOptions.kvBlocks * blockSize : maxPositions;
    ServeMetrics metrics;
    EngineLoop loop(*engine, *tokenizer, metrics, serveOptions, maxQueue);
    if (!loop.start(error))
      return failed(error);

    // Declared before the server, whose handlers count into it.
    std::atomic<int64_t> openResponses{0};
    httplib::Server server;
    const size_t threads = size_t(
        std::min(kMaxHttpThreads, maxRunning + maxQueue + kSpareHttpThreads));
    server.new_task_queue = [threads] {
      return new httplib::ThreadPool(threads);
    };
    server.set_payload_max_length(kMaxBodyBytes);
    // An idle keep-alive connection holds a worker until this passes, and
    // stopping waits for it (httplib checks for a stop between requests).
    server.set_keep_alive_timeout(1);
    addRoutes(server, model, loop, metrics, openResponses);
    const int bound = port == 0 ? server.bind_to_any_port(host)
                      : server.bind_to_port(host, int(port)) ? int(port)
                                                             : -1;
    if (bound < 0)
      return failed("cannot listen on " + host + ":" + std::to_string(port) +
                    " (the port is taken, or the host is not an address of "
                    "this machine)");

    std::fprintf(stderr,
                 "%s: model '%s' on the %s backend; %lld KV blocks of %lld "
                 "tokens (%s), up to %lld requests running and %lld queued, "
                 "%lld tokens per step; chat format %s\n",
                 tool.c_str(), model.name.c_str(), engine->backendName(),
                 (long long)serveOptions.kvBlocks, (long long)blockSize,
                 formatBytes(cacheNeeds(engine->plan(), serveOptions.kvBlocks,
                                        0)[0].bytes)
                     .c_str(),
                 (long long)maxRunning, (long long)maxQueue,
                 (long long)stepTokens,
                 model.chatFormat ? tok::chatFormatName(*model.chatFormat)
                                  : "none (chat requests are refused)");
    if (lookup || draftPlan)
      std::fprintf(stderr,
                   "%s: speculative decoding with %s, %lld tokens proposed "
                   "per step and request\n",
                   tool.c_str(),
                   lookup ? "prompt lookup"
                          : ("the draft model '" + draftPlan->modelName + "'")
                                .c_str(),
                   (long long)specTokens);
    std::printf("listening on http://%s:%d\n", host.c_str(), bound);
    std::fflush(stdout);

    // SIGINT/SIGTERM: the engine loop refuses new requests (503) and ends
    // every queued and running one; their handlers answer 503 and their
    // streams end with an error event and [DONE]. Once those responses are
    // written (or after kDrainTime) the server stops: it closes the
    // listening socket and cuts what is still open, and
    // listen_after_bind() returns.
    std::atomic<bool> serverDone{false};
    int caught = 0;
    std::thread watcher([&] {
      const timespec interval{0, 100 * 1000 * 1000};
      while (!serverDone.load()) {
        const int sig = sigtimedwait(&signals, nullptr, &interval);
        if (sig != SIGINT && sig != SIGTERM)
          continue;
        caught = sig;
        loop.shutdown();
        const Clock::time_point deadline = Clock::now() + kDrainTime;
        while (openResponses.load() > 0 && Clock::now() < deadline)
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
        // stop() does nothing until the server runs.
        while (!server.is_running() && !serverDone.load())
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
        server.stop();
        return;
      }
    });
    const bool listened = server.listen_after_bind();
    serverDone = true;
    watcher.join();
    const int64_t cancelled = loop.shutdown();
    if (caught) {
      std::fprintf(stderr, "%s: %s: stopped; %lld request%s cancelled\n",
                   tool.c_str(), caught == SIGINT ? "SIGINT" : "SIGTERM",
                   (long long)cancelled, cancelled == 1 ? "" : "s");
      return 0;
    }
    if (!listened)
      return failed("the server stopped listening on " + host + ":" +
                    std::to_string(bound));
    return 0;
  } catch (const std::bad_alloc &) {
    return failed("out of host memory");
  }
}

} // namespace strata::serve
