// Typed access to a parsed JSON document for the tokenizer loaders. A
// JsonNode is a value plus its JSON pointer and file name, so that every
// complaint says where it is:
//   tokenizer.json:12:7: /model/merges/3: expected a string or an array ...
#ifndef STRATA_RUNTIME_TOKENIZER_JSONNODE_H
#define STRATA_RUNTIME_TOKENIZER_JSONNODE_H

#include "json/JsonTree.h"

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace strata::tok {

/// A parsed file: the tree and the name used in messages.
struct JsonDocument {
  std::string fileName;
  JsonValue root;
};

/// Parses `text`; a syntax error throws TokenizerError naming `fileName`.
std::shared_ptr<const JsonDocument> parseJsonDocument(std::string_view text,
                                                      std::string fileName);

/// Reads and parses a file; a missing or unreadable file throws.
std::shared_ptr<const JsonDocument> readJsonDocument(const std::string &path);
/// The bytes of the file at `path`; TokenizerError naming it when it cannot
/// be opened or read.
std::string readFileBytes(const std::string &path);

/// "~" and "/" escaped as RFC 6901 asks.
std::string jsonPointerToken(std::string_view key);

class JsonNode {
public:
  JsonNode(const JsonValue &value, std::string path, const JsonDocument &doc)
      : value_(&value), path_(std::move(path)), doc_(&doc) {}
  static JsonNode root(const JsonDocument &doc) {
    return JsonNode(doc.root, "", doc);
  }

  const JsonValue &value() const { return *value_; }
  /// The JSON pointer of this value ("/model/vocab"; "/" for the root).
  std::string path() const { return path_.empty() ? "/" : path_; }
  const JsonDocument &document() const { return *doc_; }

  /// Throws TokenizerError: "file:line:col: /path: message".
  [[noreturn]] void fail(const std::string &message) const;

  bool isNull() const { return value_->isNull(); }
  bool isString() const { return value_->isString(); }
  bool isObject() const { return value_->isObject(); }
  bool isArray() const { return value_->isArray(); }
  bool isNumber() const { return value_->isNumber(); }

  /// Each check fails with "expected <what>, got <kind>".
  const JsonNode &expectObject() const;
  const JsonNode &expectArray() const;

  /// Member `key` of an object; a missing member fails.
  JsonNode member(std::string_view key) const;
  /// Member `key`, or nothing when it is absent or null.
  std::optional<JsonNode> optional(std::string_view key) const;
  /// Element `index` of an array.
  JsonNode at(size_t index) const;
  size_t size() const;

  const std::string &asString() const;
  bool asBool() const;
  /// A non-negative integer that fits int32 (token ids, counts).
  int32_t asIndex() const;

  /// Member helpers with defaults for absent or null members.
  std::string stringOr(std::string_view key, std::string fallback) const;
  bool boolOr(std::string_view key, bool fallback) const;
  int32_t indexOr(std::string_view key, int32_t fallback) const;

  /// Fails on a member not in `known`: an option this library does not know
  /// could change the encoding, so it is never ignored silently.
  void expectKeys(std::initializer_list<std::string_view> known) const;

  /// The "type" member, a string.
  const std::string &typeName() const;

private:
  const JsonValue *value_;
  std::string path_;
  const JsonDocument *doc_;
};

} // namespace strata::tok

#endif // STRATA_RUNTIME_TOKENIZER_JSONNODE_H
