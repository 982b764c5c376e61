// The encoder's two shortcuts against the plain way. The ASCII split
// matcher (runtime/tokenizer/AsciiSplit.h) against Oniguruma: the same
// pattern with and without the fast path must cut every text identically,
// on the test corpora and on random text made of the characters where the
// two could disagree. BPE of long words cut where no merge can cross
// against one BPE run over the whole word. Normalization run by run against
// normalization of the whole text.
#include "TinyTokenizers.h"
#include "TokenizerTestData.h"

#include "runtime/tokenizer/BpeModel.h"
#include "runtime/tokenizer/JsonNode.h"
#include "runtime/tokenizer/Regex.h"
#include "runtime/tokenizer/Unicode.h"

#include <catch2/catch.hpp>

#include <random>
#include <sstream>
#include <thread>

using namespace strata::tok;
using namespace strata::tok::testdata;

namespace {

// The Split patterns of the Llama 3 and Qwen tokenizer.json files.
const std::vector<std::string> &knownPatterns() {
  static const std::vector<std::string> patterns{
      R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)",
      R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"};
  return patterns;
}

std::string spansText(const std::vector<Span> &spans) {
  std::ostringstream s;
  for (const Span &m : spans)
    s << "[" << m.start << "," << m.end << ")";
  return s.str();
}

std::string escaped(const std::string &text) {
  std::ostringstream s;
  for (unsigned char c : text) {
    if (c >= 0x20 && c < 0x7f && c != '\\')
      s << c;
    else
      s << "\\x" << std::hex << int(c) << std::dec;
  }
  return s.str();
}

// Checks that both engines cut `text` the same way.
void checkSame(const Regex &fast, const Regex &slow, const std::string &text) {
  std::vector<Span> a, b;
  fast.findAll(text, a);
  slow.findAll(text, b);
  if (spansText(a) != spansText(b)) {
    INFO("text: \"" << escaped(text) << "\"");
    CHECK(spansText(a) == spansText(b));
  }
}

// Random text: mostly ASCII, weighted to the characters the patterns
// single out (apostrophes and the contraction letters in both cases,
// digits, every kind of white space, punctuation, controls), with some
// non-ASCII characters that the fast path must hand back to Oniguruma (a
// letter that folds to s, no-break and other spaces, a combining mark, an
// Arabic-Indic digit, CJK).
std::string randomText(std::mt19937 &rng) {
  static const std::vector<std::string> pieces = [] {
    std::vector<std::string> p;
    for (const char *s :
         {" ",  " ",    " ",   " ",  "  ", "'",    "'",    "'",    "\n", "\n",
          "\r", "\r\n", "\t",  "\v", "\f", "\x1c", "\x1f", "\x7f", "s",  "t",
          "r",  "e",    "v",   "l",  "m",  "d",    "S",    "T",    "R",  "E",
          "V",  "L",    "M",   "D",  "a",  "x",    "Q",    "0",    "1",  "7",
          "9",  "12",   "345", ".",  ",",  "-",    "_",    "(",    ")",  "\"",
          "#",  "/",    "\\",  "!",  "?",  ":",    ";",    "=",    "+",  "*"})
      p.push_back(s);
    p.push_back(std::string(1, '\0')); // not expressible as a C string

    return p;
  }();
  static const std::vector<std::string> rare{
      "\u017f", "\u00a0", "\u0085", "\u3000", "\u2028", "\u0301",
      "\u0663", "\u00e9", "\u4e00", "\u212a", "\ufeff"};
  std::uniform_int_distribution<int> length(0, 24);
  std::uniform_int_distribution<size_t> pick(0, pieces.size() - 1);
  std::uniform_int_distribution<size_t> pickRare(0, rare.size() - 1);
  std::uniform_int_distribution<int> percent(0, 99);
  bool withRare = percent(rng) < 30;
  std::string text;
  for (int n = length(rng); n > 0; --n)
    text +=
        withRare && percent(rng) < 10 ? rare[pickRare(rng)] : pieces[pick(rng)];
  return text;
}

} // namespace

