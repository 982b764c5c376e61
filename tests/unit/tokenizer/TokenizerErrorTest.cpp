// Damaged and unsupported tokenizer.json files: one clear message that
// names the file and the JSON path, never a crash or a silent encoding.
#include "TinyTokenizers.h"

#include "runtime/tokenizer/Tokenizer.h"

#include <catch2/catch.hpp>

using namespace strata::tok;
using namespace strata::tok::testing;

namespace {

// The message loading `text` fails with ("" when it loads).
std::string loadError(const std::string &text) {
  try {
    Tokenizer::fromJson(text, "tokenizer.json");
  } catch (const TokenizerError &e) {
    return e.what();
  }
  return "";
}

std::string loadDocError(const json &doc) { return loadError(doc.dump()); }

} // namespace

TEST_CASE("bad JSON names the file, line and column") {
  CHECK(loadError("{\n  \"model\": [1, 2,]\n}") ==
        "tokenizer.json:2:17: invalid JSON: trailing comma before ']'");
  CHECK_THAT(loadError(""),
             Catch::StartsWith("tokenizer.json:1:1: invalid JSON"));
}

TEST_CASE("unsupported components name their JSON path") {
  json doc = byteLevelTokenizer();
  doc["pre_tokenizer"] = {
      {"type", "Sequence"},
      {"pretokenizers",
       json::array({{{"type", "Digits"}, {"individual_digits", true}},
                    {{"type", "Whitespace"}}})}};
  CHECK_THAT(
      loadDocError(doc),
      Catch::EndsWith(": /pre_tokenizer/pretokenizers/1/type: "
                      "unsupported pre-tokenizer \"Whitespace\" (supported: "
                      "ByteLevel, Digits, Metaspace, Split, Sequence)"));

  doc = byteLevelTokenizer();
  doc["model"]["type"] = "WordPiece";
  CHECK_THAT(loadDocError(doc),
             Catch::EndsWith(": /model/type: unsupported model "
                             "\"WordPiece\" (supported: BPE)"));

  doc = byteLevelTokenizer();
  doc["normalizer"] = {{"type", "Lowercase"}};
  CHECK_THAT(loadDocError(doc),
             Catch::EndsWith(": /normalizer/type: unsupported normalizer "
                             "\"Lowercase\" (supported: NFC, NFD, NFKC, NFKD, "
                             "Prepend, Replace, Sequence)"));

  doc = byteLevelTokenizer();
  doc["decoder"] = {{"type", "WordPiece"}};
  CHECK_THAT(loadDocError(doc),
             Catch::Contains("/decoder/type: unsupported decoder"));

  doc = byteLevelTokenizer();
  doc["post_processor"] = {{"type", "BertProcessing"}};
  CHECK_THAT(
      loadDocError(doc),
      Catch::Contains("/post_processor/type: unsupported post-processor"));
}

TEST_CASE("unknown options and encoding-changing settings are refused") {
  json doc = byteLevelTokenizer();
  doc["pre_tokenizer"]["prefix_everything"] = true;
  CHECK_THAT(loadDocError(doc),
             Catch::Contains("/pre_tokenizer/prefix_everything: unsupported "
                             "option \"prefix_everything\""));
  doc = byteLevelTokenizer();
  doc["truncation"] = {{"max_length", 8}};
  CHECK_THAT(loadDocError(doc),
             Catch::Contains("/truncation: truncation is not "
                             "supported; set it to null"));
  doc = byteLevelTokenizer();
  doc["model"]["dropout"] = 0.1;
  CHECK_THAT(loadDocError(doc), Catch::Contains("/model/dropout: BPE dropout"));
  doc = byteLevelTokenizer();
  doc["model"]["continuing_subword_prefix"] = "##";
  CHECK_THAT(loadDocError(doc),
             Catch::Contains("/model/continuing_subword_prefix: "
                             "continuing_subword_prefix is not supported"));
  doc = byteLevelTokenizer();
  doc["pre_tokenizer"] = {{"type", "Split"},
                          {"pattern", {{"Regex", "(unclosed"}}},
                          {"behavior", "Isolated"},
                          {"invert", false}};
  CHECK_THAT(loadDocError(doc), Catch::Contains("/pre_tokenizer/pattern/Regex: "
                                                "invalid regular expression"));
  doc["pre_tokenizer"]["pattern"] = {{"Regex", "a"}};
  doc["pre_tokenizer"]["behavior"] = "Sideways";
  CHECK_THAT(loadDocError(doc),
             Catch::Contains("/pre_tokenizer/behavior: unknown "
                             "split behavior \"Sideways\""));
}

