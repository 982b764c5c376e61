// `strata inspect MODEL.splan`: read a plan, print its launches per stream,
// buffers, events and arena peak, and verify that its schedule and arena
// honour every hazard (the same check the scheduler's tests apply).
#include "codegen/ProgramGraph.h"
#include "runtime/plan/PlanFile.h"
#include "runtime/plan/PlanSummary.h"
#include "runtime/plan/PlanText.h"
#include "tools/common/ArgParser.h"
#include "tools/strata/Commands.h"

#include <cstdio>
#include <filesystem>

namespace strata::tools {

int runInspect(const std::vector<std::string> &args) {
  ArgParser parser;
  parser.addFlag("summary",
                 "print only what the passes chose: the attention kind per "
                 "layer, and per program its launches, rope+KV-write "
                 "variant and attention kernels, and the plan file's size");
  parser.addFlag("help", "show this help");
  parser.addAlias("-h", "help");
  if (!parser.parse(args)) {
    std::fprintf(stderr,
                 "strata inspect: error: %s\nrun 'strata inspect --help' "
                 "for usage\n",
                 parser.error().c_str());
    return kExitUsage;
  }
  if (parser.has("help")) {
    std::printf(
        "usage: strata inspect MODEL.splan [--summary]\n\nPrints the plan and "
        "checks its schedule and memory plan.\n\noptions:\n%s",
        parser.helpText().c_str());
    return kExitOk;
  }
  if (parser.positionals().size() != 1) {
    std::fprintf(stderr, "strata inspect: error: expected one plan file\n"
                         "run 'strata inspect --help' for usage\n");
    return kExitUsage;
  }
  const std::string &path = parser.positionals().front();
  plan::Plan plan;
  std::string error;
  if (!plan::readPlanFile(path, plan, error)) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return kExitBadInput;
  }
  if (parser.has("summary")) {
    std::error_code ec;
    const auto bytes = std::filesystem::file_size(path, ec);
    std::printf("plan %s: format %u", path.c_str(), plan::kPlanFormatVersion);
    if (!ec)
      std::printf(", %s", plan::formatBytes(bytes).c_str());
    std::printf("\n%s", plan::summarizePlan(plan).c_str());
  } else {
    std::printf("%s", plan::describePlan(plan).c_str());
  }
  for (const plan::Program &program : plan.programs) {
    std::string violation = sched::checkProgram(program, plan.limits);
    if (!violation.empty()) {
      std::fprintf(stderr, "%s: error: unsafe schedule: %s\n", path.c_str(),
                   violation.c_str());
      return kExitBadInput;
    }
  }
  if (!parser.has("summary"))
    std::printf("\nschedule check: every hazard is ordered and no live "
                "buffers overlap\n");
  return kExitOk;
}

} // namespace strata::tools
