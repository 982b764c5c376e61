#include "tools/common/BenchCommand.h"

#include "runtime/Devices.h"
#include "tools/common/BenchReport.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <thread>

#include <unistd.h>

namespace strata::tools {

void addBenchOptions(ArgParser &parser) {
  parser.addOption("prompt-tokens", "N",
                   "prompt length of the ppN test (default 512; 0 skips it)");
  parser.addOption("gen-tokens", "N",
                   "decode steps of the tgN test (default 128; 0 skips it)");
  parser.addOption("depth", "D",
                   "prompt tokens each tgN sequence decodes after, so its "
                   "steps read a cache of D tokens and more (default 1; the "
                   "test is named tgN@dD)");
  parser.addOption("batch", "B,B,...",
                   "batch sizes, comma-separated (default 1,8,32)");
  parser.addOption("repetitions", "R",
                   "timed runs per test after one warm-up (default 5)");
  parser.addOption("device", "cpu|cuda",
                   "where to run (default: cuda when this build has CUDA "
                   "and a device is present, else cpu)");
  parser.addFlag("no-graphs", "CUDA: launch every decode and verify kernel "
                              "instead of replaying captured graphs");
  parser.addFlag("no-dependent-launch",
                 "CUDA: launch each kernel only after the previous one has "
                 "finished (no programmatic dependent launch)");
  parser.addFlag("no-gemv", "CUDA: run linear layers of at most 16 tokens "
                            "on cuBLASLt instead of the streaming GEMV");
  parser.addOption("weights", "PATH",
                   "load the weights from a .safetensors file or a "
                   "model.safetensors.index.json (default: the model's "
                   "weights)");
  parser.addOption("output", "md|json",
                   "a markdown table (default) or JSON with every run");
  parser.addOption("verify-tokens", "N,N,...",
                   "instead of the pp and tg tests, time a speculative "
                   "verify step of a binary tree of N tokens (1 to 63) "
                   "against a decode step, after --depth cached tokens, at "
                   "each --batch");
  parser.addOption("bandwidth-gbs", "GBS",
                   "memory bandwidth of the decode roofline in GB/s "
                   "(default 4140, the H200's measured read bandwidth)");
}

int64_t BenchSettings::maxBatch() const {
  return *std::max_element(batches.begin(), batches.end());
}

std::string BenchSettings::decodeTestName() const {
  std::string name = "tg" + std::to_string(genTokens);
  return depth > 1 ? name + "@d" + std::to_string(depth) : name;
}

double BenchSettings::decodeMeanContext() const {
  // Decode step k (from 0) writes position depth + k and attends over
  // positions 0 to depth + k: depth + k + 1 tokens.
  return double(depth) + 1.0 + double(genTokens - 1) / 2.0;
}

namespace {

std::string cpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      size_t colon = line.find(':');
      if (colon != std::string::npos && colon + 2 <= line.size())
        return line.substr(colon + 2);
    }
  return "unknown CPU";
}

} // namespace

