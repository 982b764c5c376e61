#include "tools/common/RunCommand.h"

#include "runtime/Engine.h"
#include "runtime/PlanTokenizer.h"
#include "runtime/TextStream.h"
#include "runtime/plan/PlanFile.h"
#include "tools/common/TextSetup.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <sys/stat.h>

namespace strata::tools {

namespace {

/// Writes the last logits row of every result as JSON:
/// {"vocab_size": V, "rows": [[l0, l1, ...], ...]}, one row per sequence.
/// The values are held as fp32 in the document, so that each prints with
/// the fewest digits that read back to exactly the same fp32 value.
bool writeLogits(const std::string &path,
                 const std::vector<GenerationResult> &results,
                 std::string &error) {
  // JSON has no NaN or infinity. The engine fails a step whose logits are
  // not finite, so this only guards the file format.
  for (const GenerationResult &r : results)
    for (float v : r.lastLogits)
      if (!std::isfinite(v)) {
        error = path + ": error: not written: the logits hold a non-finite "
                       "value";
        return false;
      }
  using Fp32Json =
      nlohmann::basic_json<nlohmann::ordered_map, std::vector, std::string,
                           bool, std::int64_t, std::uint64_t, float>;
  Fp32Json doc;
  doc["vocab_size"] = results.empty() ? 0 : results[0].lastLogits.size();
  Fp32Json &rows = doc["rows"] = Fp32Json::array();
  for (const GenerationResult &r : results)
    rows.push_back(r.lastLogits);
  FILE *f = std::fopen(path.c_str(), "w");
  if (!f) {
    error = path + ": error: cannot write logits: " + std::strerror(errno);
    return false;
  }
  std::string text = doc.dump();
  std::fprintf(f, "%s\n", text.c_str());
  bool ok = !std::ferror(f);
  ok &= std::fclose(f) == 0;
  if (!ok)
    error = path + ": error: cannot write logits: " + std::strerror(errno);
  return ok;
}

/// Whether `path` can be written, checked by opening it for appending
/// (which leaves an existing file as it is); a file this creates is
/// removed again.
bool checkWritable(const std::string &path, std::string &error) {
  struct stat st {};
  const bool existed = ::stat(path.c_str(), &st) == 0;
  if (existed && S_ISDIR(st.st_mode)) {
    error = path + ": error: cannot write logits: Is a directory";
    return false;
  }
  FILE *f = std::fopen(path.c_str(), "a");
  if (!f) {
    error = path + ": error: cannot write logits: " + std::strerror(errno);
    return false;
  }
  std::fclose(f);
  if (!existed)
    std::remove(path.c_str());
  return true;
}

} // namespace

int usageError(const std::string &tool, const std::string &message) {
  std::fprintf(stderr, "%s: error: %s\n", tool.c_str(), message.c_str());
  return 2;
}

int inputError(const std::string &tool, const std::string &message) {
  if (message.find(": error: ") != std::string::npos)
    std::fprintf(stderr, "%s\n", message.c_str());
  else
    std::fprintf(stderr, "%s: error: %s\n", tool.c_str(), message.c_str());
  return 1;
}

std::string parseSamplingOptions(const ArgParser &parser,
                                 SamplingParams &sampling) {
  int64_t value = 0;
  if (parser.has("temperature") &&
      (!parseNumber(parser.get("temperature"), sampling.temperature) ||
       sampling.temperature < 0))
    return std::string(
        "--temperature expects a number >= 0 (0: greedy), got '" +
        parser.get("temperature") + "'");
  if (parser.has("top-k")) {
    if (!parseInteger(parser.get("top-k"), 0, INT32_MAX, value))
      return std::string("--top-k expects an integer >= 0 (0: off), got '" +
                         parser.get("top-k") + "'");
    sampling.topK = value;
  }
  if (parser.has("top-p") &&
      (!parseNumber(parser.get("top-p"), sampling.topP) ||
       !(sampling.topP > 0.0 && sampling.topP <= 1.0)))
    return std::string("--top-p expects a number in (0, 1] (1: off), got '" +
                       parser.get("top-p") + "'");
  if (parser.has("seed")) {
    if (!parseInteger(parser.get("seed"), 0, INT64_MAX, value))
      return std::string("--seed expects an integer >= 0, got '" +
                         parser.get("seed") + "'");
    sampling.seed = uint64_t(value);
  }
  return "";
}

std::string parseEngineOptions(const ArgParser &parser,
                               EngineOptions &options) {
  if (parser.has("kv-blocks") &&
      !parseInteger(parser.get("kv-blocks"), 1, INT32_MAX, options.kvBlocks))
    return std::string(
        "--kv-blocks expects an integer in [1, 2147483647], got '" +
        parser.get("kv-blocks") + "'");
  options.weightsPath = parser.get("weights");
  if (parser.has("weights") && options.weightsPath.empty())
    return std::string("--weights expects a path");
  if (parser.has("device")) {
    const std::string device = parser.get("device");
    if (device == "cuda")
      options.device = Device::Cuda;
    else if (device != "cpu")
      return std::string("--device expects cpu or cuda, got '" + device + "'");
  }
  if (parser.has("no-graphs")) {
    if (options.device != Device::Cuda)
      return std::string("--no-graphs applies to --device cuda only");
    options.cudaGraphs = false;
  }
  return "";
}

void addSamplingOptions(ArgParser &parser) {
  parser.addOption("temperature", "T", "0 for greedy decoding (default 0)");
  parser.addOption("top-k", "K", "keep the K most likely tokens (0: off)");
  parser.addOption("top-p", "P", "nucleus sampling mass in (0, 1] (1: off)");
  parser.addOption("seed", "S", "sampling seed (default 0)");
  parser.addOption("tokenizer", "PATH",
                   "a tokenizer.json (or a folder holding one) instead of "
                   "the model's");
}

void addRunOptions(ArgParser &parser) {
  parser.addOption("prompt", "TEXT",
                   "the prompt as text (needs the model's tokenizer or "
                   "--tokenizer); the output is streamed as text");
  parser.addOption("prompt-file", "FILE", "the prompt as the text of FILE");
  parser.addOption("prompt-ids", "IDS",
                   "the prompt as token ids, comma-separated; the output is "
                   "ids");
  parser.addFlag("chat", "wrap the prompt in the model's chat format");
  parser.addOption("chat-format", "NAME",
                   "with --chat: llama3, chatml, mistral or llama2 (default: "
                   "recognized from the tokenizer's chat template)");
  parser.addOption("system", "TEXT", "with --chat: a system message");
  parser.addFlag("print-ids", "print token ids instead of text");
  parser.addFlag("ignore-eos",
                 "go on after the model's end-of-sequence tokens");
  parser.addOption("stop", "TEXT",
                   "end a sequence where its text contains TEXT (not "
                   "printed); repeatable");
  parser.addOption("max-new-tokens", "N", "tokens to generate (default 16)");
  addSamplingOptions(parser);
  parser.addOption("batch", "N",
                   "run N copies of the prompt as one batch (default 1)");
  parser.addOption("kv-blocks", "N",
                   "KV-cache blocks in the pool (default: enough for the "
                   "requests)");
  parser.addOption("weights", "PATH",
                   "load the weights from a .safetensors file or a "
                   "model.safetensors.index.json (default: the model's own, "
                   "its checkpoint or random weights from its seed)");
  parser.addOption("device", "cpu|cuda",
                   "where the programs run (default cpu); cuda needs a "
                   "fused plan and a Hopper GPU");
  parser.addFlag("no-graphs",
                 "cuda: launch every decode and verify step eagerly instead "
                 "of replaying captured CUDA graphs");
  parser.addOption("logits-out", "FILE",
                   "write the logits row of each sequence's last step "
                   "(fp32, as JSON) to FILE");
  parser.addOption("draft", "MODEL",
                   "speculative decoding: this smaller model of the same "
                   "vocabulary proposes tokens that the model verifies in "
                   "one step (a compiled plan, or for strata run also a "
                   "model file)");
  parser.addFlag("spec-lookup",
                 "speculative decoding with prompt lookup: the tokens that "
                 "followed the sequence's last few tokens where they "
                 "occurred before are proposed (no draft model)");
  parser.addOption("spec-tokens", "N",
                   "with --draft or --spec-lookup: tokens proposed per "
                   "step, 1 to 16 (default 4); with --spec-tree the tree's "
                   "tokens, 1 to 63 (default: the whole shape, at most 63)");
  parser.addOption("spec-tree", "B1,B2,...",
                   "with --draft: propose a token tree, the B1 most likely "
                   "tokens, the B2 most likely after each of them, and so "
                   "on (1 to 8 each, at most 16 levels), keeping the "
                   "--spec-tokens likeliest");
}

namespace {
DraftPlanLoader draftPlanLoader = readDraftPlan;
} // namespace

void setDraftPlanLoader(DraftPlanLoader loader) { draftPlanLoader = loader; }

int loadDraftPlan(const std::string &path, plan::Plan &out) {
  return draftPlanLoader(path, out);
}

bool attachDraftModel(Engine &engine, plan::Plan draftPlan,
                      const EngineOptions &options, int64_t tokens,
                      const std::vector<int64_t> &tree, std::string &error) {
  EngineOptions draftOptions = options;
  draftOptions.weightsPath.clear();
  draftOptions.kvBlocks = 0;
  std::unique_ptr<Engine> draft =
      Engine::create(std::move(draftPlan), draftOptions, error);
  if (!draft) {
    error = "the draft model: " + error;
    return false;
  }
  return engine.attachDraft(std::move(draft), tokens, error, tree);
}

int readDraftPlan(const std::string &path, plan::Plan &out) {
  std::string error;
  if (!plan::hasPlanSignature(path)) {
    std::fprintf(stderr,
                 "%s: error: --draft takes a compiled plan here (strata "
                 "compile DRAFT.yaml --emit=fused -o DRAFT.splan)\n",
                 path.c_str());
    return 1;
  }
  if (!plan::readPlanFile(path, out, error)) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return 1;
  }
  return 0;
}

