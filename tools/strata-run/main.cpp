// strata-run: the runtime-only front end. It links no MLIR, so it runs on
// machines that only have the CUDA runtime: it reads a compiled plan
// (`strata compile MODEL.yaml -o MODEL.splan`) and generates with it,
// scores a text with it (--perplexity, a plan compiled with
// --all-token-logits), or lists the devices.
#include "runtime/Devices.h"
#include "runtime/plan/PlanFile.h"
#include "tools/common/ArgParser.h"
#include "tools/common/PerplexityCommand.h"
#include "tools/common/RunCommand.h"

#include <cstdio>
#include <string>
#include <vector>

#ifndef STRATA_VERSION
#define STRATA_VERSION "unknown"
#endif

int main(int argc, char **argv) {
  strata::tools::ArgParser parser;
  strata::tools::addRunOptions(parser);
  parser.addOption("perplexity", "FILE",
                   "score the text of FILE instead of generating: mean NLL "
                   "and perplexity (a plan compiled with --all-token-logits; "
                   "see strata perplexity)");
  strata::tools::addWindowOptions(parser);
  parser.addFlag("list-devices", "list the CUDA devices and exit");
  parser.addFlag("version", "print the version and exit");
  parser.addFlag("help", "show this help");
  parser.addAlias("-h", "help");
  if (!parser.parse(std::vector<std::string>(argv + 1, argv + argc))) {
    std::fprintf(stderr,
                 "strata-run: error: %s\nrun 'strata-run --help' for "
                 "usage\n",
                 parser.error().c_str());
    return 2;
  }
  if (parser.has("help") || argc == 1) {
    std::printf("usage: strata-run MODEL.splan --prompt TEXT [options]\n"
                "       strata-run MODEL.splan --prompt-ids IDS [options]\n"
                "       strata-run MODEL.splan --perplexity FILE [options]\n"
                "       strata-run --list-devices\n\noptions:\n%s",
                parser.helpText().c_str());
    return argc == 1 ? 2 : 0;
  }
  if (parser.has("version")) {
    std::printf("strata-run %s\n", STRATA_VERSION);
    return 0;
  }
  if (parser.has("list-devices")) {
    strata::DeviceQuery query = strata::queryDevices();
    std::printf("%s", strata::formatDeviceQuery(query).c_str());
    return 0;
  }
  if (parser.positionals().size() != 1) {
    std::fprintf(stderr, "strata-run: error: expected one plan file\nrun "
                         "'strata-run --help' for usage\n");
    return 2;
  }
  strata::plan::Plan plan;
  std::string error;
  if (!strata::plan::readPlanFile(parser.positionals().front(), plan, error)) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return 1;
  }
  if (parser.has("perplexity")) {
    for (const char *other : {"prompt", "prompt-file", "prompt-ids"})
      if (parser.has(other))
        return strata::tools::usageError(
            "strata-run", std::string("--perplexity scores a file; it takes "
                                      "no --") +
                              other);
    return strata::tools::runPerplexity("strata-run", parser, std::move(plan),
                                        parser.positionals().front(),
                                        "perplexity");
  }
  if (parser.has("context") || parser.has("json"))
    return strata::tools::usageError(
        "strata-run",
        std::string(parser.has("context") ? "--context" : "--json") +
            " applies with --perplexity only");
  return strata::tools::runGeneration("strata-run", parser, std::move(plan),
                                      parser.positionals().front());
}
