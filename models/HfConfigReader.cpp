#include "models/HfConfigReader.h"

#include "models/YamlReader.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace strata::detail {

namespace {

std::string quoteKey(const HfField &f) { return "'" + f.path + "'"; }

} // namespace

void HfConfigContext::fail(JsonPos pos, const std::string &message) const {
  Diagnostic d;
  d.file = file_;
  d.line = pos.line;
  d.column = pos.column;
  d.message = message;
  throw ImportError{d};
}

std::string HfConfigContext::describe(const JsonValue *v) {
  if (!v)
    return "nothing";
  const JsonValue &value = *v;
  switch (value.kind) {
  case JsonValue::Kind::Null:
    return "null";
  case JsonValue::Kind::Bool:
    return value.boolean ? "true" : "false";
  case JsonValue::Kind::Array:
    return "an array";
  case JsonValue::Kind::Object:
    return "an object";
  case JsonValue::Kind::Number:
    return "'" + value.text + "'";
  case JsonValue::Kind::String:
    break;
  }
  std::string text = value.text;
  if (text.size() > 40)
    text = text.substr(0, 37) + "...";
  return "the string \"" + text + "\"";
}

int64_t HfConfigContext::integer(const HfField &f) const {
  auto bad = [&] {
    fail(f, "expected an integer for " + quoteKey(f) + ", got " +
                describe(f.value));
  };
  if (f.isNull() || f.value->kind != JsonValue::Kind::Number)
    bad();
  // JSON numbers are "-"? digits [fraction] [exponent]: an integer is one
  // without the last two, as Python's json module reads it.
  const std::string &s = f.value->text;
  for (size_t i = s[0] == '-' ? 1 : 0; i < s.size(); ++i)
    if (s[i] < '0' || s[i] > '9')
      bad();
  errno = 0;
  long long v = std::strtoll(s.c_str(), nullptr, 10);
  if (errno == ERANGE)
    fail(f, "integer " + s + " for " + quoteKey(f) +
                " is out of range (at most 2^63 - 1)");
  return static_cast<int64_t>(v);
}

int64_t HfConfigContext::positiveInt(const HfField &f, int64_t max) const {
  int64_t v = integer(f);
  if (v <= 0)
    fail(f, "expected a positive integer for " + quoteKey(f) + ", got " +
                f.value->text);
  if (v > max)
    fail(f, "value " + f.value->text + " for " + quoteKey(f) +
                " is too large; the largest supported value is " +
                std::to_string(max));
  return v;
}

double HfConfigContext::number(const HfField &f) const {
  if (f.isNull() || f.value->kind != JsonValue::Kind::Number)
    fail(f,
         "expected a number for " + quoteKey(f) + ", got " + describe(f.value));
  const std::string &s = f.value->text;
  errno = 0;
  double v = std::strtod(s.c_str(), nullptr);
  if (errno == ERANGE || !std::isfinite(v))
    fail(f, "number " + s + " for " + quoteKey(f) +
                " is out of the range of a double");
  return v;
}

double HfConfigContext::positiveNumber(const HfField &f) const {
  double v = number(f);
  if (!(v > 0))
    fail(f, "expected a positive number for " + quoteKey(f) + ", got " +
                f.value->text);
  return v;
}

bool HfConfigContext::boolean(const HfField &f) const {
  if (f.isNull() || f.value->kind != JsonValue::Kind::Bool)
    fail(f, "expected true or false for " + quoteKey(f) + ", got " +
                describe(f.value));
  return f.value->boolean;
}

std::string HfConfigContext::string(const HfField &f) const {
  if (f.isNull() || f.value->kind != JsonValue::Kind::String)
    fail(f,
         "expected a string for " + quoteKey(f) + ", got " + describe(f.value));
  return f.value->text;
}

std::vector<HfField> HfConfigContext::sequence(const HfField &f) const {
  if (f.isNull() || !f.value->isArray())
    fail(f,
         "expected an array for " + quoteKey(f) + ", got " + describe(f.value));
  std::vector<HfField> out;
  for (size_t i = 0; i < f.value->array.size(); ++i) {
    const JsonValue &e = f.value->array[i];
    out.push_back({f.path + "[" + std::to_string(i) + "]", &e, e.pos});
  }
  return out;
}

std::vector<HfField> HfConfigContext::members(const HfField &f) const {
  if (f.isNull() || !f.value->isObject())
    fail(f, "expected an object for " + quoteKey(f) + ", got " +
                describe(f.value));
  std::vector<HfField> out;
  for (const JsonMember &m : f.value->object)
    out.push_back(
        {f.path.empty() ? m.key : f.path + "." + m.key, &m.value, m.keyPos});
  return out;
}

} // namespace strata::detail
