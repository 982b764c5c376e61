#include "models/YamlReader.h"

#include "models/NearestName.h"
#include "models/ParseInteger.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace strata {
namespace detail {

namespace {

std::string quoteKey(const Field &f) { return "'" + f.path + "'"; }

/// Text from the file as messages quote it: a diagnostic is one line, and a
/// scalar or key may be megabytes long.
std::string clip(std::string text) {
  if (text.size() > 40)
    text = text.substr(0, 37) + "...";
  return text;
}

bool isPlain(const YAML::Node &node) {
  // yaml-cpp tags quoted scalars "!" and untagged plain ones "?".
  return node.Tag() != "!";
}

} // namespace

std::string joinNames(const std::vector<std::string> &names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0)
      out += i + 1 == names.size() ? " or " : ", ";
    out += names[i];
  }
  return out;
}

YAML::Mark Field::mark() const {
  bool emptyValue = node.IsNull() && node.Scalar().empty();
  if (emptyValue || node.Mark().is_null())
    return anchor;
  return node.Mark();
}

void YamlContext::fail(const YAML::Mark &mark,
                       const std::string &message) const {
  Diagnostic d;
  d.file = file_;
  if (!mark.is_null()) {
    d.line = mark.line + 1;
    d.column = mark.column + 1;
  }
  d.message = message;
  throw ImportError{d};
}

std::string YamlContext::describe(const YAML::Node &node) {
  switch (node.Type()) {
  case YAML::NodeType::Undefined:
  case YAML::NodeType::Null:
    return "nothing";
  case YAML::NodeType::Sequence:
    return "a list";
  case YAML::NodeType::Map:
    return "a mapping";
  case YAML::NodeType::Scalar:
    break;
  }
  std::string text = clip(node.Scalar());
  if (!isPlain(node))
    return "the string \"" + text + "\"";
  return "'" + text + "'";
}

int64_t YamlContext::integer(const Field &f) const {
  auto bad = [&] {
    fail(f, "expected an integer for " + quoteKey(f) + ", got " +
                describe(f.node));
  };
  if (!f.node.IsScalar() || !isPlain(f.node))
    bad();
  const std::string &s = f.node.Scalar();
  int64_t v = 0;
  switch (parseDecimalInteger(s, v)) {
  case IntegerParse::Ok:
    break;
  case IntegerParse::Malformed:
    bad();
    break;
  case IntegerParse::OutOfRange:
    fail(f, "integer " + s + " for " + quoteKey(f) + " is out of range");
  }
  return v;
}

int64_t YamlContext::positiveInt(const Field &f, int64_t max) const {
  int64_t v = integer(f);
  if (v <= 0)
    fail(f, "expected a positive integer for " + quoteKey(f) + ", got " +
                f.node.Scalar());
  if (v > max)
    fail(f, "value " + f.node.Scalar() + " for " + quoteKey(f) +
                " is too large; the largest supported value is " +
                std::to_string(max));
  return v;
}

double YamlContext::number(const Field &f) const {
  auto bad = [&] {
    fail(f,
         "expected a number for " + quoteKey(f) + ", got " + describe(f.node));
  };
  if (!f.node.IsScalar() || !isPlain(f.node))
    bad();
  const std::string &s = f.node.Scalar();
  // strtod alone would also take "inf", "nan" and hexadecimal floats.
  bool hasDigit = false;
  for (char c : s) {
    if (c >= '0' && c <= '9')
      hasDigit = true;
    else if (c != '.' && c != 'e' && c != 'E' && c != '+' && c != '-')
      bad();
  }
  if (!hasDigit)
    bad();
  errno = 0;
  char *end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size())
    bad();
  if (errno == ERANGE || !std::isfinite(v))
    fail(f, "number " + s + " for " + quoteKey(f) + " is out of range");
  return v;
}

double YamlContext::positiveNumber(const Field &f) const {
  double v = number(f);
  if (!(v > 0))
    fail(f, "expected a positive number for " + quoteKey(f) + ", got " +
                f.node.Scalar());
  return v;
}

