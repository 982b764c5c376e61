// The strict JSON reader (config.json, safetensors headers and indexes):
// the tree it builds (values, decoded strings, number literals as written,
// the position of every key and value) and each rejection with the line,
// column and byte offset it names.
#include "json/JsonTree.h"

#include <catch2/catch.hpp>

using namespace strata;
using Kind = JsonValue::Kind;

namespace {

JsonValue parsed(const std::string &text) {
  JsonValue v;
  JsonSyntaxError error;
  INFO("text: " << text);
  INFO("error: " << error.pos.line << ":" << error.pos.column << " "
                 << error.message);
  bool ok = parseStrictJson(text, v, error);
  REQUIRE(ok);
  return v;
}

void rejected(const std::string &text, int line, int column,
              const std::string &message) {
  JsonValue v;
  JsonSyntaxError error;
  INFO("text: " << text);
  CHECK_FALSE(parseStrictJson(text, v, error));
  CHECK(error.pos.line == line);
  CHECK(error.pos.column == column);
  CHECK(error.message == message);
}

} // namespace

TEST_CASE("json tree: values and their positions", "[json]") {
  // Brackets, commas and escaped quotes inside strings must not move the
  // positions of what follows them.
  JsonValue v = parsed("{\"a\": \"x,]}\\\"[{\",\n"
                       " \"b\" : [1, {\"c\": \"\\\\\"}, -2.5e-3, true, null],\n"
                       "\t\"d\": 18446744073709551616}");
  REQUIRE(v.isObject());
  CHECK(v.pos.line == 1);
  CHECK(v.pos.column == 1);
  REQUIRE(v.object.size() == 3);
  const JsonMember &a = v.object[0];
  CHECK(a.key == "a");
  CHECK(a.value.text == "x,]}\"[{");
  CHECK(a.keyPos.line == 1);
  CHECK(a.keyPos.column == 2);
  CHECK(a.value.pos.column == 7);
  const JsonMember &b = *v.find("b");
  CHECK(b.keyPos.line == 2);
  CHECK(b.keyPos.column == 2);
  CHECK(b.value.pos.column == 8);
  REQUIRE(b.value.array.size() == 5);
  CHECK(b.value.array[0].kind == Kind::Number);
  CHECK(b.value.array[0].text == "1");
  CHECK(b.value.array[0].pos.column == 9);
  const JsonValue &inner = b.value.array[1];
  REQUIRE(inner.isObject());
  CHECK(inner.pos.column == 12);
  CHECK(inner.object[0].value.text == "\\");
  CHECK(inner.object[0].value.pos.column == 18);
  // Numbers keep the literal as written.
  CHECK(b.value.array[2].text == "-2.5e-3");
  CHECK(b.value.array[2].pos.column == 25);
  CHECK(b.value.array[3].kind == Kind::Bool);
  CHECK(b.value.array[3].boolean);
  CHECK(b.value.array[4].kind == Kind::Null);
  CHECK(b.value.array[4].pos.column == 40);
  // Beyond 2^64: still a valid JSON number, kept digit for digit.
  CHECK(v.find("d")->value.text == "18446744073709551616");
  CHECK(v.find("d")->keyPos.line == 3);
  CHECK(v.find("d")->keyPos.column == 2);
  CHECK(v.find("missing") == nullptr);
}

TEST_CASE("json tree: escapes decode to UTF-8 and columns count code points",
          "[json]") {
  // A non-BMP character escaped as a surrogate pair, as Python's json module
  // writes it by default.
  JsonValue v =
      parsed("{\"\xc3\xa9t\xc3\xa9\": \"\\u00e9\\ud83d\\ude00\", \"n\": 1}");
  CHECK(v.object[0].key == "\xc3\xa9t\xc3\xa9");
  CHECK(v.object[0].value.text == "\xc3\xa9\xf0\x9f\x98\x80");
  // The key "été" takes 5 columns with its quotes (7 bytes), the escaped
  // string 20.
  CHECK(v.object[1].keyPos.column == 31);
  CHECK(v.object[1].value.pos.column == 36);
}

