// `strata serve MODEL.yaml|PLAN.splan`: the OpenAI-compatible server
// (tools/serve/, docs/serving.md) on a model compiled here (the generic
// forward on the CPU, the fused programs with --device cuda) or on a
// compiled plan.
#include "tools/serve/ServeCommand.h"
#include "tools/common/RunCommand.h"
#include "tools/strata/Commands.h"
#include "tools/strata/ModelPlan.h"

namespace strata::tools {

int runServe(const std::vector<std::string> &args) {
  setDraftPlanLoader(loadDraftModel);
  return runCompiledModel(
      "strata serve", args, serve::addServeOptions,
      "usage: strata serve MODEL.yaml|PLAN.splan [--host 127.0.0.1] "
      "[--port 8000] [options]\n\n"
      "Serves the model over HTTP with OpenAI's API: POST /v1/completions "
      "and\n/v1/chat/completions (streamed with \"stream\": true), GET "
      "/v1/models,\n/health and /metrics. Requests are batched continuously; "
      "SIGINT or SIGTERM\nstops the server (docs/serving.md).\n",
      serve::runServer, {}, {}, /*acceptPlans=*/true);
}

} // namespace strata::tools
