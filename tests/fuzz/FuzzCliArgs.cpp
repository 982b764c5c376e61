// Command-line arguments through the tools' parser (tools/common/ArgParser.h)
// with the options of `strata run` / `strata-run`, and the value parsers
// every option value goes through. The input is the argument list, split at
// NUL bytes. A rejected command line must say why; a value parser that
// accepts must have been given a whole value and return one within the
// asked range.
#include "tests/fuzz/FuzzCheck.h"
#include "tools/common/ArgParser.h"
#include "tools/common/RunCommand.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

using namespace strata::tools;

namespace {

void checkValue(const std::string &text) {
  int64_t v = 0;
  if (parseInteger(text, -5, 1 << 20, v))
    FUZZ_CHECK(v >= -5 && v <= (1 << 20), "parseInteger stays in range");
  if (parseInteger(text, INT64_MIN, INT64_MAX, v)) {
    size_t start = text[0] == '-' || text[0] == '+' ? 1 : 0;
    FUZZ_CHECK(start < text.size() &&
                   text.find_first_not_of("0123456789", start) ==
                       std::string::npos,
               "parseInteger takes only whole decimal integers");
  }
  double d = 0;
  if (parseNumber(text, d))
    FUZZ_CHECK(std::isfinite(d), "parseNumber gives a finite number");
  std::vector<int64_t> list;
  if (parseIntegerList(text, 0, INT32_MAX, list)) {
    FUZZ_CHECK(!list.empty(), "an accepted list is not empty");
    for (int64_t x : list)
      FUZZ_CHECK(x >= 0 && x <= INT32_MAX, "list items stay in range");
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::vector<std::string> args(1);
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == 0)
      args.emplace_back();
    else
      args.back() += char(data[i]);
  }
  ArgParser parser;
  addRunOptions(parser);
  parser.addFlag("help", "show this help");
  parser.addAlias("-h", "help");
  parser.addOption("output", "FILE", "where to write");
  parser.addAlias("-o", "output");
  if (!parser.parse(args)) {
    FUZZ_CHECK(!parser.error().empty(), "a rejected command line says why");
    return 0;
  }
  (void)parser.helpText();
  for (const std::string &p : parser.positionals())
    checkValue(p);
  for (const char *name :
       {"prompt-ids", "max-new-tokens", "temperature", "top-k", "top-p", "seed",
        "batch", "kv-blocks", "weights", "output"})
    if (parser.has(name))
      checkValue(parser.get(name));
  return 0;
}
