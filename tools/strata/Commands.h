// Subcommands of the `strata` CLI. Each takes the arguments after its name
// and returns the process exit code: 0 on success, 1 when the input (a model
// file, a plan) is wrong, 2 when the command line is wrong.
#ifndef STRATA_TOOLS_STRATA_COMMANDS_H
#define STRATA_TOOLS_STRATA_COMMANDS_H

#include <string>
#include <vector>

namespace strata::tools {

constexpr int kExitOk = 0;
constexpr int kExitBadInput = 1;
constexpr int kExitUsage = 2;

int runBenchmark(const std::vector<std::string> &args);
int runBenchServeCommand(const std::vector<std::string> &args);
int runCompile(const std::vector<std::string> &args);
int runImportHf(const std::vector<std::string> &args);
int runInspect(const std::vector<std::string> &args);
int runRun(const std::vector<std::string> &args);
int runChat(const std::vector<std::string> &args);
int runPerplexityCommand(const std::vector<std::string> &args);
int runServe(const std::vector<std::string> &args);

} // namespace strata::tools

#endif // STRATA_TOOLS_STRATA_COMMANDS_H
