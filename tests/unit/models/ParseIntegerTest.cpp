// The one reader of decimal integers: whole text only, an optional sign,
// overflow reported apart from malformed text.
#include "models/ParseInteger.h"

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>

using strata::IntegerParse;
using strata::parseDecimalInteger;

namespace {
/// Parses `text` expecting Ok and `want`.
void checkReads(const std::string &text, int64_t want) {
  INFO("text '" << text << "'");
  int64_t v = 0;
  REQUIRE(parseDecimalInteger(text, v) == IntegerParse::Ok);
  CHECK(v == want);
}

/// Parses `text` expecting the failure `want`, with `out` left alone.
void checkFails(const std::string &text, IntegerParse want) {
  INFO("text '" << text << "'");
  int64_t v = 5;
  CHECK(parseDecimalInteger(text, v) == want);
  CHECK(v == 5);
}
} // namespace

TEST_CASE("decimal integers with an optional sign are read") {
  checkReads("42", 42);
  checkReads("0", 0);
  checkReads("-17", -17);
  checkReads("+17", 17);
  checkReads("-0", 0);
  checkReads("007", 7);
}

TEST_CASE("the ends of the int64 range are read exactly") {
  checkReads("9223372036854775807", INT64_MAX);
  checkReads("-9223372036854775808", INT64_MIN);
  checkReads("+0009223372036854775807", INT64_MAX);
}

TEST_CASE("one past either end is out of range") {
  for (const char *text : {"9223372036854775808", "-9223372036854775809",
                           "99999999999999999999", "18446744073709551616"})
    checkFails(text, IntegerParse::OutOfRange);
}

TEST_CASE("empty text and a lone sign are malformed") {
  for (const char *text : {"", "-", "+"})
    checkFails(text, IntegerParse::Malformed);
}

TEST_CASE("anything around or inside the digits is malformed") {
  for (const char *text : {" 4", "4 ", "4x", "x4", "--4", "+-4", "-+4", "4-",
                           "0x10", "1e3", "5.0", "1,000", "\t4", "4\n"})
    checkFails(text, IntegerParse::Malformed);
  // Overflowing digits followed by junk: the junk decides.
  checkFails("99999999999999999999x", IntegerParse::Malformed);
  // An embedded NUL is not the end of the text.
  checkFails(std::string("4\0"
                         "5",
                         3),
             IntegerParse::Malformed);
}
