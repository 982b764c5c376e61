// `strata chat MODEL.yaml`: compile the model and talk with it
// (tools/common/ChatLoop.h): the generic forward on the CPU, the fused
// programs with --device cuda.
#include "tools/common/ChatLoop.h"
#include "tools/strata/Commands.h"
#include "tools/strata/ModelPlan.h"

namespace strata::tools {

int runChat(const std::vector<std::string> &args) {
  return runCompiledModel(
      "strata chat", args, addChatOptions,
      "usage: strata chat MODEL.yaml [options]\n\n"
      "Talks with the model: each line of input is a message in the model's "
      "chat\nformat, and the reply streams back. The conversation stays in "
      "the KV cache\nbetween turns.\n",
      runChatLoop);
}

} // namespace strata::tools
