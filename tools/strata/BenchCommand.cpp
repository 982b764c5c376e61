// `strata bench MODEL.yaml`: compile the model's fused phase programs to a
// plan in memory (what `strata compile --emit=fused -o M.splan` writes) and
// benchmark it with the code `strata-bench` runs (tools/common/BenchCommand.h).
// `--ablate-passes` compiles one plan with every fusion and one without each
// and compares them (tools/common/Ablation.h).
#include "tools/common/BenchCommand.h"
#include "tools/common/Ablation.h"
#include "tools/strata/Commands.h"
#include "tools/strata/ModelPlan.h"

#include <algorithm>
#include <cstdio>

#ifndef STRATA_VERSION
#define STRATA_VERSION "unknown"
#endif

namespace strata::tools {

namespace {

/// "compiled from M.yaml (--emit=fused --disable-pass=a,b)".
std::string compiledFrom(const std::string &model,
                         const std::set<std::string> &disabled) {
  std::string flags = "--emit=fused";
  if (!disabled.empty()) {
    flags += " --disable-pass=";
    for (auto it = disabled.begin(); it != disabled.end(); ++it)
      flags += (it == disabled.begin() ? "" : ",") + *it;
  }
  return "compiled from " + model + " (" + flags + ")";
}

/// The reference with every fusion, then one plan without each, in
/// pipeline order.
int compileAblationPlans(const std::string &model,
                         const PlanLoweringOptions &options,
                         std::vector<AblationPlan> &plans) {
  std::vector<std::string> leftOut{""};
  for (llvm::StringRef name : fusionPassNames())
    leftOut.push_back(name.str());
  for (const std::string &name : leftOut) {
    FusionPipelineConfig config;
    if (!name.empty())
      config.disabled.insert(name);
    AblationPlan p;
    p.label = name.empty() ? "none" : name;
    p.source = compiledFrom(model, config.disabled);
    if (int code = compileModelPlan(model, config, options, p.plan))
      return code;
    plans.push_back(std::move(p));
  }
  return kExitOk;
}

} // namespace

int runBenchmark(const std::vector<std::string> &args) {
  ArgParser parser;
  addBenchOptions(parser);
  addDisablePassOption(parser);
  parser.addFlag("ablate-passes",
                 "compile one plan with every fusion and one without each, "
                 "run the tests on each and compare them in one table "
                 "(greedy tokens must agree)");
  parser.addFlag("help", "show this help");
  parser.addAlias("-h", "help");
  auto usageError = [](const std::string &message) {
    std::fprintf(
        stderr,
        "strata bench: error: %s\nrun 'strata bench --help' for usage\n",
        message.c_str());
    return kExitUsage;
  };
  if (!parser.parse(args))
    return usageError(parser.error());
  if (parser.has("help")) {
    std::printf("usage: strata bench MODEL.yaml [options]\n\n"
                "Compiles the model's fused plan and measures prefill (ppN) "
                "and decode\n(tgN) tokens/s at each batch size, and the "
                "decode steps' fraction of\nthe memory roofline. With "
                "--ablate-passes, the same for a plan without\neach fusion "
                "pass, against the plan with all of them.\n\n"
                "options:\n%s",
                parser.helpText().c_str());
    return kExitOk;
  }
  if (parser.positionals().size() != 1)
    return usageError("expected one model file");
  FusionPipelineConfig fusion;
  if (parser.has("disable-pass")) {
    if (parser.has("ablate-passes"))
      return usageError("--ablate-passes compiles its own plans, one without "
                        "each fusion; it does not take --disable-pass");
    if (std::string bad =
            parseDisabledPasses(parser.get("disable-pass"), fusion.disabled);
        !bad.empty())
      return usageError(bad);
  }
  BenchSettings settings;
  if (int code = parseBenchSettings("strata bench", parser, settings))
    return code;

  const std::string &modelPath = parser.positionals().front();
  // The compile defaults, raised where the largest batch needs more.
  PlanLoweringOptions planOptions;
  planOptions.maxBatch = std::max(planOptions.maxBatch, settings.maxBatch());
  planOptions.maxTokens = std::max(planOptions.maxTokens, planOptions.maxBatch);

  BenchSource source;
  source.tool = "strata bench";
  source.version = STRATA_VERSION;
  if (parser.has("ablate-passes")) {
    std::vector<AblationPlan> plans;
    if (int code = compileAblationPlans(modelPath, planOptions, plans))
      return code;
    source.planSource = "compiled from " + modelPath +
                        " (--emit=fused), once with every fusion and once "
                        "without each: " +
                        std::to_string(plans.size()) + " plans";
    return runAblation(settings, source, std::move(plans));
  }
  plan::Plan plan;
  if (int code = compileModelPlan(modelPath, fusion, planOptions, plan))
    return code;
  source.planSource = compiledFrom(modelPath, fusion.disabled);
  return runBench(settings, source, std::move(plan));
}

} // namespace strata::tools