int runGeneration(const std::string &tool, const ArgParser &parser,
                  plan::Plan plan, const std::string &source) {
  auto usage = [&](const std::string &m) { return usageError(tool, m); };
  auto failed = [&](const std::string &m) { return inputError(tool, m); };
  std::string error;
  std::optional<tok::Tokenizer> tokenizer;
  if (!loadRunTokenizer(parser, plan, source, tokenizer, error))
    return failed(error);
  const tok::Tokenizer *tk = tokenizer ? &*tokenizer : nullptr;
  Prompt prompt;
  bool badUsage = false;
  if (!readPrompt(parser, plan, tk, prompt, error, badUsage))
    return badUsage ? usage(error) : failed(error);
  GenerationRequest request;
  request.prompt = prompt.ids;
  const bool textOut = prompt.text && !parser.has("print-ids");
  const std::vector<std::string> stops = parser.getAll("stop");
  for (const std::string &stop : stops)
    if (stop.empty())
      return usage("--stop expects a non-empty text");
  if (!stops.empty() && !tk)
    return usage("--stop needs a tokenizer to see text: the model has none "
                 "and no --tokenizer was given");
  if (!parser.has("ignore-eos"))
    request.stopTokens = eosIdsOf(plan, tk);
  int64_t value = 0;
  if (parser.has("max-new-tokens")) {
    if (!parseInteger(parser.get("max-new-tokens"), 0, 1 << 20, value))
      return usage(
          "--max-new-tokens expects an integer in [0, 1048576], got '" +
          parser.get("max-new-tokens") + "'");
    request.maxNewTokens = value;
  }
  // A sequence's positions run from 0 to prompt + new tokens - 1; the
  // model's rotary tables and training end at max_position_embeddings.
  const int64_t length = int64_t(request.prompt.size()) + request.maxNewTokens;
  if (length > plan.maxPositions)
    return usage("the prompt (" + std::to_string(request.prompt.size()) +
                 " tokens) and --max-new-tokens " +
                 std::to_string(request.maxNewTokens) + " make " +
                 std::to_string(length) +
                 " positions, more than the model's max_position_embeddings (" +
                 std::to_string(plan.maxPositions) + ")");
  if (std::string bad = parseSamplingOptions(parser, request.sampling);
      !bad.empty())
    return usage(bad);
  int64_t batch = 1;
  if (parser.has("batch") && !parseInteger(parser.get("batch"), 1, 4096, batch))
    return usage("--batch expects an integer in [1, 4096], got '" +
                 parser.get("batch") + "'");
  EngineOptions options;
  if (std::string bad = parseEngineOptions(parser, options); !bad.empty())
    return usage(bad);
  const std::string draftPath = parser.get("draft");
  int64_t specTokens = 4;
  if (parser.has("draft") && draftPath.empty())
    return usage("--draft expects a model or plan path");
  const bool lookup = parser.has("spec-lookup");
  if (lookup && parser.has("draft"))
    return usage("--draft and --spec-lookup are two drafters; give one");
  if (parser.has("spec-tokens") && !parser.has("draft") && !lookup)
    return usage("--spec-tokens applies with --draft or --spec-lookup");
  std::vector<int64_t> specTree;
  if (parser.has("spec-tree") && !parser.has("draft"))
    return usage("--spec-tree applies with --draft");
  if (parser.has("spec-tree") &&
      (!parseIntegerList(parser.get("spec-tree"), 1, 8, specTree) ||
       specTree.empty() || specTree.size() > 16))
    return usage("--spec-tree expects 1 to 16 comma-separated integers in "
                 "[1, 8], got '" +
                 parser.get("spec-tree") + "'");
  const int64_t maxSpecTokens = specTree.empty() ? 16 : 63;
  // A tree's default size is the whole shape, up to the limit.
  if (!specTree.empty()) {
    int64_t level = 1;
    specTokens = 0;
    for (int64_t branching : specTree) {
      level = std::min<int64_t>(level * branching, maxSpecTokens);
      specTokens = std::min<int64_t>(specTokens + level, maxSpecTokens);
    }
  }
  if (parser.has("spec-tokens") &&
      !parseInteger(parser.get("spec-tokens"), 1, maxSpecTokens, specTokens))
    return usage("--spec-tokens expects an integer in [1, " +
                 std::to_string(maxSpecTokens) + "], got '" +
                 parser.get("spec-tokens") + "'");
  std::string logitsOut =
      parser.has("logits-out") ? parser.get("logits-out") : std::string();
  if (parser.has("logits-out") && logitsOut.empty())
    return usage("--logits-out expects a path");
  if (!logitsOut.empty() && request.maxNewTokens == 0)
    return usage("--logits-out needs --max-new-tokens of at least 1 (the "
                 "logits are those of the step that produced the last "
                 "token)");
  // An unwritable output is reported before the generation, not after it.
  if (!logitsOut.empty() && !checkWritable(logitsOut, error)) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return 1;
  }

  std::vector<GenerationResult> results;
  GenerationTimings timings;
  std::string backend;
  std::vector<std::string> stopStrings;
  // Sizes are checked against the memory they need before anything is
  // allocated (Engine); an allocation that fails all the same is still one
  // message, not an abort.
  try {
    std::unique_ptr<Engine> engine =
        Engine::create(std::move(plan), options, error);
    if (!engine)
      return failed(error);
    if (!draftPath.empty()) {
      plan::Plan draftPlan;
      if (int code = loadDraftPlan(draftPath, draftPlan))
        return code;
      // Its pool is sized for the requests.
      if (!attachDraftModel(*engine, std::move(draftPlan), options,
                            specTokens, specTree, error))
        return failed(error);
    }
    if (lookup && !engine->attachLookup(specTokens, error))
      return failed(error);
    // Text: each sequence decodes as it goes (stop strings end it); with
    // one sequence the text is streamed to stdout.
    std::vector<std::unique_ptr<TextStream>> streams;
    std::vector<GenerationRequest> requests(size_t(batch), request);
    if (tk && (textOut || !stops.empty()))
      for (size_t r = 0; r < requests.size(); ++r) {
        streams.push_back(std::make_unique<TextStream>(*tk, stops));
        TextStream *stream = streams.back().get();
        const bool echo = textOut && batch == 1;
        requests[r].onToken = [stream, echo](int32_t id) {
          const std::string text = stream->push(id);
          if (echo && !text.empty()) {
            std::fwrite(text.data(), 1, text.size(), stdout);
            std::fflush(stdout);
          }
          return !stream->stopped();
        };
      }
    if (!engine->generate(requests, results, timings, error))
      return failed(error);
    if (textOut) {
      for (size_t r = 0; r < streams.size(); ++r) {
        const std::string rest = streams[r]->finish();
        if (batch == 1)
          std::printf("%s\n", rest.c_str());
        else
          std::printf("sequence %zu: %s\n", r, (streams[r]->shown()).c_str());
      }
    }
    for (size_t r = 0; r < results.size(); ++r)
      if (!streams.empty() && streams[r]->stopped())
        stopStrings.push_back(streams[r]->stopString());
      else
        stopStrings.push_back("");
    backend = engine->backendName();
  } catch (const std::bad_alloc &) {
    return failed("out of host memory");
  }
  if (!logitsOut.empty()) {
    for (const GenerationResult &r : results)
      if (r.lastLogits.empty())
        return failed("the engine kept no logits to write to '" + logitsOut +
                      "'");
    if (!writeLogits(logitsOut, results, error))
      return failed(error);
  }
  // Why each sequence ended: text mode says it on stderr (stdout holds
  // the text); with ids, after the ids of a sequence that did not just
  // run out of tokens.
  auto reason = [&](size_t r) -> std::string {
    const GenerationResult &res = results[r];
    switch (res.finish) {
    case FinishReason::Length:
      return "--max-new-tokens " + std::to_string(request.maxNewTokens) +
             " reached";
    case FinishReason::StopToken:
      return "end of sequence (token " + std::to_string(res.tokens.back()) +
             ")";
    case FinishReason::Callback:
      return "stop string \"" + stopStrings[r] + "\"";
    }
    return "";
  };
  if (!textOut)
    for (size_t r = 0; r < results.size(); ++r) {
      if (results.size() > 1)
        std::printf("sequence %zu:", r);
      else
        std::printf("tokens:");
      for (int32_t t : results[r].tokens)
        std::printf(" %d", t);
      if (results[r].finish != FinishReason::Length)
        std::printf(" (stopped: %s)", reason(r).c_str());
      std::printf("\n");
    }
  FILE *report = textOut ? stderr : stdout;
  std::fflush(stdout); // the text before what is said about it
  if (textOut)
    for (size_t r = 0; r < results.size(); ++r)
      std::fprintf(stderr, "%sstopped: %s\n",
                   results.size() > 1
                       ? ("sequence " + std::to_string(r) + " ").c_str()
                       : "",
                   reason(r).c_str());
  std::fprintf(
      report,
      "prefill: %lld tokens in %lld step%s, %.2f ms (%.2f ms/token); "
      "decode: %lld steps of %lld sequences, %.2f ms/step (%s "
      "backend)\n",
      (long long)timings.prefillTokens, (long long)timings.prefillSteps,
      timings.prefillSteps == 1 ? "" : "s", timings.prefillSeconds * 1e3,
      timings.prefillTokens
          ? timings.prefillSeconds * 1e3 / timings.prefillTokens
          : 0.0,
      (long long)timings.decodeSteps, (long long)batch,
      timings.decodeSteps ? timings.decodeSeconds * 1e3 / timings.decodeSteps
                          : 0.0,
      backend.c_str());
  if (!draftPath.empty() || lookup) {
    // Each verification of a sequence keeps its accepted draft tokens and
    // adds the model's own next token.
    const int64_t verified = timings.verifiedSequences;
    std::fprintf(
        report,
        "speculative: %s proposed %lld tokens, the model accepted "
        "%lld (%.1f%%); mean accepted length %.2f tokens per verification "
        "(of at most %lld); draft %.2f ms in %lld steps, verify %.2f ms in "
        "%lld steps\n",
        lookup ? "prompt lookup" : "the draft",
        (long long)timings.proposedTokens, (long long)timings.acceptedTokens,
        timings.proposedTokens
            ? 100.0 * double(timings.acceptedTokens) /
                  double(timings.proposedTokens)
            : 0.0,
        verified ? double(timings.acceptedTokens + verified) / double(verified)
                 : 0.0,
        (long long)(specTree.empty()
                        ? specTokens + 1
                        : std::min<int64_t>(int64_t(specTree.size()),
                                            specTokens) +
                              1),
        timings.draftSeconds * 1e3,
        (long long)timings.draftSteps, timings.verifySeconds * 1e3,
        (long long)timings.verifySteps);
  }
  return 0;
}

} // namespace strata::tools
