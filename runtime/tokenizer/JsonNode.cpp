#include "runtime/tokenizer/JsonNode.h"

#include "runtime/tokenizer/TokenizerError.h"

#include <fstream>
#include <sstream>

namespace strata::tok {

namespace {

std::string where(const std::string &file, const JsonPos &pos) {
  if (pos.line == 0)
    return file;
  return file + ":" + std::to_string(pos.line) + ":" +
         std::to_string(pos.column);
}

} // namespace

std::shared_ptr<const JsonDocument> parseJsonDocument(std::string_view text,
                                                      std::string fileName) {
  auto doc = std::make_shared<JsonDocument>();
  doc->fileName = std::move(fileName);
  JsonSyntaxError error;
  if (!parseStrictJson(text, doc->root, error))
    throw TokenizerError(where(doc->fileName, error.pos) + ": " +
                         error.message);
  return doc;
}

std::string readFileBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw TokenizerError(path + ": cannot open the file");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad())
    throw TokenizerError(path + ": cannot read the file");
  return text.str();
}

std::shared_ptr<const JsonDocument> readJsonDocument(const std::string &path) {
  return parseJsonDocument(readFileBytes(path), path);
}

std::string jsonPointerToken(std::string_view key) {
  std::string out;
  out.reserve(key.size());
  for (char c : key) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

void JsonNode::fail(const std::string &message) const {
  throw TokenizerError(where(doc_->fileName, value_->pos) + ": " + path() +
                       ": " + message);
}

const JsonNode &JsonNode::expectObject() const {
  if (!isObject())
    fail(std::string("expected an object, got ") + value_->kindName());
  return *this;
}

const JsonNode &JsonNode::expectArray() const {
  if (!isArray())
    fail(std::string("expected an array, got ") + value_->kindName());
  return *this;
}

JsonNode JsonNode::member(std::string_view key) const {
  expectObject();
  const JsonValue *v = value_->get(key);
  if (!v)
    fail("missing member \"" + std::string(key) + "\"");
  return JsonNode(*v, path_ + "/" + jsonPointerToken(key), *doc_);
}

std::optional<JsonNode> JsonNode::optional(std::string_view key) const {
  expectObject();
  const JsonValue *v = value_->get(key);
  if (!v || v->isNull())
    return std::nullopt;
  return JsonNode(*v, path_ + "/" + jsonPointerToken(key), *doc_);
}

JsonNode JsonNode::at(size_t index) const {
  expectArray();
  return JsonNode(value_->array.at(index), path_ + "/" + std::to_string(index),
                  *doc_);
}

size_t JsonNode::size() const {
  if (isArray())
    return value_->array.size();
  expectObject();
  return value_->object.size();
}

const std::string &JsonNode::asString() const {
  if (!isString())
    fail(std::string("expected a string, got ") + value_->kindName());
  return value_->text;
}

bool JsonNode::asBool() const {
  if (value_->kind != JsonValue::Kind::Bool)
    fail(std::string("expected a boolean, got ") + value_->kindName());
  return value_->boolean;
}

int32_t JsonNode::asIndex() const {
  uint64_t v = 0;
  if (!value_->asUint64(v) || v > 0x7fffffffu)
    fail(isNumber()
             ? "expected a non-negative integer below 2^31, got " + value_->text
             : std::string("expected an integer, got ") + value_->kindName());
  return static_cast<int32_t>(v);
}

std::string JsonNode::stringOr(std::string_view key,
                               std::string fallback) const {
  auto m = optional(key);
  return m ? m->asString() : fallback;
}

bool JsonNode::boolOr(std::string_view key, bool fallback) const {
  auto m = optional(key);
  return m ? m->asBool() : fallback;
}

int32_t JsonNode::indexOr(std::string_view key, int32_t fallback) const {
  auto m = optional(key);
  return m ? m->asIndex() : fallback;
}

void JsonNode::expectKeys(std::initializer_list<std::string_view> known) const {
  expectObject();
  for (const JsonMember &m : value_->object) {
    bool ok = false;
    for (std::string_view k : known)
      ok = ok || m.key == k;
    if (ok)
      continue;
    std::string list;
    for (std::string_view k : known)
      list += (list.empty() ? "" : ", ") + std::string(k);
    JsonNode(m.value, path_ + "/" + jsonPointerToken(m.key), *doc_)
        .fail("unsupported option \"" + m.key + "\" (known: " + list + ")");
  }
}

const std::string &JsonNode::typeName() const {
  expectObject();
  const JsonValue *v = value_->get("type");
  if (!v)
    fail("missing member \"type\"");
  if (!v->isString())
    JsonNode(*v, path_ + "/type", *doc_).asString();
  return v->text;
}

} // namespace strata::tok
