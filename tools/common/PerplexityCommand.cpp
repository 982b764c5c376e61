#include "tools/common/PerplexityCommand.h"

#include "runtime/Engine.h"
#include "tools/common/RunCommand.h"
#include "tools/common/TextSetup.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <optional>
#include <unistd.h>

namespace strata::tools {

void addWindowOptions(ArgParser &parser) {
  parser.addOption("context", "N",
                   "tokens per window, 2 to the model's positions (default: "
                   "the model's positions, max_position_embeddings)");
  parser.addFlag("json", "print the result as one JSON object");
}

void addPerplexityOptions(ArgParser &parser) {
  parser.addOption("file", "TEXT", "the text to score (required)");
  addWindowOptions(parser);
  parser.addOption("tokenizer", "PATH",
                   "a tokenizer.json (or a folder holding one) instead of "
                   "the model's");
  parser.addOption("weights", "PATH",
                   "load the weights from a .safetensors file or a "
                   "model.safetensors.index.json (default: the model's own)");
  parser.addOption("device", "cpu|cuda",
                   "where the programs run (default cpu); cuda needs a "
                   "fused plan and a Hopper GPU");
  parser.addFlag("no-graphs", "cuda: launch every step eagerly");
}

std::vector<std::pair<int64_t, int64_t>> perplexityWindows(int64_t numIds,
                                                           int64_t context) {
  std::vector<std::pair<int64_t, int64_t>> windows;
  for (int64_t start = 0; start + 1 < numIds; start += context)
    windows.emplace_back(start, std::min(numIds, start + context));
  return windows;
}

namespace {

/// One line redrawn in place: how many windows are done and the running
/// perplexity. Only when stderr is a terminal, so that logs and tests see
/// none of it.
class ProgressBar {
public:
  explicit ProgressBar(int64_t total)
      : total_(total), on_(::isatty(STDERR_FILENO) == 1) {}
  void update(int64_t done, const PerplexityTotals &t) {
    if (!on_)
      return;
    constexpr int kWidth = 30;
    const int filled = int(kWidth * done / std::max<int64_t>(total_, 1));
    std::fprintf(stderr, "\r[%.*s%*s] %lld/%lld windows  perplexity %.3f",
                 filled, "==============================", kWidth - filled, "",
                 (long long)done, (long long)total_,
                 t.tokens ? std::exp(t.nll / double(t.tokens)) : 0.0);
    std::fflush(stderr);
    drawn_ = true;
  }
  /// Erases the bar, so that the result or an error starts a clean line.
  void finish() {
    if (on_ && drawn_)
      std::fprintf(stderr, "\r\033[K");
    drawn_ = false;
  }
  ~ProgressBar() { finish(); }

private:
  int64_t total_;
  bool on_;
  bool drawn_ = false;
};

} // namespace

bool hasAllTokenLogits(const plan::Plan &plan) {
  bool any = false;
  for (const plan::Program &p : plan.programs)
    for (const plan::Launch &l : p.launches)
      if (l.kernel() == plan::Kernel::Logits) {
        if (!l.as<plan::LogitsParams>().allTokens)
          return false;
        any = true;
      }
  return any;
}

int runPerplexity(const std::string &tool, const ArgParser &parser,
                  plan::Plan plan, const std::string &source,
                  const std::string &fileOption) {
  const std::string option = "--" + fileOption;
  if (!parser.has(fileOption))
    return usageError(tool, option + " TEXT is required: the text to score");
  int64_t context = plan.maxPositions;
  if (parser.has("context") &&
      !parseInteger(parser.get("context"), 2, plan.maxPositions, context))
    return usageError(tool, "--context expects an integer in [2, " +
                                std::to_string(plan.maxPositions) +
                                "] (the model's positions), got '" +
                                parser.get("context") + "'");
  EngineOptions options;
  if (std::string bad = parseEngineOptions(parser, options); !bad.empty())
    return usageError(tool, bad);
  options.keepLogits = false;
  // Checked before the weights load: a generation plan cannot score.
  if (!hasAllTokenLogits(plan))
    return inputError(tool, source +
                                ": error: the plan's logits are one row per "
                                "sequence; scoring needs one for every "
                                "position (strata compile "
                                "--all-token-logits)");

  std::optional<tok::Tokenizer> tokenizer;
  std::string error;
  if (!loadRunTokenizer(parser, plan, source, tokenizer, error))
    return inputError(tool, error);
  if (!tokenizer)
    return usageError(tool,
                      "perplexity needs a tokenizer: the model has none (a "
                      "'tokenizer:' entry in the model file, which import-hf "
                      "writes) and no --tokenizer was given");
  const std::string path = parser.get(fileOption);
  std::string text;
  if (!readTextFile(path, option, text, error))
    return inputError(tool, error);
  if (text.empty())
    return inputError(tool,
                      path + ": error: " + option + ": the file is empty");
  // The whole text at once, with the tokenizer's special tokens (its BOS),
  // as Hugging Face's perplexity recipe encodes it.
  std::vector<int32_t> ids;
  try {
    ids = tokenizer->encode(text, true);
  } catch (const tok::TokenizerError &e) {
    return inputError(tool, path + ": error: " + option + ": " + e.what());
  }
  if (ids.size() < 2)
    return inputError(tool, path + ": error: " + option +
                                ": the text encodes to " +
                                (ids.empty() ? "no tokens" : "1 token") +
                                "; perplexity needs at least 2");

  auto engine = Engine::create(std::move(plan), options, error);
  if (!engine)
    return inputError(tool, error);
  const auto windows = perplexityWindows(int64_t(ids.size()), context);
  PerplexityTotals totals;
  ProgressBar bar(int64_t(windows.size()));
  std::vector<double> logprobs;
  for (const auto &[start, end] : windows) {
    std::vector<int32_t> window(ids.begin() + start, ids.begin() + end);
    if (!engine->score(window, logprobs, error)) {
      bar.finish();
      return inputError(tool, "window of tokens " + std::to_string(start) +
                                  " to " + std::to_string(end - 1) + ": " +
                                  error);
    }
    for (double lp : logprobs)
      totals.nll -= lp;
    totals.tokens += int64_t(logprobs.size());
    ++totals.windows;
    bar.update(totals.windows, totals);
  }
  bar.finish();
  const double mean = totals.nll / double(totals.tokens);
  const double perplexity = std::exp(mean);
  if (parser.has("json")) {
    nlohmann::ordered_json doc;
    doc["tokens"] = totals.tokens;
    doc["windows"] = totals.windows;
    doc["context"] = context;
    doc["nll"] = mean;
    doc["perplexity"] = perplexity;
    std::printf("%s\n", doc.dump().c_str());
  } else {
    std::printf("tokens: %lld  nll: %.4f  perplexity: %.3f\n",
                (long long)totals.tokens, mean, perplexity);
  }
  return 0;
}

} // namespace strata::tools
