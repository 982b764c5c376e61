// `strata chat MODEL.yaml`: compile the model and talk with it
// (tools/common/ChatLoop.h): the generic forward on the CPU, the fused
// programs with --device cuda.
#include "tools/common/ChatLoop.h"
#include "tools/strata/Commands.h"
#include "tools/strata/ModelPlan.h"

#include <cstdio>

namespace strata::tools {

int runChat(const std::vector<std::string> &args) {
  ArgParser parser;
  addChatOptions(parser);
  parser.addFlag("help", "show this help");
  parser.addAlias("-h", "help");
  if (!parser.parse(args)) {
    std::fprintf(stderr,
                 "strata chat: error: %s\nrun 'strata chat --help' for usage\n",
                 parser.error().c_str());
    return kExitUsage;
  }
  if (parser.has("help")) {
    std::printf("usage: strata chat MODEL.yaml [options]\n\n"
                "Talks with the model: each line of input is a message in "
                "the model's chat\nformat, and the reply streams back. The "
                "conversation stays in the KV cache\nbetween turns.\n\n"
                "options:\n%s",
                parser.helpText().c_str());
    return kExitOk;
  }
  if (parser.positionals().size() != 1) {
    std::fprintf(stderr, "strata chat: error: expected one model file\n"
                         "run 'strata chat --help' for usage\n");
    return kExitUsage;
  }
  const bool fused = parser.has("device") && parser.get("device") == "cuda";
  plan::Plan plan;
  if (int code = compileModelPlan(parser.positionals().front(), fused,
                                  PlanLoweringOptions{}, plan))
    return code;
  return runChatLoop("strata chat", parser, std::move(plan),
                     parser.positionals().front());
}

} // namespace strata::tools
