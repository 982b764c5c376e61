#include "json/JsonTree.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <unordered_map>

namespace strata {

const JsonMember *JsonValue::find(std::string_view key) const {
  for (const JsonMember &m : object)
    if (m.key == key)
      return &m;
  return nullptr;
}

const JsonValue *JsonValue::get(std::string_view key) const {
  const JsonMember *m = find(key);
  return m ? &m->value : nullptr;
}

bool JsonValue::asUint64(uint64_t &out) const {
  // 20 digits hold every 64-bit value; strtoull says whether it fits.
  if (kind != Kind::Number || text.empty() || text.size() > 20 ||
      text.find_first_not_of("0123456789") != std::string::npos)
    return false;
  errno = 0;
  unsigned long long v = std::strtoull(text.c_str(), nullptr, 10);
  if (errno)
    return false;
  out = v;
  return true;
}

const char *JsonValue::kindName() const {
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

using Json = nlohmann::json;
using Kind = JsonValue::Kind;

bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

bool isWordChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9');
}

/// Line and column of byte offsets that only grow, so that the text is
/// walked once however many positions are asked for.
class PosCounter {
public:
  PosCounter(std::string_view text, size_t base) : text_(text), base_(base) {}

  JsonPos at(size_t offset) {
    for (; at_ < offset && at_ < text_.size(); ++at_) {
      unsigned char c = static_cast<unsigned char>(text_[at_]);
      if (c == '\n') {
        ++line_;
        column_ = 1;
      } else if ((c & 0xC0) != 0x80) {
        // Continuation bytes do not start a code point.
        ++column_;
      }
    }
    return {line_, column_, base_ + std::min(offset, text_.size())};
  }

private:
  std::string_view text_;
  size_t base_;
  size_t at_ = 0;
  int line_ = 1;
  int column_ = 1;
};

/// The message for nlohmann's complaint at byte `index`, which may move it
/// to where the mistake starts (a trailing comma, a literal's first letter).
std::string syntaxMessage(std::string_view text, size_t &index,
                          const std::string &lastToken,
                          const nlohmann::detail::exception &ex) {
  index = std::min(index, text.size());
  if (ex.id == 406) {
    // Number overflow: nlohmann stops after the literal, which is the token.
    index = index + 1 >= lastToken.size() ? index + 1 - lastToken.size() : 0;
    return "number " + lastToken + " is out of range for a double";
  }
  char c = index < text.size() ? text[index] : '\0';
  std::string what = ex.what();
  if (what.find("; expected end of input") != std::string::npos)
    return "unexpected text after the JSON value";
  if (c == ']' || c == '}') {
    size_t j = index;
    while (j > 0 && isSpace(text[j - 1]))
      --j;
    if (j > 0 && text[j - 1] == ',') {
      index = j - 1;
      return std::string("trailing comma before '") + c + "'";
    }
  }
  if (c == '/' || c == '#')
    return "comments are not allowed in JSON";
  if (c == '\'')
    return "single quotes are not allowed in JSON; strings and keys take "
           "double quotes";
  for (std::string_view word : {"NaN", "Infinity"}) {
    if (text.substr(index, word.size()) != word)
      continue;
    bool negative = index > 0 && text[index - 1] == '-';
    if (negative)
      --index;
    return "'" + std::string(negative ? "-" : "") + std::string(word) +
           "' is not a JSON number";
  }
  // "[json.exception.parse_error.101] parse error at line 1, column 9:
  // syntax error while parsing value - invalid literal; last read: '...'":
  // the position is given separately, and the last read text is noise.
  size_t dash = what.find(" - ");
  std::string message = dash == std::string::npos
                            ? what.substr(what.find("] ") + 2)
                            : what.substr(dash + 3);
  size_t lastRead = message.find("; last read: '");
  if (lastRead != std::string::npos) {
    size_t end = message.find("'; expected", lastRead);
    message.erase(lastRead, end == std::string::npos ? std::string::npos
                                                     : end + 1 - lastRead);
  }
  // nlohmann reports an unexpected literal after reading all of it; the
  // mistake is where it starts (a missing comma before it, say). A string's
  // or a number's token text is exactly the literal (valid ones hold no
  // control characters, the only bytes nlohmann would spell out); a word's
  // may hold what preceded it, so the word is walked back instead.
  if (message.compare(0, 11, "unexpected ") == 0) {
    std::string token = message.substr(11, message.find(';') - 11);
    if ((token == "string literal" || token == "number literal") &&
        index + 1 >= lastToken.size())
      index = index + 1 - lastToken.size();
    else if (token == "true literal" || token == "false literal" ||
             token == "null literal")
      while (index > 0 && isWordChar(text[index - 1]))
        --index;
  }
  // After a member or an element, a comma would also have done.
  for (const char *close : {"'}'", "']'"}) {
    std::string tail = std::string("; expected ") + close;
    if (message.size() > tail.size() &&
        message.compare(message.size() - tail.size(), tail.size(), tail) == 0)
      message.replace(message.size() - tail.size(), tail.size(),
                      std::string("; expected ',' or ") + close);
  }
  if (message.compare(0, 15, "invalid literal") == 0) {
    size_t start = index;
    while (start > 0 && isWordChar(text[start - 1]))
      --start;
    size_t end = start;
    while (end < text.size() && isWordChar(text[end]))
      ++end;
    if (end > start) {
      index = start;
      message = "invalid literal '" +
                std::string(text.substr(start, end - start)) +
                "'; expected a string, a number, true, false, null, an "
                "array or an object";
    }
  }
  return message;
}

/// Builds the tree from nlohmann's SAX events. Every event stands for the
/// next token of the text (':' and ',' have none), so a cursor that skips
/// one token per event knows where each value starts.
class TreeBuilder final : public nlohmann::json_sax<Json> {
public:
  TreeBuilder(std::string_view text, JsonValue &root, JsonSyntaxError &error,
              const JsonParseOptions &options)
      : text_(text), root_(root), error_(error), options_(options),
        positions_(text, options.baseOffset) {}

