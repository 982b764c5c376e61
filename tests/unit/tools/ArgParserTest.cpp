// The command-line parser shared by the tools: every way a command line can
// be wrong gets an error naming the option, and values arrive intact.
#include "tools/common/ArgParser.h"

#include <catch2/catch.hpp>

using strata::tools::ArgParser;

namespace {
ArgParser makeParser() {
  ArgParser p;
  p.addOption("emit", "STAGE", "stage");
  p.addOption("output", "FILE", "output");
  p.addAlias("-o", "output");
  p.addFlag("no-graphs", "eager");
  return p;
}
} // namespace

TEST_CASE("options take values inline or as the next argument") {
  ArgParser p = makeParser();
  REQUIRE(
      p.parse({"model.yaml", "--emit=ir", "-o", "out.mlir", "--no-graphs"}));
  CHECK(p.get("emit") == "ir");
  CHECK(p.get("output") == "out.mlir");
  CHECK(p.has("no-graphs"));
  CHECK_FALSE(p.has("missing"));
  CHECK(p.get("missing", "dflt") == "dflt");
  REQUIRE(p.positionals().size() == 1);
  CHECK(p.positionals()[0] == "model.yaml");
}

TEST_CASE("an unknown option names the nearest known one") {
  ArgParser p = makeParser();
  REQUIRE_FALSE(p.parse({"--emti=ir"}));
  CHECK(p.error() == "unknown option '--emti'; did you mean '--emit'?");
}

TEST_CASE("an unknown option far from every known one gets no suggestion") {
  ArgParser p = makeParser();
  REQUIRE_FALSE(p.parse({"--completely-different"}));
  CHECK(p.error() == "unknown option '--completely-different'");
}

TEST_CASE("an option without its value is an error") {
  ArgParser p = makeParser();
  REQUIRE_FALSE(p.parse({"--output"}));
  CHECK(p.error() == "option '--output' expects a value (FILE)");
}

TEST_CASE("a flag given a value is an error") {
  ArgParser p = makeParser();
  REQUIRE_FALSE(p.parse({"--no-graphs=1"}));
  CHECK(p.error() == "option '--no-graphs' takes no value");
}

TEST_CASE("an unknown single-dash option is an error") {
  ArgParser p = makeParser();
  REQUIRE_FALSE(p.parse({"-x"}));
  CHECK(p.error() == "unknown option '-x'");
}

TEST_CASE("everything after -- is positional") {
  ArgParser p = makeParser();
  REQUIRE(p.parse({"--", "--emit=ir"}));
  REQUIRE(p.positionals().size() == 1);
  CHECK(p.positionals()[0] == "--emit=ir");
}

TEST_CASE("an abbreviated option names the option it begins") {
  ArgParser p = makeParser();
  REQUIRE_FALSE(p.parse({"--out=x"}));
  CHECK(p.error() == "unknown option '--out'; did you mean '--output'?");
}

TEST_CASE("integer option values are whole, in range and clean") {
  using strata::tools::parseInteger;
  int64_t v = 0;
  CHECK(parseInteger("42", 1, 100, v));
  CHECK(v == 42);
  CHECK_FALSE(parseInteger("", 1, 100, v));
  CHECK_FALSE(parseInteger("0", 1, 100, v));
  CHECK_FALSE(parseInteger("101", 1, 100, v));
  CHECK_FALSE(parseInteger("4x", 1, 100, v));
  CHECK_FALSE(parseInteger(" 4", 1, 100, v));
  CHECK_FALSE(parseInteger("99999999999999999999", 1, INT64_MAX, v));
  CHECK(parseInteger("-5", -10, 10, v));
  CHECK(v == -5);
  CHECK(parseInteger("+5", -10, 10, v));
  CHECK(v == 5);
  CHECK_FALSE(parseInteger("-11", -10, 10, v));
  CHECK(v == 5);
}

TEST_CASE("number option values are whole and finite") {
  using strata::tools::parseNumber;
  double d = 0;
  CHECK(parseNumber("4140.5", d));
  CHECK(d == 4140.5);
  CHECK_FALSE(parseNumber("", d));
  CHECK_FALSE(parseNumber("1.5GB", d));
  CHECK_FALSE(parseNumber("inf", d));
  CHECK_FALSE(parseNumber("nan", d));
}

TEST_CASE("integer lists are comma-separated with no empty item") {
  using strata::tools::parseIntegerList;
  std::vector<int64_t> v;
  REQUIRE(parseIntegerList("1,8,32", 1, 4096, v));
  CHECK(v == std::vector<int64_t>{1, 8, 32});
  REQUIRE(parseIntegerList("7", 1, 4096, v));
  CHECK(v == std::vector<int64_t>{7});
  CHECK_FALSE(parseIntegerList("1,,8", 1, 4096, v));
  CHECK_FALSE(parseIntegerList("1,8,", 1, 4096, v));
  CHECK_FALSE(parseIntegerList("", 1, 4096, v));
  CHECK_FALSE(parseIntegerList("1,0", 1, 4096, v));
}
