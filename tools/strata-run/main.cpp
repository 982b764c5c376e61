// strata-run: the runtime-only front end. It links no MLIR, so it runs on
// machines that only have the CUDA runtime. Plan execution joins here with
// the plan format; today it reports the devices the runtime would use.
#include "runtime/Devices.h"
#include "tools/common/ArgParser.h"

#include <cstdio>
#include <string>
#include <vector>

#ifndef STRATA_VERSION
#define STRATA_VERSION "unknown"
#endif

int main(int argc, char **argv) {
  strata::tools::ArgParser parser;
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
    std::printf("usage: strata-run [options]\n\noptions:\n%s",
                parser.helpText().c_str());
    return argc == 1 ? 2 : 0;
  }
  if (!parser.positionals().empty()) {
    std::fprintf(stderr,
                 "strata-run: error: unexpected argument '%s'\nrun "
                 "'strata-run --help' for usage\n",
                 parser.positionals().front().c_str());
    return 2;
  }
  if (parser.has("version")) {
    std::printf("strata-run %s\n", STRATA_VERSION);
    return 0;
  }
  strata::DeviceQuery query = strata::queryDevices();
  std::printf("%s", strata::formatDeviceQuery(query).c_str());
  return 0;
}