  bool null() override { return add(Kind::Null, nextToken()); }
  bool boolean(bool value) override {
    if (!add(Kind::Bool, nextToken()))
      return false;
    last_->boolean = value;
    return true;
  }
  bool number_integer(number_integer_t) override { return number(); }
  bool number_unsigned(number_unsigned_t) override { return number(); }
  bool number_float(number_float_t, const string_t &) override {
    return number();
  }
  bool string(string_t &value) override {
    if (!add(Kind::String, nextToken()))
      return false;
    last_->text = std::move(value);
    return true;
  }
  bool binary(binary_t &) override { return false; } // not in JSON text
  bool start_object(std::size_t) override { return open(Kind::Object); }
  bool start_array(std::size_t) override { return open(Kind::Array); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }

  bool key(string_t &name) override {
    size_t at = nextToken();
    Frame &frame = frames_.back();
    auto [it, fresh] = frame.keys.emplace(name, frame.value->object.size());
    if (!fresh) {
      const JsonPos &first = frame.value->object[it->second].keyPos;
      return fail(at, "duplicate key '" + childPath(frame, name) +
                          "' (first given at " +
                          (options_.byteOffsets
                               ? "byte " + std::to_string(first.offset)
                               : "line " + std::to_string(first.line)) +
                          ")");
    }
    pendingKey_ = std::move(name);
    pendingKeyPos_ = positions_.at(at);
    return true;
  }

  bool parse_error(std::size_t position, const std::string &lastToken,
                   const nlohmann::detail::exception &ex) override {
    // `position` counts the bytes read, the offending one included.
    size_t index = position > 0 ? position - 1 : 0;
    std::string message = syntaxMessage(text_, index, lastToken, ex);
    return fail(index, "invalid JSON: " + message);
  }

private:
  struct Frame {
    JsonValue *value;
    std::string path;
    /// Key -> index of its member, for the duplicate check.
    std::unordered_map<std::string, size_t> keys;
  };