int parseBenchSettings(const std::string &tool, const ArgParser &parser,
                       BenchSettings &s) {
  auto usage = [&](const std::string &message) {
    std::fprintf(stderr, "%s: error: %s\n", tool.c_str(), message.c_str());
    return 2;
  };
  // Generous ceilings that still keep B * N and the KV pool in range.
  const int64_t kMaxTokens = 1 << 20, kMaxBatch = 4096;
  for (auto [name, value] :
       {std::pair<const char *, int64_t *>{"prompt-tokens", &s.promptTokens},
        {"gen-tokens", &s.genTokens}})
    if (parser.has(name) &&
        !parseInteger(parser.get(name), 0, kMaxTokens, *value))
      return usage(std::string("--") + name +
                   " expects an integer in [0, 1048576], got '" +
                   parser.get(name) + "'");
  if (s.promptTokens == 0 && s.genTokens == 0)
    return usage("--prompt-tokens 0 and --gen-tokens 0 leave nothing to run");
  if (parser.has("depth") &&
      !parseInteger(parser.get("depth"), 1, kMaxTokens, s.depth))
    return usage("--depth expects an integer in [1, 1048576], got '" +
                 parser.get("depth") + "'");
  if (parser.has("depth") && s.genTokens == 0)
    return usage("--depth sets the tg test's prompt, and --gen-tokens 0 "
                 "skips that test");
  if (parser.has("batch") &&
      !parseIntegerList(parser.get("batch"), 1, kMaxBatch, s.batches))
    return usage("--batch expects comma-separated integers in [1, 4096], "
                 "got '" +
                 parser.get("batch") + "'");
  if (parser.has("repetitions") &&
      !parseInteger(parser.get("repetitions"), 1, 1000, s.repetitions))
    return usage("--repetitions expects an integer in [1, 1000], got '" +
                 parser.get("repetitions") + "'");
  std::string output = parser.get("output", "md");
  if (output != "md" && output != "json")
    return usage("--output expects md or json, got '" + output + "'");
  s.json = output == "json";
  if (parser.has("bandwidth-gbs") &&
      (!parseNumber(parser.get("bandwidth-gbs"), s.bandwidthGBs) ||
       s.bandwidthGBs <= 0))
    return usage("--bandwidth-gbs expects a positive number, got '" +
                 parser.get("bandwidth-gbs") + "'");
  if (parser.has("verify-tokens") &&
      !parseIntegerList(parser.get("verify-tokens"), 1, 63, s.verifyTokens))
    return usage("--verify-tokens expects comma-separated integers in "
                 "[1, 63], got '" +
                 parser.get("verify-tokens") + "'");
  s.cudaGraphs = !parser.has("no-graphs");
  s.dependentLaunch = !parser.has("no-dependent-launch");
  s.decodeGemv = !parser.has("no-gemv");
  if (parser.has("weights")) {
    s.weightsPath = parser.get("weights");
    if (s.weightsPath.empty())
      return usage("--weights expects a path");
  }

  std::string device = parser.get("device", "");
  if (!device.empty() && device != "cpu" && device != "cuda")
    return usage("--device expects cpu or cuda, got '" + device + "'");
  // Querying CUDA opens a context on every device: only when a GPU may be
  // used.
  DeviceQuery query;
  if (device != "cpu")
    query = queryDevices();
  const bool haveCuda = !query.devices.empty();
  if (device == "cuda" && !haveCuda) {
    std::fprintf(stderr, "%s: error: --device cuda: %s\n", tool.c_str(),
                 query.reason.c_str());
    return 1;
  }
  if (device.empty())
    device = haveCuda ? "cuda" : "cpu";
  s.device = device == "cuda" ? Device::Cuda : Device::Cpu;
  if (parser.has("device"))
    s.deviceWhy = "--device " + device;
  else if (haveCuda)
    s.deviceWhy = "default: a CUDA device is present";
  else
    s.deviceWhy = "default: no CUDA device (" + query.reason + ")";
  s.deviceName =
      s.device == Device::Cuda ? query.devices.front().name : cpuModel();
  // Settings of the CUDA backend would be ignored on the CPU: refuse them.
  for (const char *flag : {"no-graphs", "no-dependent-launch", "no-gemv"})
    if (parser.has(flag) && s.device != Device::Cuda)
      return usage(std::string("--") + flag +
                   " applies to --device cuda only (the device is cpu: " +
                   s.deviceWhy + ")");
  return 0;
}

std::vector<int32_t> benchPrompt(int64_t seq, int64_t tokens, int64_t vocab) {
  // Two prime strides (per sequence, per position) spread the ids over the
  // vocabulary and keep sequences apart; id 0 is avoided (often a special
  // token). Needs vocab >= 2 (runBench checks).
  std::vector<int32_t> ids;
  ids.reserve(size_t(tokens));
  for (int64_t t = 0; t < tokens; ++t)
    ids.push_back(int32_t(1 + (seq * 7919 + t * 104729) % (vocab - 1)));
  return ids;
}

