// strata-bench: the runtime-only benchmark front end. It links no MLIR, so
// it runs on the GPU machine: it reads a compiled plan (`strata compile
// MODEL.yaml --emit=fused -o MODEL.splan`) and measures prefill and decode
// throughput with it (tools/common/BenchCommand.h).
#include "runtime/plan/PlanFile.h"
#include "tools/common/Ablation.h"
#include "tools/common/ArgParser.h"
#include "tools/common/BenchCommand.h"

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#ifndef STRATA_VERSION
#define STRATA_VERSION "unknown"
#endif

namespace {

using namespace strata;

/// The fusions a plan leaves out, as the ablation table's first column
/// names them, with the file: "strata-fuse-qkv (no-qkv.splan)".
std::string ablationLabel(const plan::Plan &p, const std::string &path) {
  std::string label;
  for (const std::string &name : plan::fusionsOff(p))
    label += (label.empty() ? "" : "+") + name;
  if (label.empty())
    label = p.fusions.empty() ? "unfused" : "none";
  return label + " (" + std::filesystem::path(path).filename().string() + ")";
}

/// `strata-bench --ablate-passes A.splan B.splan ...`: the plans of one
/// model, compiled with different fusions, against the first.
int ablate(const tools::BenchSettings &settings, tools::BenchSource source,
           const std::vector<std::string> &paths) {
  std::vector<tools::AblationPlan> plans;
  for (const std::string &path : paths) {
    tools::AblationPlan p;
    std::string error;
    if (!plan::readPlanFile(path, p.plan, error)) {
      std::fprintf(stderr, "%s\n", error.c_str());
      return 1;
    }
    const plan::Plan &first = plans.empty() ? p.plan : plans.front().plan;
    // Tokens of two models cannot be compared.
    if (p.plan.modelName != first.modelName ||
        p.plan.vocabSize != first.vocabSize) {
      std::fprintf(stderr,
                   "strata-bench: error: --ablate-passes compares plans of "
                   "one model; %s is of '%s' (vocab %lld), %s of '%s' "
                   "(vocab %lld)\n",
                   path.c_str(), p.plan.modelName.c_str(),
                   (long long)p.plan.vocabSize, paths.front().c_str(),
                   first.modelName.c_str(), (long long)first.vocabSize);
      return 2;
    }
    p.label = ablationLabel(p.plan, path);
    p.source = "file " + path;
    plans.push_back(std::move(p));
  }
  source.planSource = std::to_string(plans.size()) + " files, " +
                      paths.front() + " the reference";
  return tools::runAblation(settings, source, std::move(plans));
}

} // namespace

int main(int argc, char **argv) {
  using namespace strata::tools;
  ArgParser parser;
  addBenchOptions(parser);
  parser.addFlag("ablate-passes",
                 "run the tests on each of several plans of one model "
                 "(PLAN...; compiled with different --disable-pass) and "
                 "compare them with the first in one table");
  parser.addFlag("version", "print the version and exit");
  parser.addFlag("help", "show this help");
  parser.addAlias("-h", "help");
  if (!parser.parse(std::vector<std::string>(argv + 1, argv + argc))) {
    std::fprintf(stderr,
                 "strata-bench: error: %s\nrun 'strata-bench --help' for "
                 "usage\n",
                 parser.error().c_str());
    return 2;
  }
  if (parser.has("help") || argc == 1) {
    std::printf("usage: strata-bench MODEL.splan [options]\n"
                "       strata-bench --ablate-passes REFERENCE.splan "
                "PLAN.splan... [options]\n\n"
                "Measures prefill (ppN) and decode (tgN) tokens/s of a "
                "compiled plan\nat each batch size, and the decode steps' "
                "fraction of the memory\nroofline.\n\noptions:\n%s",
                parser.helpText().c_str());
    return argc == 1 ? 2 : 0;
  }
  if (parser.has("version")) {
    std::printf("strata-bench %s\n", STRATA_VERSION);
    return 0;
  }
  const bool ablation = parser.has("ablate-passes");
  if (ablation ? parser.positionals().size() < 2
               : parser.positionals().size() != 1) {
    std::fprintf(stderr,
                 "strata-bench: error: %s\nrun 'strata-bench --help' for "
                 "usage\n",
                 ablation ? "--ablate-passes expects two plan files or more, "
                            "the reference first"
                          : "expected one plan file");
    return 2;
  }
  BenchSettings settings;
  if (int code = parseBenchSettings("strata-bench", parser, settings))
    return code;
  BenchSource source;
  source.tool = "strata-bench";
  source.version = STRATA_VERSION;
  if (ablation)
    return ablate(settings, source, parser.positionals());
  const std::string &path = parser.positionals().front();
  strata::plan::Plan plan;
  std::string error;
  if (!strata::plan::readPlanFile(path, plan, error)) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return 1;
  }
  source.planSource = "file " + path;
  return runBench(settings, source, std::move(plan));
}