bool YamlContext::boolean(const Field &f) const {
  if (f.node.IsScalar() && isPlain(f.node)) {
    const std::string &s = f.node.Scalar();
    // YAML 1.2 core schema spellings only: "yes"/"on" are strings there.
    if (s == "true" || s == "True" || s == "TRUE")
      return true;
    if (s == "false" || s == "False" || s == "FALSE")
      return false;
  }
  fail(f, "expected true or false for " + quoteKey(f) + ", got " +
              describe(f.node));
}

std::string YamlContext::string(const Field &f) const {
  if (!f.node.IsScalar())
    fail(f,
         "expected a string for " + quoteKey(f) + ", got " + describe(f.node));
  return f.node.Scalar();
}

std::vector<Field> YamlContext::sequence(const Field &f) const {
  if (!f.node.IsSequence())
    fail(f, "expected a list for " + quoteKey(f) + ", got " + describe(f.node));
  std::vector<Field> out;
  size_t i = 0;
  for (const YAML::Node &element : f.node) {
    out.push_back({f.path + "[" + std::to_string(i) + "]", element, f.mark()});
    ++i;
  }
  return out;
}

MapReader::MapReader(const YamlContext &ctx, const Field &map,
                     std::vector<std::string> allowed,
                     const std::map<std::string, std::string> &hints)
    : ctx_(ctx), self_(map) {
  if (!map.node.IsMap())
    ctx.fail(map,
             (map.path.empty() ? std::string("expected a mapping at the "
                                             "top level")
                               : "expected a mapping for '" + map.path + "'") +
                 ", got " + YamlContext::describe(map.node));
  for (auto it = map.node.begin(); it != map.node.end(); ++it) {
    // Copies: the iterator's pair is a temporary proxy.
    YAML::Node key = it->first;
    YAML::Node value = it->second;
    Field keyField{map.path, key, map.mark()};
    if (!key.IsScalar() || key.Scalar().empty())
      ctx.fail(keyField,
               "expected a key name, got " + YamlContext::describe(key));
    const std::string &name = key.Scalar();
    for (const auto &entry : entries_)
      if (entry.first == name)
        ctx.fail(key.Mark(),
                 "duplicate key '" + clip(name) + "' (first given at line " +
                     std::to_string(entry.second.anchor.line + 1) + ")");
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      std::string suggestion;
      auto hint = hints.find(name);
      // A dotted hint names a key of another section ("attention.head_dim"
      // for a Hugging Face top-level "head_dim").
      if (hint != hints.end() && (hint->second.find('.') != std::string::npos ||
                                  std::find(allowed.begin(), allowed.end(),
                                            hint->second) != allowed.end()))
        suggestion = hint->second;
      else
        suggestion = nearestName(name, allowed);
      if (!suggestion.empty())
        ctx.fail(key.Mark(), "unknown key '" + clip(name) +
                                 "'; did you mean '" + suggestion + "'?");
      ctx.fail(key.Mark(), "unknown key '" + clip(name) +
                               "'; expected one of: " + joinNames(allowed));
    }
    std::string path = map.path.empty() ? name : map.path + "." + name;
    entries_.push_back({name, Field{path, value, key.Mark()}});
  }
}

bool MapReader::has(const std::string &key) const {
  return find(key).has_value();
}

std::optional<Field> MapReader::find(const std::string &key) const {
  for (const auto &entry : entries_)
    if (entry.first == key)
      return entry.second;
  return std::nullopt;
}

Field MapReader::require(const std::string &key) const {
  if (auto f = find(key))
    return *f;
  failMissing(key);
}

void MapReader::failMissing(const std::string &key,
                            const std::string &extra) const {
  std::string where = self_.path.empty() ? "" : " in '" + self_.path + "'";
  ctx_.fail(self_, "missing required key '" + key + "'" + where + extra);
}

} // namespace detail
} // namespace strata
