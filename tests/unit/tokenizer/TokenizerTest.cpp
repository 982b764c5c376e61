// Features of the tokenizer on small hand-written tokenizer.json files.
#include "TinyTokenizers.h"

#include "runtime/tokenizer/PreTokenizer.h"
#include "runtime/tokenizer/StreamDecoder.h"
#include "runtime/tokenizer/Tokenizer.h"
#include "runtime/tokenizer/Utf8.h"

#include <catch2/catch.hpp>

using namespace strata::tok;
using namespace strata::tok::testing;
using Ids = std::vector<int32_t>;

namespace {

Tokenizer load(const json &doc, const TokenizerSideFiles &side = {}) {
  return Tokenizer::fromJson(doc.dump(), "tokenizer.json", side);
}

} // namespace

TEST_CASE("byte-level BPE merges by rank and decodes back") {
  Tokenizer t = load(byteLevelTokenizer());
  // "hello" merges fully; " world" is one word with its space (Ġworld).
  CHECK(t.encode("hello world", false) == Ids{12, 17});
  CHECK(t.encode("hello world!", true) == Ids{12, 17, 8});
  CHECK(t.decode(Ids{12, 17, 8}, false) == "hello world!");
  CHECK(t.encode("", true).empty());
  CHECK(t.vocabSize() == 101);
  CHECK(t.idToToken(12) == std::optional<std::string_view>("hello"));
  CHECK(t.tokenToId("<|end|>") == 100);
  CHECK(t.tokenToId("nope") == -1);
}

TEST_CASE("ignore_merges takes a word that is a token whole") {
  json doc = byteLevelTokenizer();
  // Without the merge h+e, "hello" cannot be built, only looked up.
  doc["model"]["merges"] = json::array({"l l"});
  CHECK(load(doc).encode("hello", false) == Ids{0, 1, 10, 3});
  doc["model"]["ignore_merges"] = true;
  CHECK(load(doc).encode("hello", false) == Ids{12});
}

TEST_CASE("special tokens are found in the text before pre-tokenization") {
  Tokenizer t = load(byteLevelTokenizer());
  CHECK(t.encode("hello<|end|> world", false) == Ids{12, 100, 17});
  CHECK(t.isSpecial(100));
  CHECK_FALSE(t.isSpecial(12));
  CHECK(t.decode(Ids{12, 100, 17}, false) == "hello<|end|> world");
  CHECK(t.decode(Ids{12, 100, 17}, true) == "hello world");
  // Unknown ids are skipped.
  CHECK(t.decode(Ids{12, 5000, -3}, false) == "hello");
}

TEST_CASE("added token flags: lstrip, rstrip, single_word, normalized") {
  json doc = byteLevelTokenizer();
  auto &added = doc["added_tokens"][0];
  added["lstrip"] = true;
  added["rstrip"] = true;
  CHECK(load(doc).encode("hello  <|end|>  world", false) ==
        Ids{12, 100, 5, 14, 2, 7});
  added["lstrip"] = false;
  added["rstrip"] = false;
  added["single_word"] = true;
  // Inside a word the token is not recognized, beside punctuation it is.
  Tokenizer t = load(doc);
  Ids inside = t.encode("hello<|end|>", false);
  CHECK(std::find(inside.begin(), inside.end(), 100) == inside.end());
  CHECK(t.encode("!<|end|>!", false) == Ids{8, 100, 8});

  // A normalized added token matches the normalized text.
  json sp = sentencePieceTokenizer();
  sp["added_tokens"].push_back({{"id", 264},
                                {"content", "hi"},
                                {"single_word", false},
                                {"lstrip", false},
                                {"rstrip", false},
                                {"normalized", true},
                                {"special", false}});
  // Its pattern is the normalized "▁hi", matched after Prepend.
  CHECK(load(sp).encode("hi", false) == Ids{264});
}

TEST_CASE("SentencePiece-style BPE: prefix, byte fallback, unk, template") {
  Tokenizer t = load(sentencePieceTokenizer());
  CHECK(t.encode("hi", false) == Ids{263});
  CHECK(t.encode("hi", true) == Ids{1, 263});
  CHECK(t.specialPrefix() == Ids{1});
  // "é" is not in the vocabulary: its two bytes, <0xC3> <0xA9>.
  CHECK(t.encode("hi é", false) == Ids{263, 259, 3 + 0xC3, 3 + 0xA9});
  CHECK(t.decode(Ids{1, 263, 259, 3 + 0xC3, 3 + 0xA9}, true) == "hi é");
  // A lone invalid byte decodes to U+FFFD.
  CHECK(t.decode(Ids{263, 3 + 0xC3}, false) == "hi\xEF\xBF\xBD");

  // Without byte fallback, unknown characters fuse into one <unk>.
  json doc = sentencePieceTokenizer();
  doc["model"]["byte_fallback"] = false;
  CHECK(load(doc).encode("hi éé", false) == Ids{263, 259, 0});
  doc["model"]["fuse_unk"] = false;
  CHECK(load(doc).encode("hi éé", false) == Ids{263, 259, 0, 0});
}

