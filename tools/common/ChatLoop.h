// `strata chat MODEL`: an interactive conversation in the model's chat
// format. Each line read from stdin is a user message; the reply streams
// to stdout. The conversation stays in the KV cache between turns (an
// engine session), so a turn costs only its own tokens.
#ifndef STRATA_TOOLS_COMMON_CHATLOOP_H
#define STRATA_TOOLS_COMMON_CHATLOOP_H

#include "runtime/plan/Plan.h"
#include "tools/common/ArgParser.h"

#include <string>

namespace strata::tools {

/// The sampling options and --tokenizer, --chat-format, --system,
/// --context, --max-new-tokens, --weights, --device and --no-graphs.
void addChatOptions(ArgParser &parser);

/// Runs the conversation until stdin ends or a line is /exit. Returns the
/// exit code (2: a bad option; 1: the tokenizer, weights or a step fail).
int runChatLoop(const std::string &tool, const ArgParser &parser,
                plan::Plan plan, const std::string &source);

} // namespace strata::tools

#endif // STRATA_TOOLS_COMMON_CHATLOOP_H