namespace {

/// One test at one batch size: the requests of a run.
std::vector<GenerationRequest>
requestsFor(bool decode, int64_t batch, const BenchSettings &s, int64_t vocab) {
  std::vector<GenerationRequest> requests(static_cast<size_t>(batch));
  for (int64_t b = 0; b < batch; ++b) {
    GenerationRequest &r = requests[size_t(b)];
    if (decode) {
      // `depth` prompt tokens, whose prefill yields the first new token;
      // then genTokens decode steps of every sequence together.
      r.prompt = benchPrompt(b, s.depth, vocab);
      r.maxNewTokens = s.genTokens + 1;
    } else {
      // Prefill up to the first token: no decode step follows.
      r.prompt = benchPrompt(b, s.promptTokens, vocab);
      r.maxNewTokens = 1;
    }
  }
  return requests;
}

} // namespace

int checkBenchPlan(const BenchSettings &s, const std::string &tool,
                   const plan::Plan &plan) {
  if (s.maxBatch() > plan.limits.maxBatch) {
    std::fprintf(stderr,
                 "%s: error: --batch %lld exceeds the plan's limit of %lld "
                 "sequences per step (strata compile --max-batch)\n",
                 tool.c_str(), (long long)s.maxBatch(),
                 (long long)plan.limits.maxBatch);
    return 2;
  }
  if (s.genTokens > 0 && s.depth + s.genTokens + 1 > plan.maxPositions) {
    std::fprintf(stderr,
                 "%s: error: --depth %lld and --gen-tokens %lld make "
                 "sequences of %lld tokens, more than the model's %lld "
                 "positions\n",
                 tool.c_str(), (long long)s.depth, (long long)s.genTokens,
                 (long long)(s.depth + s.genTokens + 1),
                 (long long)plan.maxPositions);
    return 2;
  }
  if (plan.vocabSize < 2) {
    std::fprintf(stderr, "%s: error: the plan's vocabulary has %lld tokens\n",
                 tool.c_str(), (long long)plan.vocabSize);
    return 1;
  }
  return 0;
}

BenchMetadata benchMetadata(const BenchSettings &s, const BenchSource &source,
                            const plan::Plan &plan) {
  BenchMetadata meta;
  meta.tool = source.tool;
  meta.version = source.version;
  char host[256] = {0};
  if (gethostname(host, sizeof(host) - 1) == 0)
    meta.host = host;
  meta.cpu = cpuModel();
  meta.cpuThreads = std::thread::hardware_concurrency();
  meta.device = s.device == Device::Cuda ? "cuda" : "cpu";
  meta.deviceName = s.deviceName;
  meta.deviceWhy = s.deviceWhy;
  meta.cudaGraphs = s.cudaGraphs;
  meta.dependentLaunch = s.dependentLaunch;
  meta.decodeGemv = s.decodeGemv;
  meta.model = plan.modelName;
  meta.planSource = source.planSource;
  meta.planMaxTokens = plan.limits.maxTokens;
  meta.planMaxBatch = plan.limits.maxBatch;
  for (const plan::Program &p : plan.programs)
    meta.programs.push_back(p.phase);
  meta.fusions = plan::describeFusions(plan);
  meta.fusionsOn = plan::fusionsOn(plan);
  meta.fusionsOff = plan::fusionsOff(plan);
  meta.weightBytes = decodeWeightBytes(plan);
  meta.planWeightBytes = weightBytes(plan);
  meta.promptTokens = s.promptTokens;
  meta.genTokens = s.genTokens;
  meta.depth = s.depth;
  meta.repetitions = s.repetitions;
  meta.batches = s.batches;
  meta.bandwidthGBs = s.bandwidthGBs;
  // Without --weights the engine loads the plan's own: its checkpoint, or
  // random weights from its seed.
  meta.weights = !s.weightsPath.empty() ? s.weightsPath
                 : !plan.checkpoint.empty()
                     ? plan.checkpoint
                     : "random (seed " + std::to_string(plan.weightSeed) + ")";
  return meta;
}