  /// Skips to the next token, then past it; returns where it starts.
  size_t nextToken() {
    while (cursor_ < text_.size() &&
           (isSpace(text_[cursor_]) || text_[cursor_] == ',' ||
            text_[cursor_] == ':'))
      ++cursor_;
    size_t start = cursor_;
    if (cursor_ >= text_.size())
      return start;
    char c = text_[cursor_];
    if (c == '"') {
      ++cursor_;
      while (cursor_ < text_.size() && text_[cursor_] != '"')
        cursor_ += text_[cursor_] == '\\' ? 2 : 1;
      ++cursor_;
    } else if (c == '{' || c == '}' || c == '[' || c == ']') {
      ++cursor_;
    } else {
      // A number or a literal.
      while (cursor_ < text_.size() && !isSpace(text_[cursor_]) &&
             text_[cursor_] != ',' && text_[cursor_] != ']' &&
             text_[cursor_] != '}')
        ++cursor_;
    }
    return start;
  }

  std::string childPath(const Frame &frame, const std::string &key) const {
    if (frame.value->isArray())
      return frame.path + "[" + std::to_string(frame.value->array.size()) + "]";
    return frame.path.empty() ? key : frame.path + "." + key;
  }

  /// Places a new value of `kind` starting at byte `at` in the innermost
  /// open container (or at the root) and points `last_` at it.
  bool add(Kind kind, size_t at) {
    JsonValue *v = &root_;
    if (!frames_.empty()) {
      JsonValue &parent = *frames_.back().value;
      if (parent.isArray()) {
        v = &parent.array.emplace_back();
      } else {
        parent.object.push_back(
            JsonMember{std::move(pendingKey_), pendingKeyPos_, JsonValue()});
        v = &parent.object.back().value;
      }
    }
    v->kind = kind;
    v->pos = positions_.at(at);
    last_ = v;
    return true;
  }

  bool number() {
    size_t at = nextToken();
    add(Kind::Number, at);
    last_->text = std::string(text_.substr(at, cursor_ - at));
    return true;
  }

  bool open(Kind kind) {
    size_t at = nextToken();
    if (frames_.size() >= size_t(kJsonMaxDepth))
      return fail(at, "nesting deeper than " + std::to_string(kJsonMaxDepth) +
                          " levels");
    std::string path;
    if (!frames_.empty()) {
      const Frame &parent = frames_.back();
      path = childPath(parent, parent.value->isArray() ? "" : pendingKey_);
    }
    add(kind, at);
    // Only the innermost container grows, and it is never an ancestor of
    // an open one, so these pointers stay valid.
    frames_.push_back(Frame{last_, std::move(path), {}});
    return true;
  }

  bool close() {
    nextToken();
    frames_.pop_back();
    return true;
  }

  bool fail(size_t at, const std::string &message) {
    // Errors can point before the last value (a trailing comma, the first
    // of two keys), so they are counted afresh.
    error_.pos = PosCounter(text_, options_.baseOffset).at(at);
    error_.message = message;
    return false;
  }

  std::string_view text_;
  JsonValue &root_;
  JsonSyntaxError &error_;
  const JsonParseOptions &options_;
  PosCounter positions_;
  size_t cursor_ = 0;
  std::vector<Frame> frames_;
  JsonValue *last_ = nullptr;
  std::string pendingKey_;
  JsonPos pendingKeyPos_;
};

} // namespace

bool parseStrictJson(std::string_view text, JsonValue &out,
                     JsonSyntaxError &error, const JsonParseOptions &options) {
  out = JsonValue();
  error = JsonSyntaxError();
  // RFC 8259 forbids writing one; Python's json module refuses to read one.
  if (text.substr(0, 3) == "\xEF\xBB\xBF") {
    error.pos = {1, 1, options.baseOffset};
    error.message = "invalid JSON: a byte order mark is not allowed";
    return false;
  }
  TreeBuilder builder(text, out, error, options);
  // Strict (nothing after the value) and without comments.
  return Json::sax_parse(text.begin(), text.end(), &builder,
                         Json::input_format_t::json, /*strict=*/true,
                         /*ignore_comments=*/false);
}

} // namespace strata
