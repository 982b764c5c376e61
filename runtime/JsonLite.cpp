#include "runtime/JsonLite.h"

#include <cerrno>
#include <cstdlib>
#include <unordered_set>

namespace strata::json {

const Value *Value::find(std::string_view key) const {
  if (kind != Kind::Object)
    return nullptr;
  for (const auto &[k, v] : object)
    if (k == key)
      return &v;
  return nullptr;
}

bool Value::asUint64(uint64_t &out) const {
  if (kind != Kind::Number || text.empty() || text.size() > 20)
    return false;
  for (char c : text)
    if (c < '0' || c > '9')
      return false;
  errno = 0;
  unsigned long long v = std::strtoull(text.c_str(), nullptr, 10);
  if (errno)
    return false;
  out = v;
  return true;
}

const char *Value::kindName() const {
  switch (kind) {
  case Kind::Null:
    return "null";
  case Kind::Bool:
    return "a boolean";
  case Kind::Number:
    return "a number";
  case Kind::String:
    return "a string";
  case Kind::Array:
    return "an array";
  case Kind::Object:
    return "an object";
  }
  return "a value";
}

namespace {

class Parser {
public:
  Parser(std::string_view text, std::string &error, size_t base)
      : s_(text), error_(error), base_(base) {}

  bool parseDocument(Value &out) {
    skipSpace();
    if (!parseValue(out, 0))
      return false;
    skipSpace();
    if (pos_ != s_.size())
      return fail("unexpected text after the JSON value");
    return true;
  }

private:
  bool fail(const std::string &what) { return failAt(pos_, what); }
  bool failAt(size_t at, const std::string &what) {
    error_ = "at byte " + std::to_string(base_ + at) + ": " + what;
    return false;
  }