TEST_CASE("damaged vocabularies and merges") {
  json doc = byteLevelTokenizer();
  doc["model"]["merges"].push_back("h z");
  CHECK_THAT(loadDocError(doc),
             Catch::EndsWith(": /model/merges/9: token \"z\" of "
                             "this merge is not in the vocabulary"));
  doc = byteLevelTokenizer();
  doc["model"]["merges"].push_back("h e l");
  CHECK_THAT(loadDocError(doc),
             Catch::Contains("/model/merges/9: expected two "
                             "tokens separated by one space"));
  doc = byteLevelTokenizer();
  doc["model"]["merges"].push_back(7);
  CHECK_THAT(loadDocError(doc), Catch::Contains("/model/merges/9: expected"));
  doc = byteLevelTokenizer();
  doc["model"]["vocab"]["x"] = 3;
  CHECK_THAT(loadDocError(doc),
             Catch::Contains("/model/vocab/x: id 3 is also the id of \"o\""));
  doc = byteLevelTokenizer();
  doc["model"]["vocab"]["x"] = "3";
  CHECK_THAT(loadDocError(doc), Catch::Contains("/model/vocab/x: expected an "
                                                "integer, got a string"));
  doc = byteLevelTokenizer();
  doc["model"]["vocab"]["x"] = -1;
  CHECK_THAT(loadDocError(doc), Catch::Contains("/model/vocab/x: expected a "
                                                "non-negative integer"));
  doc = byteLevelTokenizer();
  doc["model"].erase("vocab");
  CHECK_THAT(loadDocError(doc),
             Catch::Contains("/model: missing member \"vocab\""));
  doc = byteLevelTokenizer();
  doc["model"]["unk_token"] = "<unk>";
  CHECK_THAT(loadDocError(doc),
             Catch::Contains("/model/unk_token: unk_token "
                             "\"<unk>\" is not in the vocabulary"));
  // A key written twice is ambiguous JSON.
  std::string text = byteLevelTokenizer().dump();
  text.replace(text.find("\"h\":0"), 5, "\"h\":0,\"h\":1");
  CHECK_THAT(loadError(text), Catch::Contains("duplicate key 'model.vocab.h'"));
}

TEST_CASE("added tokens that clash with the vocabulary") {
  json doc = byteLevelTokenizer();
  doc["added_tokens"][0]["id"] = 3;
  CHECK_THAT(loadDocError(doc),
             Catch::Contains("/added_tokens/0/id: id 3 is also "
                             "the id of \"o\" in the vocabulary"));
  doc = byteLevelTokenizer();
  doc["added_tokens"].push_back(doc["added_tokens"][0]);
  doc["added_tokens"][1]["content"] = "<|other|>";
  CHECK_THAT(loadDocError(doc), Catch::Contains("/added_tokens/1/id: id 100 is "
                                                "also the id of added token"));
  doc = byteLevelTokenizer();
  doc["added_tokens"][0]["content"] = "hello";
  CHECK_THAT(loadDocError(doc),
             Catch::Contains("added token \"hello\" has id 100 "
                             "but the vocabulary gives it 12"));
}

TEST_CASE("side files: errors name the side file") {
  TokenizerSideFiles side;
  side.tokenizerConfig = R"({"eos_token": "<|nope|>"})";
  CHECK_THROWS_WITH(
      Tokenizer::fromJson(byteLevelTokenizer().dump(), "tokenizer.json", side),
      "tokenizer_config.json:1:15: /eos_token: token \"<|nope|>\" is not in "
      "the vocabulary");
  side.tokenizerConfig.reset();
  side.generationConfig = R"({"eos_token_id": [1, 5000]})";
  CHECK_THROWS_WITH(
      Tokenizer::fromJson(byteLevelTokenizer().dump(), "tokenizer.json", side),
      Catch::Contains("/eos_token_id/1: id 5000 is beyond the vocabulary"));
  CHECK_THROWS_WITH(Tokenizer::fromFile("/nonexistent/tokenizer.json"),
                    "/nonexistent/tokenizer.json: cannot open the file");
}
