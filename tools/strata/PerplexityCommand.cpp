// `strata perplexity MODEL.yaml --file TEXT`: compile the model to a
// scoring plan (every position's logits) in memory and report the mean
// negative log-likelihood and the perplexity of the text
// (tools/common/PerplexityCommand.h).
#include "tools/common/PerplexityCommand.h"
#include "tools/strata/Commands.h"
#include "tools/strata/ModelPlan.h"

namespace strata::tools {

int runPerplexityCommand(const std::vector<std::string> &args) {
  BuildOptions build;
  build.allTokenLogits = true;
  // A step's logits are [tokens, vocab] fp32: 512 tokens keep them at 256
  // MiB for a vocabulary of 128k (a window longer than a step is fed in
  // chunks). One sequence at a time.
  PlanLoweringOptions lowering;
  lowering.maxTokens = 512;
  lowering.maxBatch = 1;
  return runCompiledModel(
      "strata perplexity", args, addPerplexityOptions,
      "usage: strata perplexity MODEL.yaml --file TEXT [options]\n\n"
      "Scores a text with the model: the text is encoded once with the "
      "tokenizer's\nspecial tokens and cut into windows of --context tokens; "
      "each window is\nscored on its own, every token after its first given "
      "the ones before it.\nPrints the predicted tokens, their mean negative "
      "log-likelihood and\nexp(nll), the perplexity.\n",
      [](const std::string &tool, const ArgParser &parser, plan::Plan plan,
         const std::string &source) {
        return runPerplexity(tool, parser, std::move(plan), source);
      },
      build, lowering);
}

} // namespace strata::tools
