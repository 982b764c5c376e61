// A small command-line parser shared by the strata tools.
//
// Options are declared up front; anything undeclared is an error that names
// the option and suggests the nearest declared one. `--name=value` and
// `--name value` are both accepted for options that take a value. No
// exceptions: parse() returns false and fills error().
#ifndef STRATA_TOOLS_COMMON_ARGPARSER_H
#define STRATA_TOOLS_COMMON_ARGPARSER_H

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace strata::tools {

class ArgParser {
public:
  /// A flag takes no value (`--no-graphs`); an option takes one
  /// (`--emit=ir`). `help` is shown by helpText().
  void addFlag(const std::string &name, const std::string &help);
  void addOption(const std::string &name, const std::string &valueName,
                 const std::string &help);
  /// Single-dash aliases such as -o for --output.
  void addAlias(const std::string &alias, const std::string &name);

  bool parse(const std::vector<std::string> &args);
  const std::string &error() const { return error_; }

  bool has(const std::string &name) const;
  /// The value of an option, or `fallback` when it was not given (the
  /// last one when it was given several times).
  std::string get(const std::string &name,
                  const std::string &fallback = "") const;
  /// Every value of an option given several times (`--stop a --stop b`),
  /// in order.
  std::vector<std::string> getAll(const std::string &name) const;
  const std::vector<std::string> &positionals() const { return positionals_; }

  /// One line per option, aligned, for --help.
  std::string helpText() const;
  /// The declared flags and options, in the order they were declared.
  const std::vector<std::string> &names() const { return order_; }

private:
  struct Spec {
    bool takesValue = false;
    std::string valueName;
    std::string help;
  };
  std::vector<std::string> order_;
  std::map<std::string, Spec> specs_;
  std::map<std::string, std::string> aliases_;
  std::map<std::string, std::string> values_;
  std::map<std::string, std::vector<std::string>> allValues_;
  std::vector<std::string> positionals_;
  std::string error_;
};

/// Option values: a whole decimal integer in [lo, hi], a whole finite
/// number, or a comma-separated list of integers in [lo, hi] ("1,8,32").
/// False (and `out` unspecified) for anything else: empty text, trailing
/// characters, overflow, an empty list item.
bool parseInteger(const std::string &text, int64_t lo, int64_t hi,
                  int64_t &out);
bool parseNumber(const std::string &text, double &out);
bool parseIntegerList(const std::string &text, int64_t lo, int64_t hi,
                      std::vector<int64_t> &out);

} // namespace strata::tools

#endif // STRATA_TOOLS_COMMON_ARGPARSER_H