TEST_CASE("Split behaviours cut as Hugging Face does") {
  // Matches of "-" in "a-b--c".
  std::string text = "a-b--c";
  std::vector<Span> matches{{1, 2}, {3, 4}, {4, 5}};
  auto cut = [&](SplitBehavior b, bool invert) {
    std::vector<Span> parts;
    splitByMatches(text, matches, b, invert, parts);
    std::vector<std::string> out;
    for (Span s : parts)
      out.push_back(text.substr(s.start, s.end - s.start));
    return out;
  };
  using V = std::vector<std::string>;
  CHECK(cut(SplitBehavior::Removed, false) == V{"a", "b", "c"});
  CHECK(cut(SplitBehavior::Isolated, false) == V{"a", "-", "b", "-", "-", "c"});
  CHECK(cut(SplitBehavior::MergedWithPrevious, false) ==
        V{"a-", "b-", "-", "c"});
  CHECK(cut(SplitBehavior::MergedWithNext, false) == V{"a", "-b", "-", "-c"});
  CHECK(cut(SplitBehavior::Contiguous, false) == V{"a", "-", "b", "--", "c"});
  CHECK(cut(SplitBehavior::Removed, true) == V{"-", "-", "-"});
}

TEST_CASE("Metaspace pre-tokenizer and decoder") {
  json doc = sentencePieceTokenizer();
  doc["normalizer"] = nullptr;
  doc["pre_tokenizer"] = {{"type", "Metaspace"},
                          {"replacement", "\xE2\x96\x81"},
                          {"prepend_scheme", "first"},
                          {"split", false}};
  doc["decoder"] = {{"type", "Metaspace"},
                    {"replacement", "\xE2\x96\x81"},
                    {"prepend_scheme", "first"},
                    {"split", false}};
  Tokenizer t = load(doc);
  CHECK(t.encode("hi hi", false) == Ids{263, 263});
  // After an added token the piece does not start the input: no prefix.
  CHECK(t.encode("<s>hi", false) == Ids{1, 260, 261});
  CHECK(t.decode(Ids{263, 263}, false) == "hi hi");
}

TEST_CASE("BOS, EOS and the chat template come from the side files") {
  TokenizerSideFiles side;
  side.tokenizerConfig =
      R"({"bos_token": {"content": "<s>"}, "eos_token": "</s>",
    "chat_template": [{"name": "tool_use", "template": "T"},
                      {"name": "default", "template": "D"}]})";
  Tokenizer t = load(sentencePieceTokenizer(), side);
  CHECK(t.bosId() == 1);
  CHECK(t.eosIds() == Ids{2});
  CHECK(t.chatTemplate() == "D");
  side.generationConfig = R"({"eos_token_id": [2, 0], "bos_token_id": 1})";
  Tokenizer g = load(sentencePieceTokenizer(), side);
  CHECK(g.eosIds() == Ids{2, 0});
  CHECK(g.isEos(0));
  side.generationConfig = R"({"eos_token_id": 2})";
  CHECK(load(sentencePieceTokenizer(), side).eosIds() == Ids{2});
  CHECK_FALSE(load(sentencePieceTokenizer()).bosId().has_value());
}

TEST_CASE("text that is not UTF-8 is refused") {
  Tokenizer t = load(byteLevelTokenizer());
  CHECK_THROWS_WITH(t.encode("he\xFFllo", false),
                    "cannot encode text that is not valid UTF-8 (invalid byte "
                    "at offset 2)");
  CHECK_THROWS_AS(t.encode("\xED\xA0\x80", false), TokenizerError);
}

TEST_CASE("lossy UTF-8 replaces maximal invalid subparts") {
  CHECK(utf8Lossy("a\xF0\x9F\x98") == "a\xEF\xBF\xBD");
  CHECK(utf8Lossy("\x80\x80") == "\xEF\xBF\xBD\xEF\xBF\xBD");
  CHECK(utf8Lossy("\xE2\x82\xAC") == "\xE2\x82\xAC");
}

TEST_CASE("streaming decode holds back split characters") {
  json doc = byteLevelTokenizer();
  // Tokens for the two halves of "é" (0xC3 0xA9): byte-level "Ã" and "©".
  doc["model"]["vocab"]["\xC3\x83"] = 50;
  doc["model"]["vocab"]["\xC2\xA9"] = 51;
  Tokenizer t = load(doc);
  StreamDecoder stream(t);
  CHECK(stream.step(12) == "hello");
  CHECK(stream.step(50).empty());
  CHECK(stream.step(51) == "\xC3\xA9");
  CHECK(stream.step(17) == " world");
  CHECK(stream.step(50).empty());
  CHECK(stream.finish() == "\xEF\xBF\xBD");

  Tokenizer sp = load(sentencePieceTokenizer());
  StreamDecoder sps(sp, true);
  std::string all;
  Ids ids{1, 263, 263, 3 + 0xC3, 3 + 0xA9, 263};
  for (int32_t id : ids)
    all += sps.step(id);
  all += sps.finish();
  CHECK(all == sp.decode(ids, true));
  CHECK(all == "hi hié hi");
}
