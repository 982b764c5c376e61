// A small strict JSON reader for the runtime's own file headers (the
// safetensors header and its sharding index). The runtime links no YAML or
// MLIR library, and these files are machine-written, so strict RFC 8259
// with nothing extra: no comments, no trailing commas, no duplicate keys.
// Nesting depth is bounded so that a hostile header cannot exhaust the
// stack. Errors name the byte offset in the parsed text.
#ifndef STRATA_RUNTIME_JSONLITE_H
#define STRATA_RUNTIME_JSONLITE_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace strata::json {

/// Deeper nesting is an error; safetensors headers nest three levels.
constexpr int kMaxDepth = 64;

struct Value {
  enum class Kind : uint8_t { Null, Bool, Number, String, Array, Object };
  Kind kind = Kind::Null;
  /// Byte offset of the value's first character (from `baseOffset`).
  size_t offset = 0;
  bool boolean = false;
  /// Number: the literal as written, so integers beyond 2^53 stay exact.
  /// String: the decoded text (UTF-8).
  std::string text;
  std::vector<Value> array;
  /// In document order; keys are unique.
  std::vector<std::pair<std::string, Value>> object;

  bool isObject() const { return kind == Kind::Object; }
  bool isArray() const { return kind == Kind::Array; }
  bool isString() const { return kind == Kind::String; }
  /// The member `key` of an object, or null when absent (or not an object).
  const Value *find(std::string_view key) const;
  /// A number written as a non-negative integer that fits in 64 bits.
  bool asUint64(uint64_t &out) const;
  /// A short name of the kind, for messages ("an object", "a string", ...).
  const char *kindName() const;
};

/// Parses `text` as one JSON value (surrounding whitespace allowed). On
/// failure returns false and sets `error` to "at byte N: what", where N
/// counts from `baseOffset` (the text's position in its file).
bool parse(std::string_view text, Value &out, std::string &error,
           size_t baseOffset = 0);

} // namespace strata::json

#endif // STRATA_RUNTIME_JSONLITE_H
