// `strata`: compile model descriptions to the strata IR (and, as they land,
// to executable plans), inspect and run them.
#include "tools/common/TokenizeCommand.h"
#include "tools/strata/Commands.h"

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#ifndef STRATA_VERSION
#define STRATA_VERSION "unknown"
#endif

using namespace strata::tools;

namespace {

struct Subcommand {
  const char *name;
  const char *summary;
  int (*run)(const std::vector<std::string> &);
};

const Subcommand kSubcommands[] = {
    {"bench", "measure prefill and decode tokens/s of a model", runBenchmark},
    {"bench-serve", "measure a running server: throughput, TTFT, TPOT, ITL",
     runBenchServeCommand},
    {"chat", "talk with a model: an interactive loop in its chat format",
     runChat},
    {"compile", "import a model YAML and print its IR (--emit=ir)", runCompile},
    {"import-hf", "write a model YAML for a Hugging Face checkpoint folder",
     runImportHf},
    {"inspect", "print a plan file and check its schedule", runInspect},
    {"perplexity", "score a text file: mean NLL and perplexity of a model",
     runPerplexityCommand},
    {"run", "generate text with a model (CPU reference or --device cuda)",
     runRun},
    {"serve", "serve a model over HTTP with OpenAI's API", runServe},
    {"tokenize", "print the token ids of a text", runTokenizeCommand},
};

void printUsage(FILE *out) {
  std::fprintf(out, "usage: strata <command> [options]\n\n"
                    "commands:\n");
  for (const Subcommand &cmd : kSubcommands)
    std::fprintf(out, "  %-11s %s\n", cmd.name, cmd.summary);
  std::fprintf(out, "\n'strata <command> --help' describes a command.\n"
                    "'strata --version' prints the version.\n");
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    printUsage(stderr);
    return kExitUsage;
  }
  std::string command = argv[1];
  if (command == "--help" || command == "-h" || command == "help") {
    printUsage(stdout);
    return kExitOk;
  }
  if (command == "--version") {
    std::printf("strata %s\n", STRATA_VERSION);
    return kExitOk;
  }
  std::vector<std::string> rest(argv + 2, argv + argc);
  for (const Subcommand &cmd : kSubcommands)
    if (command == cmd.name)
      return cmd.run(rest);
  std::fprintf(stderr,
               "strata: error: unknown command '%s'; run 'strata --help' "
               "for the list\n",
               command.c_str());
  return kExitUsage;
}
