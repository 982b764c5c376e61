#include "tools/common/RunCommand.h"

#include "runtime/Engine.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
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

void addRunOptions(ArgParser &parser) {
  parser.addOption("prompt-ids", "IDS",
                   "prompt token ids, comma-separated (required)");
  parser.addOption("max-new-tokens", "N", "tokens to generate (default 16)");
  parser.addOption("temperature", "T", "0 for greedy decoding (default 0)");
  parser.addOption("top-k", "K", "keep the K most likely tokens (0: off)");
  parser.addOption("top-p", "P", "nucleus sampling mass in (0, 1] (1: off)");
  parser.addOption("seed", "S", "sampling seed (default 0)");
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
                 "cuda: launch every decode step eagerly instead of "
                 "replaying captured CUDA graphs");
  parser.addOption("logits-out", "FILE",
                   "write the logits row of each sequence's last step "
                   "(fp32, as JSON) to FILE");
}

int runGeneration(const std::string &tool, const ArgParser &parser,
                  plan::Plan plan) {
  auto usage = [&](const std::string &message) {
    std::fprintf(stderr, "%s: error: %s\n", tool.c_str(), message.c_str());
    return 2;
  };
  if (!parser.has("prompt-ids"))
    return usage("--prompt-ids is required (e.g. --prompt-ids 1,2,3)");
  GenerationRequest request;
  std::string ids = parser.get("prompt-ids");
  size_t start = 0;
  while (start <= ids.size()) {
    size_t comma = ids.find(',', start);
    std::string item = ids.substr(start, comma == std::string::npos
                                             ? std::string::npos
                                             : comma - start);
    int64_t id = 0;
    if (!parseInteger(item, 0, INT32_MAX, id))
      return usage("--prompt-ids expects comma-separated token ids, got '" +
                   item + "' in '" + ids + "'");
    if (id >= plan.vocabSize)
      return usage("--prompt-ids: token id " + std::to_string(id) +
                   " is outside the model's vocabulary (ids 0 to " +
                   std::to_string(plan.vocabSize - 1) + ")");
    request.prompt.push_back(int32_t(id));
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  int64_t value = 0;
  if (parser.has("max-new-tokens")) {
    if (!parseInteger(parser.get("max-new-tokens"), 0, 1 << 20, value))
      return usage("--max-new-tokens expects an integer in [0, 1048576], got '" +
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
  SamplingParams &sampling = request.sampling;
  if (parser.has("temperature") &&
      (!parseNumber(parser.get("temperature"), sampling.temperature) ||
       sampling.temperature < 0))
    return usage("--temperature expects a number >= 0 (0: greedy), got '" +
                 parser.get("temperature") + "'");
  if (parser.has("top-k")) {
    if (!parseInteger(parser.get("top-k"), 0, INT32_MAX, value))
      return usage("--top-k expects an integer >= 0 (0: off), got '" +
                   parser.get("top-k") + "'");
    sampling.topK = value;
  }
  if (parser.has("top-p") &&
      (!parseNumber(parser.get("top-p"), sampling.topP) ||
       !(sampling.topP > 0.0 && sampling.topP <= 1.0)))
    return usage("--top-p expects a number in (0, 1] (1: off), got '" +
                 parser.get("top-p") + "'");
  if (parser.has("seed")) {
    if (!parseInteger(parser.get("seed"), 0, INT64_MAX, value))
      return usage("--seed expects an integer >= 0, got '" +
                   parser.get("seed") + "'");
    sampling.seed = uint64_t(value);
  }
  int64_t batch = 1;
  if (parser.has("batch") &&
      !parseInteger(parser.get("batch"), 1, 4096, batch))
    return usage("--batch expects an integer in [1, 4096], got '" +
                 parser.get("batch") + "'");
  EngineOptions options;
  if (parser.has("kv-blocks") &&
      !parseInteger(parser.get("kv-blocks"), 1, INT32_MAX, options.kvBlocks))
    return usage("--kv-blocks expects an integer in [1, 2147483647], got '" +
                 parser.get("kv-blocks") + "'");
  options.weightsPath = parser.get("weights");
  if (parser.has("weights") && options.weightsPath.empty())
    return usage("--weights expects a path");
  if (parser.has("device")) {
    const std::string device = parser.get("device");
    if (device == "cuda")
      options.device = Device::Cuda;
    else if (device != "cpu")
      return usage("--device expects cpu or cuda, got '" + device + "'");
  }
  if (parser.has("no-graphs")) {
    if (options.device != Device::Cuda)
      return usage("--no-graphs applies to --device cuda only");
    options.cudaGraphs = false;
  }
  std::string logitsOut = parser.has("logits-out") ? parser.get("logits-out")
                                                   : std::string();
  if (parser.has("logits-out") && logitsOut.empty())
    return usage("--logits-out expects a path");
  if (!logitsOut.empty() && request.maxNewTokens == 0)
    return usage("--logits-out needs --max-new-tokens of at least 1 (the "
                 "logits are those of the step that produced the last "
                 "token)");
  std::string error;
  // An unwritable output is reported before the generation, not after it.
  if (!logitsOut.empty() && !checkWritable(logitsOut, error)) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return 1;
  }

  auto fail = [&](const std::string &message) {
    // Errors about a file (the plan, the weights) already read
    // "FILE: error: ...".
    if (message.find(": error: ") != std::string::npos)
      std::fprintf(stderr, "%s\n", message.c_str());
    else
      std::fprintf(stderr, "%s: error: %s\n", tool.c_str(), message.c_str());
    return 1;
  };
  std::vector<GenerationResult> results;
  GenerationTimings timings;
  std::string backend;
  // Sizes are checked against the memory they need before anything is
  // allocated (Engine); an allocation that fails all the same is still one
  // message, not an abort.
  try {
    std::unique_ptr<Engine> engine =
        Engine::create(std::move(plan), options, error);
    if (!engine)
      return fail(error);
    std::vector<GenerationRequest> requests(size_t(batch), request);
    if (!engine->generate(requests, results, timings, error))
      return fail(error);
    backend = engine->backendName();
  } catch (const std::bad_alloc &) {
    return fail("out of host memory");
  }
  if (!logitsOut.empty()) {
    for (const GenerationResult &r : results)
      if (r.lastLogits.empty())
        return fail("the engine kept no logits to write to '" + logitsOut +
                    "'");
    if (!writeLogits(logitsOut, results, error))
      return fail(error);
  }
  for (size_t r = 0; r < results.size(); ++r) {
    if (results.size() > 1)
      std::printf("sequence %zu:", r);
    else
      std::printf("tokens:");
    for (int32_t t : results[r].tokens)
      std::printf(" %d", t);
    std::printf("\n");
  }
  std::printf("prefill: %lld tokens in %lld step%s, %.2f ms (%.2f ms/token); "
              "decode: %lld steps of %lld sequences, %.2f ms/step (%s "
              "backend)\n",
              (long long)timings.prefillTokens,
              (long long)timings.prefillSteps,
              timings.prefillSteps == 1 ? "" : "s",
              timings.prefillSeconds * 1e3,
              timings.prefillTokens
                  ? timings.prefillSeconds * 1e3 / timings.prefillTokens
                  : 0.0,
              (long long)timings.decodeSteps, (long long)batch,
              timings.decodeSteps
                  ? timings.decodeSeconds * 1e3 / timings.decodeSteps
                  : 0.0,
              backend.c_str());
  return 0;
}

} // namespace strata::tools
