#include "tools/common/ArgParser.h"

#include "models/NearestName.h"
#include "models/ParseInteger.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace strata::tools {

void ArgParser::addFlag(const std::string &name, const std::string &help) {
  order_.push_back(name);
  specs_[name] = Spec{false, "", help};
}

void ArgParser::addOption(const std::string &name, const std::string &valueName,
                          const std::string &help) {
  order_.push_back(name);
  specs_[name] = Spec{true, valueName, help};
}

void ArgParser::addAlias(const std::string &alias, const std::string &name) {
  aliases_[alias] = name;
}

bool ArgParser::parse(const std::vector<std::string> &args) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &arg = args[i];
    if (arg == "--") {
      positionals_.insert(positionals_.end(), args.begin() + i + 1, args.end());
      break;
    }
    if (arg.size() < 2 || arg[0] != '-') {
      positionals_.push_back(arg);
      continue;
    }
    std::string name = arg, value;
    bool hasInlineValue = false;
    if (auto alias = aliases_.find(arg); alias != aliases_.end()) {
      name = alias->second;
    } else if (arg.rfind("--", 0) == 0) {
      size_t eq = arg.find('=');
      name =
          arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
      if (eq != std::string::npos) {
        value = arg.substr(eq + 1);
        hasInlineValue = true;
      }
    } else {
      error_ = "unknown option '" + arg + "'";
      return false;
    }
    auto spec = specs_.find(name);
    if (spec == specs_.end()) {
      error_ = "unknown option '--" + name + "'";
      std::string suggestion = nearestName(name, order_);
      if (!suggestion.empty())
        error_ += "; did you mean '--" + suggestion + "'?";
      return false;
    }
    if (!spec->second.takesValue) {
      if (hasInlineValue) {
        error_ = "option '--" + name + "' takes no value";
        return false;
      }
      values_[name] = "";
      continue;
    }
    if (!hasInlineValue) {
      if (i + 1 >= args.size()) {
        error_ = "option '--" + name + "' expects a value (" +
                 spec->second.valueName + ")";
        return false;
      }
      // "--max-new-tokens --prompt-ids 1" forgot the value; taking the
      // next option as it would only mislead later.
      if (args[i + 1].size() > 2 && args[i + 1].rfind("--", 0) == 0) {
        error_ = "option '--" + name + "' expects a value (" +
                 spec->second.valueName + ") but is followed by the option '" +
                 args[i + 1] + "'";
        return false;
      }
      value = args[++i];
    }
    values_[name] = value;
    allValues_[name].push_back(value);
  }
  return true;
}

bool parseInteger(const std::string &text, int64_t lo, int64_t hi,
                  int64_t &out) {
  int64_t v = 0;
  if (parseDecimalInteger(text, v) != IntegerParse::Ok || v < lo || v > hi)
    return false;
  out = v;
  return true;
}

bool parseNumber(const std::string &text, double &out) {
  if (text.empty() || std::isspace((unsigned char)text[0]))
    return false;
  char *end = nullptr;
  errno = 0;
  out = std::strtod(text.c_str(), &end);
  return !errno && !*end && std::isfinite(out);
}

bool parseIntegerList(const std::string &text, int64_t lo, int64_t hi,
                      std::vector<int64_t> &out) {
  out.clear();
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    int64_t v = 0;
    if (!parseInteger(text.substr(start, comma == std::string::npos
                                             ? std::string::npos
                                             : comma - start),
                      lo, hi, v))
      return false;
    out.push_back(v);
    if (comma == std::string::npos)
      return true;
    start = comma + 1;
  }
}

bool ArgParser::has(const std::string &name) const {
  return values_.count(name) != 0;
}

std::string ArgParser::get(const std::string &name,
                           const std::string &fallback) const {
  auto it = values_.find(name);
  return it == values_.end() ? fallback : it->second;
}

std::vector<std::string> ArgParser::getAll(const std::string &name) const {
  auto it = allValues_.find(name);
  return it == allValues_.end() ? std::vector<std::string>{} : it->second;
}

std::string ArgParser::helpText() const {
  std::vector<std::pair<std::string, std::string>> rows;
  size_t width = 0;
  for (const std::string &name : order_) {
    const Spec &spec = specs_.at(name);
    std::string left = "--" + name;
    for (const auto &[alias, target] : aliases_)
      if (target == name)
        left = alias + ", " + left;
    if (spec.takesValue)
      left += "=" + spec.valueName;
    width = std::max(width, left.size());
    rows.emplace_back(left, spec.help);
  }
  std::ostringstream os;
  for (const auto &[left, help] : rows)
    os << "  " << left << std::string(width - left.size() + 2, ' ') << help
       << "\n";
  return os.str();
}

} // namespace strata::tools
