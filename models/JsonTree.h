// A JSON document (a Hugging Face config.json) read strictly, as a tree of
// values that remember the line and column they were written at.
//
// The syntax is RFC 8259 and nothing more: no comments, trailing commas,
// single quotes, NaN or Infinity; strings must be valid UTF-8 with control
// characters escaped; numbers must fit a double. Beyond the RFC, which only
// says that names SHOULD be unique, a key given twice in one object is an
// error: which of the two values a reader takes differs between JSON
// libraries, so a config that relies on either is ambiguous. Nesting is
// bounded so that a hostile file cannot exhaust the stack.
//
// nlohmann-json checks the syntax (its SAX parser, which is iterative); the
// positions come from a scan of the same text that advances token by token
// in step with the parser's events, so no JSON value is read twice.
#ifndef STRATA_MODELS_JSONTREE_H
#define STRATA_MODELS_JSONTREE_H

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace strata::detail {

/// 1-based line and column (in code points) inside the text; 0 when the
/// value has no position.
struct JsonPos {
  int line = 0;
  int column = 0;
};

struct JsonMember;

struct JsonValue {
  enum class Kind : uint8_t { Null, Bool, Number, String, Array, Object };
  Kind kind = Kind::Null;
  /// Where the value's first character is.
  JsonPos pos;
  bool boolean = false;
  /// Number: the literal as written (so that no digit is lost when it is
  /// copied into another file); String: the decoded UTF-8 text.
  std::string text;
  std::vector<JsonValue> array;
  /// In document order; keys are unique.
  std::vector<JsonMember> object;

  bool isNull() const { return kind == Kind::Null; }
  bool isObject() const { return kind == Kind::Object; }
  bool isArray() const { return kind == Kind::Array; }
  /// The member `key` of an object, or null when absent.
  const JsonMember *find(std::string_view key) const;
};

struct JsonMember {
  std::string key;
  /// Where the key's opening quote is.
  JsonPos keyPos;
  JsonValue value;
};

/// Deeper nesting is an error; configs nest a few levels.
constexpr int kJsonMaxDepth = 64;

struct JsonSyntaxError {
  JsonPos pos;
  /// "invalid JSON: ..." for syntax errors; duplicate keys and deep nesting
  /// say what they are.
  std::string message;
};

/// Parses `text` as one strict JSON value (surrounding whitespace allowed).
/// False with `error` set at the offending character on failure.
bool parseStrictJson(std::string_view text, JsonValue &out,
                     JsonSyntaxError &error);

} // namespace strata::detail

#endif // STRATA_MODELS_JSONTREE_H