TEST_CASE("ASCII split fast path: the known patterns have one") {
  for (const std::string &pattern : knownPatterns())
    CHECK(Regex(pattern).hasFastPath());
  CHECK_FALSE(Regex(R"(\p{N}+)").hasFastPath());
  CHECK_FALSE(Regex(knownPatterns()[0], false).hasFastPath());
  // The cached tokenizer.json files use exactly these patterns.
  for (const std::string &family : {"llama3", "qwen3"}) {
    std::string path = tokenizerPath(family);
    if (path.empty())
      continue;
    nlohmann::json doc = readJsonFile(path);
    std::string pattern =
        doc["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"];
    INFO(family);
    CHECK(Regex(pattern).hasFastPath());
  }
}

TEST_CASE("ASCII split fast path: same cuts as Oniguruma on the corpora") {
  for (const std::string &pattern : knownPatterns()) {
    Regex fast(pattern), slow(pattern, false);
    for (const auto &[suffix, path] : corpusFiles())
      for (const CorpusCase &c : readCorpus(path)) {
        INFO("corpus" << suffix << ": " << c.name);
        checkSame(fast, slow, c.text);
      }
  }
}

TEST_CASE("ASCII split fast path: same cuts as Oniguruma on random text") {
  for (const std::string &pattern : knownPatterns()) {
    Regex fast(pattern), slow(pattern, false);
    std::mt19937 rng(20261202);
    for (int i = 0; i < 50000; ++i)
      checkSame(fast, slow, randomText(rng));
    // Every ASCII byte alone, and every pair after an apostrophe and after
    // a space.
    for (int a = 0; a < 128; ++a) {
      checkSame(fast, slow, std::string(1, char(a)));
      for (int b = 0; b < 128; ++b)
        for (const char *lead : {"'", " ", "", "\t", "x"})
          checkSame(fast, slow, lead + std::string{char(a), char(b)});
    }
  }
}

namespace {

std::unique_ptr<BpeModel> modelOf(const std::string &tokenizerJson) {
  auto doc = parseJsonDocument(tokenizerJson, "tokenizer.json");
  return BpeModel::fromJson(JsonNode::root(*doc).member("model"));
}

// Long words as SentencePiece-style tokenizers see them (U+2581 for
// spaces): words, runs of U+2581, newlines and other characters outside
// the vocabulary (byte fallback), CJK and emoji.
std::string randomLongWord(std::mt19937 &rng) {
  static const std::vector<std::string> pieces{"\u2581",
                                               "\u2581the",
                                               "\u2581of",
                                               "\u2581hi",
                                               "h",
                                               "i",
                                               "ing",
                                               "e",
                                               "s",
                                               "t",
                                               "x",
                                               "Q",
                                               "0",
                                               "12",
                                               ".",
                                               ",",
                                               "(",
                                               "'",
                                               "\n",
                                               "\t",
                                               "\u2581\u2581",
                                               "\u2581\u2581\u2581\u2581",
                                               "\u00e9",
                                               "\u4e2d",
                                               "\u6587",
                                               "\u3002",
                                               "\U0001F600",
                                               "\u0301",
                                               "<0x0A>",
                                               "<unk>"};
  std::uniform_int_distribution<size_t> pick(0, pieces.size() - 1);
  std::uniform_int_distribution<int> length(100, 800);
  std::string word;
  for (int n = length(rng); n > 0; --n)
    word += pieces[pick(rng)];
  return word;
}

void checkCuts(const BpeModel &model, const std::string &word) {
  std::vector<int32_t> cut, whole;
  model.encodeWord(word, cut);
  model.encodeWordWhole(word, whole);
  INFO("word: \"" << escaped(word) << "\"");
  CHECK(cut == whole);
}

} // namespace