TEST_CASE("json tree: what RFC 8259 does not allow is rejected",
          "[json][errors]") {
  rejected("{\"a\": [1, 2,]}", 1, 12,
           "invalid JSON: trailing comma before ']'");
  rejected("{\"a\": 1,\n}", 1, 8, "invalid JSON: trailing comma before '}'");
  rejected("{\"a\": 1 // note\n}", 1, 9,
           "invalid JSON: comments are not allowed in JSON");
  rejected("{\"a\": /* note */ 1}", 1, 7,
           "invalid JSON: comments are not allowed in JSON");
  rejected("{'a': 1}", 1, 2,
           "invalid JSON: single quotes are not allowed in JSON; strings and "
           "keys take double quotes");
  rejected("{\"a\": NaN}", 1, 7, "invalid JSON: 'NaN' is not a JSON number");
  rejected("{\"a\": Infinity}", 1, 7,
           "invalid JSON: 'Infinity' is not a JSON number");
  rejected("{\"a\": -Infinity}", 1, 7,
           "invalid JSON: '-Infinity' is not a JSON number");
  rejected("{\"a\":\n  1e400}", 2, 3,
           "invalid JSON: number 1e400 is out of range for a double");
  rejected("{\"a\": True}", 1, 7,
           "invalid JSON: invalid literal 'True'; expected a string, a "
           "number, true, false, null, an array or an object");
  rejected("{a: 1}", 1, 2,
           "invalid JSON: invalid literal 'a'; expected a string, a number, "
           "true, false, null, an array or an object");
  rejected("{\"a\": 01}", 1, 8,
           "invalid JSON: unexpected number literal; expected ',' or '}'");
  // A missing comma is reported where the next value starts.
  rejected("{\"a\": 1\n \"b\": 2}", 2, 2,
           "invalid JSON: unexpected string literal; expected ',' or '}'");
  rejected("[1, \"x\" true]", 1, 9,
           "invalid JSON: unexpected true literal; expected ',' or ']'");
  rejected("{\"a\": \"x\xff\"}", 1, 9,
           "invalid JSON: invalid string: ill-formed UTF-8 byte");
  rejected("{\"a\": \"x\ty\"}", 1, 9,
           "invalid JSON: invalid string: control character U+0009 (HT) "
           "must be escaped to \\u0009 or \\t");
  rejected("{\"a\": \"\\ud800\"}", 1, 14,
           "invalid JSON: invalid string: surrogate U+D800..U+DBFF must be "
           "followed by U+DC00..U+DFFF");
  rejected("{\"a\": 1} x", 1, 10,
           "invalid JSON: unexpected text after the JSON value");
  rejected("{\"a\": 1", 1, 8,
           "invalid JSON: unexpected end of input; expected ',' or '}'");
  rejected("\xef\xbb\xbf{}", 1, 1,
           "invalid JSON: a byte order mark is not allowed");
}

TEST_CASE("json tree: duplicate keys at any depth", "[json][errors]") {
  rejected("{\"a\": 1,\n \"a\": 2}", 2, 2,
           "duplicate key 'a' (first given at line 1)");
  rejected("{\"a\": {\"b\": [{\"c\": 1,\n\n \"c\": 2}]}}", 3, 2,
           "duplicate key 'a.b[0].c' (first given at line 1)");
  // The same key in two objects is fine.
  parsed("{\"a\": {\"x\": 1}, \"b\": {\"x\": 1}}");
}

TEST_CASE("json tree: nesting is bounded", "[json][errors]") {
  std::string ok = std::string(size_t(kJsonMaxDepth), '[') +
                   std::string(size_t(kJsonMaxDepth), ']');
  parsed(ok);
  std::string deep = "[" + ok + "]";
  rejected(deep, 1, kJsonMaxDepth + 1,
           "nesting deeper than " + std::to_string(kJsonMaxDepth) + " levels");
  // A hostile file does not exhaust the stack.
  std::string hostile(1 << 20, '[');
  JsonValue v;
  JsonSyntaxError error;
  CHECK_FALSE(parseStrictJson(hostile, v, error));
}

TEST_CASE("json tree: byte offsets count from the base offset",
          "[json][offsets]") {
  // A safetensors header starts at byte 8 of its file.
  JsonParseOptions header;
  header.baseOffset = 8;
  header.byteOffsets = true;
  JsonValue v;
  JsonSyntaxError error;
  REQUIRE(parseStrictJson("{\"a\": [1, \"\\u00e9\"],\n \"b\": {}}", v, error,
                          header));
  CHECK(v.pos.offset == 8);
  CHECK(v.find("a")->keyPos.offset == 9);
  CHECK(v.get("a")->array[1].pos.offset == 18);
  CHECK(v.find("b")->keyPos.offset == 30);
  CHECK(v.find("b")->keyPos.line == 2);
  CHECK(v.get("b")->pos.offset == 35);

  // Errors name the offending byte; a second place is named by its byte.
  CHECK_FALSE(parseStrictJson("{\"a\": [1, 2,]}", v, error, header));
  CHECK(error.pos.offset == 19);
  CHECK(error.message == "invalid JSON: trailing comma before ']'");
  CHECK_FALSE(parseStrictJson("{\"x\":1,\"y\":2,\"x\":3}", v, error, header));
  CHECK(error.pos.offset == 21);
  CHECK(error.message == "duplicate key 'x' (first given at byte 9)");
  CHECK_FALSE(parseStrictJson("", v, error, header));
  CHECK(error.pos.offset == 8);
  CHECK_FALSE(parseStrictJson("{\"a\": 1", v, error, header));
  CHECK(error.pos.offset == 15);
}

TEST_CASE("json tree: integers read exactly, kinds named for messages",
          "[json]") {
  JsonValue v;
  JsonSyntaxError error;
  REQUIRE(parseStrictJson("[18446744073709551615, 18446744073709551616, 0, "
                          "-1, 1.0, 1e3, \"7\", 007]",
                          v, error) == false);
  // A leading zero is not JSON; without it the list parses.
  REQUIRE(parseStrictJson("[18446744073709551615, 18446744073709551616, 0, "
                          "-1, 1.0, 1e3, \"7\"]",
                          v, error));
  uint64_t n = 1;
  CHECK(v.array[0].asUint64(n));
  CHECK(n == UINT64_MAX);
  CHECK_FALSE(v.array[1].asUint64(n)); // 2^64
  CHECK(v.array[2].asUint64(n));
  CHECK(n == 0);
  for (size_t i = 3; i < v.array.size(); ++i)
    CHECK_FALSE(v.array[i].asUint64(n));
  CHECK(std::string(v.array[0].kindName()) == "a number");
  CHECK(std::string(v.array[6].kindName()) == "a string");
  CHECK(std::string(v.kindName()) == "an array");
  CHECK(v.get("a") == nullptr); // not an object
}