namespace {

/// The engine the settings ask for; `keepLogits` as EngineOptions says.
EngineOptions engineOptionsOf(const BenchSettings &s, bool keepLogits) {
  EngineOptions options;
  options.device = s.device;
  options.cudaGraphs = s.cudaGraphs;
  options.cudaDependentLaunch = s.dependentLaunch;
  options.cudaDecodeGemv = s.decodeGemv;
  options.keepLogits = keepLogits;
  options.weightsPath = s.weightsPath;
  return options;
}

} // namespace

PlanRun runBenchTests(const BenchSettings &s, plan::Plan plan,
                      const std::string &label) {
  PlanRun out;
  // Only token ids are needed; copying logits back would be timed too.
  const EngineOptions options = engineOptionsOf(s, false);

  const int64_t vocab = plan.vocabSize;
  std::unique_ptr<Engine> engine =
      Engine::create(std::move(plan), options, out.error);
  if (!engine) {
    out.engineFailed = true;
    return out;
  }
  const bool progress = isatty(fileno(stderr));
  const std::string prefix = label.empty() ? "" : "[" + label + "] ";
  for (bool decode : {false, true}) {
    const int64_t n = decode ? s.genTokens : s.promptTokens;
    if (n == 0)
      continue;
    for (int64_t batch : s.batches) {
      BenchResult r;
      r.decode = decode;
      r.batch = batch;
      r.test = decode ? s.decodeTestName() : "pp" + std::to_string(n);
      std::vector<GenerationRequest> requests =
          requestsFor(decode, batch, s, vocab);
      std::vector<GenerationResult> outputs;
      std::vector<std::vector<int32_t>> tokens;
      // Run 0 is the warm-up (first-touch allocation, graph capture).
      for (int64_t run = 0; run <= s.repetitions; ++run) {
        if (progress)
          std::fprintf(stderr, "\r%s%s batch %lld: run %lld of %lld ",
                       prefix.c_str(), r.test.c_str(), (long long)batch,
                       (long long)run, (long long)s.repetitions);
        GenerationTimings t;
        std::string error;
        if (!engine->generate(requests, outputs, t, error)) {
          if (progress)
            std::fprintf(stderr, "\n");
          out.error = r.test + " batch " + std::to_string(batch) + ": " + error;
          return out;
        }
        if (run == 0) {
          // Greedy decoding: every run generates these same tokens.
          for (const GenerationResult &g : outputs)
            tokens.push_back(g.tokens);
          continue;
        }
        if (decode) {
          r.stepsPerRun = t.decodeSteps;
          r.tokensPerRun = batch * t.decodeSteps;
          r.seconds.push_back(t.decodeSeconds);
          r.promptSeconds.push_back(t.prefillSeconds);
        } else {
          r.tokensPerRun = t.prefillTokens;
          r.seconds.push_back(t.prefillSeconds);
        }
      }
      if (decode) {
        r.meanContext = s.decodeMeanContext();
        r.stepBytes = decodeStepBytes(engine->plan(), batch, r.meanContext);
        r.activationBytes = decodeActivationBytes(engine->plan(), batch);
      }
      out.results.push_back(std::move(r));
      out.tokens.push_back(std::move(tokens));
    }
  }
  if (progress)
    std::fprintf(stderr, "\r%70s\r", "");
  return out;
}

bool tokenLogits(const BenchSettings &s, const plan::Plan &plan,
                 const BenchResult &test, size_t sequence,
                 const std::vector<int32_t> &history,
                 std::vector<float> &logits, std::string &error) {
  std::unique_ptr<Engine> engine =
      Engine::create(plan, engineOptionsOf(s, true), error);
  if (!engine)
    return false;
  std::vector<GenerationRequest> requests =
      requestsFor(test.decode, test.batch, s, plan.vocabSize);
  if (sequence >= requests.size()) {
    error = "sequence " + std::to_string(sequence) + " is not in the test";
    return false;
  }
  GenerationRequest r = requests[sequence];
  r.prompt.insert(r.prompt.end(), history.begin(), history.end());
  r.maxNewTokens = 1;
  std::vector<GenerationResult> outputs;
  GenerationTimings timings;
  if (!engine->generate({r}, outputs, timings, error))
    return false;
  logits = outputs[0].lastLogits;
  return true;
}

