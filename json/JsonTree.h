// The one JSON reader of strata: a document read strictly into a tree of
// values that remember where they were written. It serves the model side
// (a Hugging Face config.json, whose messages name line and column) and
// the runtime (safetensors headers, whose messages name the byte offset in
// the file, and sharding indexes).
//
// The syntax is RFC 8259 and nothing more: no comments, trailing commas,
// single quotes, NaN or Infinity; strings must be valid UTF-8 with control
// characters escaped; numbers must fit a double. Beyond the RFC, which only
// says that names SHOULD be unique, a key given twice in one object is an
// error: which of the two values a reader takes differs between JSON
// libraries, so a file that relies on either is ambiguous (in a safetensors
// header: which tensor is meant?). Nesting is bounded so that a hostile
// file cannot exhaust the stack.
//
// nlohmann-json checks the syntax (its SAX parser, which is iterative and
// reports errors without throwing); the positions come from a scan of the
// same text that advances token by token in step with the parser's events,
// so no JSON value is read twice. This header includes no nlohmann header,
// so code built without exceptions can use it.
#ifndef STRATA_JSON_JSONTREE_H
#define STRATA_JSON_JSONTREE_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace strata {

/// Where a character is: 1-based line and column (in code points), and the
/// byte offset (from JsonParseOptions::baseOffset). Line 0 when there is no
/// position.
struct JsonPos {
  int line = 0;
  int column = 0;
  size_t offset = 0;
};

struct JsonMember;

struct JsonValue {
  enum class Kind : uint8_t { Null, Bool, Number, String, Array, Object };
  Kind kind = Kind::Null;
  /// Where the value's first character is.
  JsonPos pos;
  bool boolean = false;
  /// Number: the literal as written (so that no digit is lost, integers
  /// beyond 2^53 included); String: the decoded UTF-8 text.
  std::string text;
  std::vector<JsonValue> array;
  /// In document order; keys are unique.
  std::vector<JsonMember> object;

  bool isNull() const { return kind == Kind::Null; }
  bool isObject() const { return kind == Kind::Object; }
  bool isArray() const { return kind == Kind::Array; }
  bool isString() const { return kind == Kind::String; }
  bool isNumber() const { return kind == Kind::Number; }
  /// The member `key` of an object, or null when absent (or not an object).
  const JsonMember *find(std::string_view key) const;
  /// The value of member `key`, or null when absent (or not an object).
  const JsonValue *get(std::string_view key) const;
  /// A number written as a non-negative integer (digits only) that fits in
  /// 64 bits.
  bool asUint64(uint64_t &out) const;
  /// A short name of the kind, for messages ("an object", "a string", ...).
  const char *kindName() const;
};

struct JsonMember {
  std::string key;
  /// Where the key's opening quote is.
  JsonPos keyPos;
  JsonValue value;
};

/// Deeper nesting is an error; configs and safetensors headers nest a few
/// levels.
constexpr int kJsonMaxDepth = 64;

struct JsonParseOptions {
  /// Where the text starts in its file; added to every byte offset.
  size_t baseOffset = 0;
  /// How a message points at a second place (the first of two equal keys):
  /// by line for text files, by byte offset for a header inside a binary
  /// file, whose text is usually a single line.
  bool byteOffsets = false;
};

struct JsonSyntaxError {
  /// The offending character (the end of the text when it ends early).
  JsonPos pos;
  /// "invalid JSON: ..." for syntax errors; duplicate keys and deep nesting
  /// say what they are.
  std::string message;
};

/// Parses `text` as one strict JSON value (surrounding whitespace allowed).
/// False with `error` set at the offending character on failure.
bool parseStrictJson(std::string_view text, JsonValue &out,
                     JsonSyntaxError &error,
                     const JsonParseOptions &options = {});

} // namespace strata

#endif // STRATA_JSON_JSONTREE_H
