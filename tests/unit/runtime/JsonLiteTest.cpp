// The runtime's strict JSON reader: what it accepts, and that each
// rejection names the byte offset.
#include "runtime/JsonLite.h"

#include <catch2/catch.hpp>

using namespace strata;
using Catch::Contains;

TEST_CASE("json: values, escapes and exact integers") {
  json::Value v;
  std::string error;
  REQUIRE(json::parse(
      " {\"a\": [1, -2.5e3, true, false, null], \"s\": \"x\\n\\u00e9"
      "\\ud83d\\ude00\", \"big\": 18446744073709551615} ",
      v, error));
  REQUIRE(v.isObject());
  REQUIRE(v.find("a")->array.size() == 5);
  CHECK(v.find("a")->array[1].text == "-2.5e3");
  CHECK(v.find("s")->text == "x\n\xc3\xa9\xf0\x9f\x98\x80");
  uint64_t big = 0;
  CHECK(v.find("big")->asUint64(big));
  CHECK(big == UINT64_MAX);
  CHECK(!v.find("a")->array[1].asUint64(big));
  CHECK(v.find("missing") == nullptr);
}

TEST_CASE("json: strict rejections name the byte") {
  auto fails = [](const std::string &text, const std::string &what) {
    json::Value v;
    std::string error;
    CHECK(!json::parse(text, v, error));
    CHECK_THAT(error, Contains(what));
  };
  fails("{\"a\":1,}", "at byte 7: expected a string key");
  fails("[1 2]", "at byte 3: expected ',' or ']'");
  fails("{\"a\":1,\"a\":2}", "at byte 7: duplicate key \"a\"");
  fails("01", "at byte 0: number with a leading zero");
  fails("\"abc", "at byte 0: unterminated string");
  fails("\"\\ud800\"", "unpaired high surrogate");
  fails("{} x", "at byte 3: unexpected text after the JSON value");
  fails("", "at byte 0: unexpected end of input");
  fails(std::string(100, '['), "nesting deeper than 64");
}