  void skipSpace() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' ||
                                s_[pos_] == '\n' || s_[pos_] == '\r'))
      ++pos_;
  }

  bool literal(std::string_view word) {
    if (s_.substr(pos_, word.size()) != word)
      return fail("invalid literal");
    pos_ += word.size();
    return true;
  }

  bool parseValue(Value &out, int depth) {
    if (pos_ >= s_.size())
      return fail("unexpected end of input, expected a value");
    out.offset = base_ + pos_;
    char c = s_[pos_];
    switch (c) {
    case '{':
      return parseObject(out, depth + 1);
    case '[':
      return parseArray(out, depth + 1);
    case '"':
      out.kind = Value::Kind::String;
      return parseString(out.text);
    case 't':
      out.kind = Value::Kind::Bool;
      out.boolean = true;
      return literal("true");
    case 'f':
      out.kind = Value::Kind::Bool;
      return literal("false");
    case 'n':
      out.kind = Value::Kind::Null;
      return literal("null");
    default:
      if (c == '-' || (c >= '0' && c <= '9'))
        return parseNumber(out);
      return fail(std::string("unexpected character '") + c +
                  "', expected a value");
    }
  }

  bool digits() {
    size_t start = pos_;
    while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9')
      ++pos_;
    return pos_ > start;
  }

  bool parseNumber(Value &out) {
    size_t start = pos_;
    if (s_[pos_] == '-')
      ++pos_;
    if (pos_ < s_.size() && s_[pos_] == '0') {
      ++pos_;
      if (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9')
        return failAt(start, "number with a leading zero");
    } else if (!digits()) {
      return failAt(start, "malformed number");
    }
    if (pos_ < s_.size() && s_[pos_] == '.') {
      ++pos_;
      if (!digits())
        return failAt(start, "malformed number");
    }
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-'))
        ++pos_;
      if (!digits())
        return failAt(start, "malformed number");
    }
    out.kind = Value::Kind::Number;
    out.text = std::string(s_.substr(start, pos_ - start));
    return true;
  }

  bool hex4(uint32_t &out) {
    if (s_.size() - pos_ < 4)
      return fail("truncated \\u escape");
    out = 0;
    for (int i = 0; i < 4; ++i) {
      char c = s_[pos_++];
      out <<= 4;
      if (c >= '0' && c <= '9')
        out |= uint32_t(c - '0');
      else if (c >= 'a' && c <= 'f')
        out |= uint32_t(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        out |= uint32_t(c - 'A' + 10);
      else
        return failAt(pos_ - 1, "invalid hex digit in \\u escape");
    }
    return true;
  }

  static void appendUtf8(std::string &out, uint32_t cp) {
    if (cp < 0x80) {
      out += char(cp);
    } else if (cp < 0x800) {
      out += char(0xC0 | (cp >> 6));
      out += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += char(0xE0 | (cp >> 12));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    } else {
      out += char(0xF0 | (cp >> 18));
      out += char(0x80 | ((cp >> 12) & 0x3F));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    }
  }

  bool parseString(std::string &out) {
    size_t start = pos_;
    ++pos_; // the opening quote
    while (true) {
      if (pos_ >= s_.size())
        return failAt(start, "unterminated string");
      unsigned char c = static_cast<unsigned char>(s_[pos_]);
      if (c == '"') {
        ++pos_;
        return true;
      }
      if (c < 0x20)
        return fail("control character in a string");
      if (c != '\\') {
        out += char(c);
        ++pos_;
        continue;
      }
      size_t escape = pos_++;
      if (pos_ >= s_.size())
        return failAt(start, "unterminated string");
      char e = s_[pos_++];
      switch (e) {
      case '"':
      case '\\':
      case '/':
        out += e;
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'u': {
        uint32_t cp = 0;
        if (!hex4(cp))
          return false;
        if (cp >= 0xDC00 && cp <= 0xDFFF)
          return failAt(escape, "unpaired low surrogate in \\u escape");
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          uint32_t low = 0;
          if (s_.substr(pos_, 2) != "\\u")
            return failAt(escape, "unpaired high surrogate in \\u escape");
          pos_ += 2;
          if (!hex4(low))
            return false;
          if (low < 0xDC00 || low > 0xDFFF)
            return failAt(escape, "unpaired high surrogate in \\u escape");
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        }
        appendUtf8(out, cp);
        break;
      }
      default:
        return failAt(escape, std::string("invalid escape '\\") + e + "'");
      }
    }
  }

  bool parseArray(Value &out, int depth) {
    if (depth > kMaxDepth)
      return fail("nesting deeper than " + std::to_string(kMaxDepth));
    out.kind = Value::Kind::Array;
    ++pos_;
    skipSpace();
    if (pos_ < s_.size() && s_[pos_] == ']') {
      ++pos_;
      return true;
    }
    while (true) {
      skipSpace();
      out.array.emplace_back();
      if (!parseValue(out.array.back(), depth))
        return false;
      skipSpace();
      if (pos_ >= s_.size())
        return fail("unexpected end of input in an array");
      if (s_[pos_] == ']') {
        ++pos_;
        return true;
      }
      if (s_[pos_] != ',')
        return fail("expected ',' or ']' in an array");
      ++pos_;
    }
  }

  bool parseObject(Value &out, int depth) {
    if (depth > kMaxDepth)
      return fail("nesting deeper than " + std::to_string(kMaxDepth));
    out.kind = Value::Kind::Object;
    // Headers of large checkpoints have thousands of keys: a set keeps the
    // duplicate check linear.
    std::unordered_set<std::string> seen;
    ++pos_;
    skipSpace();
    if (pos_ < s_.size() && s_[pos_] == '}') {
      ++pos_;
      return true;
    }
    while (true) {
      skipSpace();
      if (pos_ >= s_.size())
        return fail("unexpected end of input in an object");
      if (s_[pos_] != '"')
        return fail("expected a string key in an object");
      size_t keyAt = pos_;
      std::string key;
      if (!parseString(key))
        return false;
      // Duplicate keys are ambiguous (which tensor is meant?): reject them.
      if (!seen.insert(key).second)
        return failAt(keyAt, "duplicate key \"" + key + "\"");
      skipSpace();
      if (pos_ >= s_.size() || s_[pos_] != ':')
        return fail("expected ':' after an object key");
      ++pos_;
      skipSpace();
      out.object.emplace_back(std::move(key), Value());
      if (!parseValue(out.object.back().second, depth))
        return false;
      skipSpace();
      if (pos_ >= s_.size())
        return fail("unexpected end of input in an object");
      if (s_[pos_] == '}') {
        ++pos_;
        return true;
      }
      if (s_[pos_] != ',')
        return fail("expected ',' or '}' in an object");
      ++pos_;
    }
  }

  std::string_view s_;
  std::string &error_;
  size_t base_;
  size_t pos_ = 0;
};

} // namespace

bool parse(std::string_view text, Value &out, std::string &error,
           size_t baseOffset) {
  out = Value();
  return Parser(text, error, baseOffset).parseDocument(out);
}

} // namespace strata::json