TEST_CASE("long words: cutting where no merge can cross changes no id") {
  std::vector<std::unique_ptr<BpeModel>> models;
  models.push_back(modelOf(testing::sentencePieceTokenizer().dump()));
  std::vector<std::string> words;
  if (std::string path = tokenizerPath("llama2"); !path.empty()) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    models.push_back(modelOf(text.str()));
    // The corpora, as Llama 2's normalizer leaves them, end to end.
    std::string all;
    for (const auto &[suffix, file] : corpusFiles())
      for (const CorpusCase &c : readCorpus(file)) {
        std::string normalized = "\u2581";
        for (char ch : c.text)
          normalized += ch == ' ' ? std::string("\u2581") : std::string(1, ch);
        words.push_back(normalized);
        all += normalized;
      }
    words.push_back(all);
  }
  std::mt19937 rng(20261202);
  for (int i = 0; i < 300; ++i)
    words.push_back(randomLongWord(rng));
  for (const auto &model : models)
    for (const std::string &word : words)
      checkCuts(*model, word);
}

TEST_CASE("normalization of non-ASCII runs equals that of the whole text") {
  std::vector<std::string> texts;
  for (const auto &[suffix, file] : corpusFiles())
    for (const CorpusCase &c : readCorpus(file))
      texts.push_back(c.text);
  // Combining marks after ASCII letters and after other marks (composition
  // and reordering), compatibility characters that become ASCII, Hangul
  // jamo that compose, and characters that decompose.
  const std::vector<std::string> pieces{
      "e",      "a",      "A",      " ",      "\n",     "1",         "=",
      "<",      "\u0301", "\u0308", "\u0323", "\u0338", "\u00e9",    "\u1e0a",
      "\u212b", "\u2460", "\uff21", "\u00bd", "\ufb01", "\u1100",    "\u1161",
      "\u11a8", "\uac00", "\u0f73", "\u3000", "\u4e2d", "\U0001d400"};
  std::mt19937 rng(20261202);
  std::uniform_int_distribution<size_t> pick(0, pieces.size() - 1);
  std::uniform_int_distribution<int> length(0, 16);
  for (int i = 0; i < 20000; ++i) {
    std::string text;
    for (int n = length(rng); n > 0; --n)
      text += pieces[pick(rng)];
    texts.push_back(text);
  }
  for (NormalForm form :
       {NormalForm::NFC, NormalForm::NFD, NormalForm::NFKC, NormalForm::NFKD})
    for (const std::string &text : texts) {
      std::string runs = normalizeUnicode(text, form);
      std::string whole = normalizeUnicodeWhole(text, form);
      if (runs != whole) {
        INFO("form " << int(form) << ", text \"" << escaped(text) << "\"");
        CHECK(runs == whole);
      }
    }
}

TEST_CASE("encoding from several threads at once gives the same ids") {
  // The word cache is shared (behind a lock), the scratch buffers are per
  // thread and the cut tables are built once: four threads encoding the
  // corpora together, from a cold cache, must agree with one thread.
  std::vector<std::string> texts;
  std::string all;
  for (const auto &[suffix, file] : corpusFiles())
    for (const CorpusCase &c : readCorpus(file)) {
      texts.push_back(c.text);
      all += c.text;
    }
  texts.push_back(all);
  for (const std::string &family : {"llama3", "qwen3", "llama2"}) {
    std::string path = tokenizerPath(family);
    if (path.empty())
      continue;
    Tokenizer shared = Tokenizer::fromFile(path);
    std::vector<std::vector<std::vector<int32_t>>> got(4);
    std::vector<std::thread> threads;
    for (size_t t = 0; t < got.size(); ++t)
      threads.emplace_back([&, t] {
        for (size_t i = 0; i < texts.size(); ++i)
          got[t].push_back(
              shared.encode(texts[(i + t * 7) % texts.size()], false));
      });
    for (std::thread &t : threads)
      t.join();
    Tokenizer alone = Tokenizer::fromFile(path);
    for (size_t t = 0; t < got.size(); ++t)
      for (size_t i = 0; i < texts.size(); ++i) {
        INFO(family << ", thread " << t << ", text " << i);
        CHECK(got[t][i] ==
              alone.encode(texts[(i + t * 7) % texts.size()], false));
      }
  }
}
