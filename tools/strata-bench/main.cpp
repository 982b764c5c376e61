// strata-bench: the runtime-only benchmark front end. It links no MLIR, so
// it runs on the GPU machine: it reads a compiled plan (`strata compile
// MODEL.yaml --emit=fused -o MODEL.splan`) and measures prefill and decode
// throughput with it (tools/common/BenchCommand.h). `--serve URL` measures
// a running server instead, as `strata bench-serve` does
// (tools/serve/BenchServe.h), when the build has cpp-httplib.
#include "runtime/plan/PlanFile.h"
#include "tools/common/Ablation.h"
#include "tools/common/ArgParser.h"
#include "tools/common/BenchCommand.h"
#ifdef STRATA_HAVE_BENCH_SERVE
#include "tools/serve/BenchServe.h"
#endif

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

/// The options that measure a plan.
void addPlanOptions(tools::ArgParser &parser) {
  tools::addBenchOptions(parser);
  parser.addFlag("ablate-passes",
                 "run the tests on each of several plans of one model "
                 "(PLAN...; compiled with different --disable-pass) and "
                 "compare them with the first in one table");
}

void addGeneralOptions(tools::ArgParser &parser) {
#ifdef STRATA_HAVE_BENCH_SERVE
  parser.addOption("serve", "URL",
                   "measure the OpenAI-compatible server at URL "
                   "(http://HOST:PORT) under load instead of a plan, with "
                   "the serve options below (strata bench-serve)");
#else
  parser.addOption("serve", "URL",
                   "unavailable: this build has no cpp-httplib");
#endif
  parser.addFlag("version", "print the version and exit");
  parser.addFlag("help", "show this help");
  parser.addAlias("-h", "help");
}

int usageError(const std::string &message) {
  std::fprintf(stderr,
               "strata-bench: error: %s\nrun 'strata-bench --help' for "
               "usage\n",
               message.c_str());
  return 2;
}

#ifdef STRATA_HAVE_BENCH_SERVE
/// `strata-bench --serve URL [options]`: `strata bench-serve --url URL`.
int benchServer(const tools::ArgParser &parser) {
  tools::ArgParser planOptions;
  addPlanOptions(planOptions);
  for (const std::string &name : planOptions.names())
    if (parser.has(name))
      return usageError("--" + name +
                        " measures a plan; --serve measures a server and "
                        "does not take it");
  if (!parser.positionals().empty())
    return usageError("--serve measures a server: it takes no plan file "
                      "(got '" +
                      parser.positionals().front() + "')");
  serve::BenchServeSettings settings;
  if (int code = serve::parseBenchServeSettings("strata-bench", parser, "serve",
                                                settings))
    return code;
  return serve::runBenchServe(settings, "strata-bench", STRATA_VERSION);
}
#endif

} // namespace

int main(int argc, char **argv) {
  using namespace strata::tools;
  const std::vector<std::string> args(argv + 1, argv + argc);
#ifndef STRATA_HAVE_BENCH_SERVE
  // Said before parsing, which would only call the serve options unknown.
  for (const std::string &arg : args)
    if (arg == "--serve" || arg.rfind("--serve=", 0) == 0) {
      std::fprintf(stderr,
                   "strata-bench: error: --serve is unavailable: this build "
                   "has no cpp-httplib (install libcpp-httplib-dev and "
                   "configure again)\n");
      return 1;
    }
#endif
  ArgParser parser;
  addPlanOptions(parser);
  addGeneralOptions(parser);
  ArgParser serveOptions;
#ifdef STRATA_HAVE_BENCH_SERVE
  strata::serve::addBenchServeOptions(serveOptions, /*withUrl=*/false);
  strata::serve::addBenchServeOptions(parser, /*withUrl=*/false);
#endif
  if (!parser.parse(args))
    return usageError(parser.error());
  if (parser.has("help") || argc == 1) {
    ArgParser general;
    addPlanOptions(general);
    addGeneralOptions(general);
    std::printf("usage: strata-bench MODEL.splan [options]\n"
                "       strata-bench --ablate-passes REFERENCE.splan "
                "PLAN.splan... [options]\n"
                "       strata-bench --serve http://HOST:PORT --vocab N "
                "[serve options]\n\n"
                "Measures prefill (ppN) and decode (tgN) tokens/s of a "
                "compiled plan\nat each batch size, and the decode steps' "
                "fraction of the memory\nroofline. With --serve, a running "
                "OpenAI-compatible server under load:\nthroughput and TTFT, "
                "TPOT, ITL and end-to-end latency.\n\noptions:\n%s",
                general.helpText().c_str());
    if (!serveOptions.names().empty())
      std::printf("\nserve options (with --serve):\n%s",
                  serveOptions.helpText().c_str());
    return argc == 1 ? 2 : 0;
  }
  if (parser.has("version")) {
    std::printf("strata-bench %s\n", STRATA_VERSION);
    return 0;
  }
#ifdef STRATA_HAVE_BENCH_SERVE
  if (parser.has("serve"))
    return benchServer(parser);
#endif
  for (const std::string &name : serveOptions.names())
    if (parser.has(name))
      return usageError("--" + name + " applies to --serve URL only");
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
