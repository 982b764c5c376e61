// The generation front end shared by `strata run MODEL.yaml` and
// `strata-run MODEL.splan`: the options, their checks, and the report.
#ifndef STRATA_TOOLS_COMMON_RUNCOMMAND_H
#define STRATA_TOOLS_COMMON_RUNCOMMAND_H

#include "runtime/plan/Plan.h"
#include "tools/common/ArgParser.h"

#include <string>

namespace strata::tools {

/// Declares --prompt-ids, --max-new-tokens, --temperature, --top-k,
/// --top-p, --seed, --batch, --kv-blocks and --weights.
void addRunOptions(ArgParser &parser);

/// Generates with `plan` as the options say and prints the tokens of each
/// sequence and the time per token. The weights come from --weights when
/// given, else they are the plan's own (its checkpoint, or random weights
/// from its seed). Returns the exit code: 2 for a bad option value (message
/// prefixed by `tool`), 1 when loading the weights or generation fails.
int runGeneration(const std::string &tool, const ArgParser &parser,
                  plan::Plan plan);

} // namespace strata::tools

#endif // STRATA_TOOLS_COMMON_RUNCOMMAND_H
