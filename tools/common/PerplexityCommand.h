// `strata perplexity MODEL --file TEXT`: the mean negative log-likelihood
// and the perplexity of a model over a text, in non-overlapping windows of
// the context length (docs/cli.md states the convention).
#ifndef STRATA_TOOLS_COMMON_PERPLEXITYCOMMAND_H
#define STRATA_TOOLS_COMMON_PERPLEXITYCOMMAND_H

#include "runtime/plan/Plan.h"
#include "tools/common/ArgParser.h"

#include <cstdint>
#include <string>
#include <vector>

namespace strata::tools {

/// Declares --file, the window options, --tokenizer, --weights, --device
/// and --no-graphs (`strata perplexity`).
void addPerplexityOptions(ArgParser &parser);
/// Declares --context and --json only, for a front end that has the
/// others already (strata-run).
void addWindowOptions(ArgParser &parser);

/// Whether every logits launch of the plan has a row per token (the plan
/// was built with all-token logits), as scoring needs.
bool hasAllTokenLogits(const plan::Plan &plan);

/// What the windows add up to.
struct PerplexityTotals {
  int64_t tokens = 0;  ///< predicted tokens: the window lengths minus one
  int64_t windows = 0; ///< windows scored
  double nll = 0.0;    ///< sum of -log p over the predicted tokens
};

/// The windows of `ids` for a context of `context` tokens: [start, end)
/// pairs that cut `ids` into consecutive pieces of `context` tokens (the
/// last may be shorter); a last piece of one token predicts nothing and is
/// left out.
std::vector<std::pair<int64_t, int64_t>> perplexityWindows(int64_t numIds,
                                                           int64_t context);

/// Scores the file the option `fileOption` names (without its dashes) with
/// `plan`, which must have all-token logits, as the options say, and
/// prints the result. `source` is the model or plan file, for messages. Returns
/// the exit code: 2 for a bad option (message prefixed by `tool`), 1 when the
/// file, the tokenizer, the weights or a step fail.
int runPerplexity(const std::string &tool, const ArgParser &parser,
                  plan::Plan plan, const std::string &source,
                  const std::string &fileOption = "file");

} // namespace strata::tools

#endif // STRATA_TOOLS_COMMON_PERPLEXITYCOMMAND_H
