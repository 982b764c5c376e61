// Small tokenizer.json documents for the feature and error tests, built with
// nlohmann-json so that each test states only what it is about.
#ifndef STRATA_TESTS_UNIT_TOKENIZER_TINYTOKENIZERS_H
#define STRATA_TESTS_UNIT_TOKENIZER_TINYTOKENIZERS_H

#include <nlohmann/json.hpp>

#include <string>

namespace strata::tok::testing {

using nlohmann::json;

/// A byte-level BPE over the letters of "hello world" (plus "Ġ", the
/// byte-level space): merges h+e, l+l, he+ll, hell+o, Ġ+w, o+r, Ġw+or,
/// Ġwor+l, Ġworl+d; the GPT-2 split; special token <|end|> (id 100).
inline json byteLevelTokenizer() {
  json vocab = json::object();
  int id = 0;
  for (const char *t : {"h", "e", "l", "o", "\xC4\xA0", "w", "r", "d", "!",
                        "he", "ll", "hell", "hello", "\xC4\xA0w", "or",
                        "\xC4\xA0wor", "\xC4\xA0worl", "\xC4\xA0world"})
    vocab[t] = id++;
  json merges =
      json::array({"h e", "l l", "he ll", "hell o", "\xC4\xA0 w", "o r",
                   "\xC4\xA0w or", "\xC4\xA0wor l", "\xC4\xA0worl d"});
  return {
      {"version", "1.0"},
      {"truncation", nullptr},
      {"padding", nullptr},
      {"added_tokens", json::array({{{"id", 100},
                                     {"content", "<|end|>"},
                                     {"single_word", false},
                                     {"lstrip", false},
                                     {"rstrip", false},
                                     {"normalized", false},
                                     {"special", true}}})},
      {"normalizer", nullptr},
      {"pre_tokenizer",
       {{"type", "ByteLevel"},
        {"add_prefix_space", false},
        {"trim_offsets", true},
        {"use_regex", true}}},
      {"post_processor",
       {{"type", "ByteLevel"},
        {"add_prefix_space", true},
        {"trim_offsets", false},
        {"use_regex", true}}},
      {"decoder",
       {{"type", "ByteLevel"},
        {"add_prefix_space", true},
        {"trim_offsets", true},
        {"use_regex", true}}},
      {"model",
       {{"type", "BPE"},
        {"dropout", nullptr},
        {"unk_token", nullptr},
        {"continuing_subword_prefix", nullptr},
        {"end_of_word_suffix", nullptr},
        {"fuse_unk", false},
        {"byte_fallback", false},
        {"ignore_merges", false},
        {"vocab", vocab},
        {"merges", merges}}},
  };
}

/// A SentencePiece-style BPE as Llama-2 writes it: Prepend + Replace
/// normalizer, no pre-tokenizer, byte fallback, <unk> with fuse_unk, BOS by
/// TemplateProcessing and the Replace/ByteFallback/Fuse/Strip decoder.
inline json sentencePieceTokenizer() {
  json vocab = {{"<unk>", 0}, {"<s>", 1}, {"</s>", 2}};
  int id = 3;
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    vocab[name] = id++;
  }
  for (const char *t :
       {"\xE2\x96\x81", "h", "i", "\xE2\x96\x81h", "\xE2\x96\x81hi"})
    vocab[t] = id++;
  json special = [](int i, const char *c) {
    return json{{"id", i},         {"content", c},    {"single_word", false},
                {"lstrip", false}, {"rstrip", false}, {"normalized", false},
                {"special", true}};
  }(0, "<unk>");
  json added = json::array();
  int i = 0;
  for (const char *c : {"<unk>", "<s>", "</s>"}) {
    json t = special;
    t["id"] = i++;
    t["content"] = c;
    added.push_back(t);
  }
  return {
      {"version", "1.0"},
      {"truncation", nullptr},
      {"padding", nullptr},
      {"added_tokens", added},
      {"normalizer",
       {{"type", "Sequence"},
        {"normalizers",
         json::array({{{"type", "Prepend"}, {"prepend", "\xE2\x96\x81"}},
                      {{"type", "Replace"},
                       {"pattern", {{"String", " "}}},
                       {"content", "\xE2\x96\x81"}}})}}},
      {"pre_tokenizer", nullptr},
      {"post_processor",
       {{"type", "TemplateProcessing"},
        {"single",
         json::array({{{"SpecialToken", {{"id", "<s>"}, {"type_id", 0}}}},
                      {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}})},
        {"pair", json::array()},
        {"special_tokens",
         {{"<s>", {{"id", "<s>"}, {"ids", {1}}, {"tokens", {"<s>"}}}}}}}},
      {"decoder",
       {{"type", "Sequence"},
        {"decoders", json::array({{{"type", "Replace"},
                                   {"pattern", {{"String", "\xE2\x96\x81"}}},
                                   {"content", " "}},
                                  {{"type", "ByteFallback"}},
                                  {{"type", "Fuse"}},
                                  {{"type", "Strip"},
                                   {"content", " "},
                                   {"start", 1},
                                   {"stop", 0}}})}}},
      {"model",
       {{"type", "BPE"},
        {"dropout", nullptr},
        {"unk_token", "<unk>"},
        {"continuing_subword_prefix", nullptr},
        {"end_of_word_suffix", nullptr},
        {"fuse_unk", true},
        {"byte_fallback", true},
        {"vocab", vocab},
        {"merges", json::array({json::array({"\xE2\x96\x81", "h"}),
                                json::array({"\xE2\x96\x81h", "i"})})}}},
  };
}

} // namespace strata::tok::testing

#endif // STRATA_TESTS_UNIT_TOKENIZER_TINYTOKENIZERS_H