void printBenchError(const std::string &tool, const std::string &error) {
  // Errors about a file (the weights) already read "FILE: error: ...".
  if (error.find(": error: ") != std::string::npos)
    std::fprintf(stderr, "%s\n", error.c_str());
  else
    std::fprintf(stderr, "%s: error: %s\n", tool.c_str(), error.c_str());
}

namespace {

/// --verify-tokens: each tree size at each batch, a decode step against a
/// verify step after `depth` cached tokens.
int runVerifyBench(const BenchSettings &s, const BenchSource &source,
                   plan::Plan plan) {
  const int64_t vocab = plan.vocabSize;
  std::string error;
  std::unique_ptr<Engine> engine =
      Engine::create(std::move(plan), engineOptionsOf(s, false), error);
  if (!engine) {
    printBenchError(source.tool, error);
    return 1;
  }
  std::printf("%s | %s | context %lld | %s (%s)\n\n",
              engine->plan().modelName.c_str(), engine->backendName(),
              (long long)s.depth, s.deviceName.c_str(), s.deviceWhy.c_str());
  if (!s.json)
    std::printf("| batch | tree tokens | decode step (ms) | verify step, "
                "argmax (ms) | verify / decode | verify step, logits (ms) "
                "| verify / decode |\n|---:|---:|---:|---:|---:|---:|---:|\n");
  for (int64_t batch : s.batches)
    for (int64_t tree : s.verifyTokens) {
      std::vector<std::vector<int32_t>> prompts;
      for (int64_t b = 0; b < batch; ++b)
        prompts.push_back(benchPrompt(b, s.depth + 1, vocab));
      VerifyTiming t;
      if (!engine->timeVerifySteps(prompts, tree, s.repetitions, t, error)) {
        printBenchError(source.tool, "verify " + std::to_string(tree) +
                                         " tokens, batch " +
                                         std::to_string(batch) + ": " + error);
        return 1;
      }
      if (s.json)
        std::printf("{\"batch\": %lld, \"context\": %lld, \"tree_tokens\": "
                    "%lld, \"decode_seconds\": %.9g, \"verify_seconds\": "
                    "%.9g, \"verify_logits_seconds\": %.9g}\n",
                    (long long)batch, (long long)s.depth, (long long)tree,
                    t.decodeSeconds, t.verifySeconds, t.verifyLogitsSeconds);
      else
        std::printf("| %lld | %lld | %.3f | %.3f | %.3f | %.3f | %.3f |\n",
                    (long long)batch, (long long)tree, t.decodeSeconds * 1e3,
                    t.verifySeconds * 1e3, t.verifySeconds / t.decodeSeconds,
                    t.verifyLogitsSeconds * 1e3,
                    t.verifyLogitsSeconds / t.decodeSeconds);
      std::fflush(stdout);
    }
  return 0;
}

} // namespace

int runBench(const BenchSettings &s, const BenchSource &source,
             plan::Plan plan) {
  if (int code = checkBenchPlan(s, source.tool, plan))
    return code;
  if (!s.verifyTokens.empty())
    return runVerifyBench(s, source, std::move(plan));
  BenchMetadata meta = benchMetadata(s, source, plan);
  if (s.json)
    std::fprintf(stderr, "%s: device %s (%s; %s)\n", source.tool.c_str(),
                 meta.device.c_str(), meta.deviceName.c_str(),
                 meta.deviceWhy.c_str());
  PlanRun run = runBenchTests(s, std::move(plan), "");
  if (!run.error.empty()) {
    printBenchError(source.tool, run.error);
    return 1;
  }
  if (s.json)
    printJson(stdout, meta, run.results);
  else
    printMarkdown(stdout, meta, run.results);
  return 0;
}

} // namespace strata::tools
