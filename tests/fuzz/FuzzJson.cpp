// The strict JSON reader (json/JsonTree.h), which parses every config.json,
// safetensors header and sharding index before anything else looks at
// them. Each input is read twice, as a safetensors header (byte offsets
// from 8) and as a text file (lines and columns), and both must agree.
// Beyond crashes and stack exhaustion, it checks what the tree promises:
// bounded nesting, unique keys, exact integers, and positions that point at
// the value they belong to, so that no message names the wrong place.
#include "tests/fuzz/FuzzCheck.h"
#include "json/JsonTree.h"

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

using namespace strata;

namespace {

/// A safetensors header starts at byte 8 of its file.
constexpr size_t kBase = 8;

/// Line and column of every byte offset of the text (and of its end), as
/// the reader counts them: columns in code points.
std::vector<JsonPos> positionsOf(std::string_view text) {
  std::vector<JsonPos> at(text.size() + 1);
  int line = 1, column = 1;
  for (size_t i = 0; i <= text.size(); ++i) {
    at[i] = {line, column, i};
    if (i == text.size())
      break;
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      ++line;
      column = 1;
    } else if ((c & 0xC0) != 0x80) {
      ++column;
    }
  }
  return at;
}

class Checker {
public:
  Checker(std::string_view text, size_t base)
      : text_(text), base_(base), positions_(positionsOf(text)) {}

  /// `p` is a byte of the text (or its end when `orEnd`) whose line and
  /// column are the ones counted for it.
  size_t checkPos(const JsonPos &p, bool orEnd) const {
    FUZZ_CHECK(p.offset >= base_ &&
                   p.offset - base_ < text_.size() + (orEnd ? 1 : 0),
               "a position is inside the text");
    size_t i = p.offset - base_;
    FUZZ_CHECK(positions_[i].line == p.line && positions_[i].column == p.column,
               "line and column agree with the byte offset");
    return i;
  }

  void checkValue(const JsonValue &v, int depth) const {
    FUZZ_CHECK(depth < kJsonMaxDepth || (!v.isArray() && !v.isObject()),
               "nesting is bounded");
    size_t i = checkPos(v.pos, false);
    char c = text_[i];
    switch (v.kind) {
    case JsonValue::Kind::Null:
      FUZZ_CHECK(text_.substr(i, 4) == "null", "null is where it was read");
      break;
    case JsonValue::Kind::Bool:
      FUZZ_CHECK(text_.substr(i, v.boolean ? 4 : 5) ==
                     (v.boolean ? "true" : "false"),
                 "a boolean is where it was read");
      break;
    case JsonValue::Kind::Number: {
      FUZZ_CHECK(text_.substr(i, v.text.size()) == v.text,
                 "a number keeps its literal, at its position");
      uint64_t n = 0;
      if (v.asUint64(n))
        FUZZ_CHECK(std::to_string(n) == v.text,
                   "asUint64 reads exactly the integer written");
      break;
    }
    case JsonValue::Kind::String:
      FUZZ_CHECK(c == '"', "a string starts at its quote");
      break;
    case JsonValue::Kind::Array:
      FUZZ_CHECK(c == '[', "an array starts at its bracket");
      for (const JsonValue &e : v.array)
        checkValue(e, depth + 1);
      break;
    case JsonValue::Kind::Object: {
      FUZZ_CHECK(c == '{', "an object starts at its brace");
      std::set<std::string> keys;
      for (const JsonMember &m : v.object) {
        FUZZ_CHECK(keys.insert(m.key).second, "object keys are unique");
        FUZZ_CHECK(v.find(m.key) == &m, "find returns the member");
        FUZZ_CHECK(text_[checkPos(m.keyPos, false)] == '"',
                   "a key's position is its opening quote");
        checkValue(m.value, depth + 1);
      }
      break;
    }
    }
  }

private:
  std::string_view text_;
  size_t base_;
  std::vector<JsonPos> positions_;
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);

  JsonParseOptions header;
  header.baseOffset = kBase;
  header.byteOffsets = true;
  JsonValue root;
  JsonSyntaxError error;
  bool ok = parseStrictJson(text, root, error, header);
  Checker checker(text, kBase);
  if (ok) {
    FUZZ_CHECK(error.message.empty(), "no error on success");
    checker.checkValue(root, 0);
  } else {
    FUZZ_CHECK(!error.message.empty(), "an error says something");
    checker.checkPos(error.pos, true);
  }

  JsonValue asText;
  JsonSyntaxError textError;
  bool textOk = parseStrictJson(text, asText, textError);
  FUZZ_CHECK(textOk == ok, "both readings accept or reject alike");
  if (!ok) {
    FUZZ_CHECK(textError.pos.offset + kBase == error.pos.offset &&
                   textError.pos.line == error.pos.line &&
                   textError.pos.column == error.pos.column,
               "both readings reject at the same place");
    if (error.message.rfind("duplicate key", 0) != 0)
      FUZZ_CHECK(textError.message == error.message,
                 "both readings say the same");
  }
  return 0;
}
