// Loading: tokenizer.json into the pipeline stages, then the added tokens,
// then the BOS/EOS ids and chat template of the side files.
#include "runtime/tokenizer/BpeModel.h"
#include "runtime/tokenizer/Decoder.h"
#include "runtime/tokenizer/JsonNode.h"
#include "runtime/tokenizer/Normalizer.h"
#include "runtime/tokenizer/PostProcessor.h"
#include "runtime/tokenizer/PreTokenizer.h"
#include "runtime/tokenizer/Tokenizer.h"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace strata::tok {

struct TokenizerLoader {
  static void loadAddedTokens(Tokenizer &t,
                              const std::optional<JsonNode> &list);
  static void loadTokenizerConfig(Tokenizer &t, const JsonNode &root);
  static void loadGenerationConfig(Tokenizer &t, const JsonNode &root);
  static int32_t specialTokenId(const Tokenizer &t, const JsonNode &node);
};

void TokenizerLoader::loadAddedTokens(Tokenizer &t,
                                      const std::optional<JsonNode> &list) {
  if (list)
    list->expectArray();
  const BpeModel &model = *t.model_;
  for (size_t i = 0; list && i < list->size(); ++i) {
    JsonNode entry = list->at(i);
    entry.expectKeys({"id", "content", "single_word", "lstrip", "rstrip",
                      "normalized", "special"});
    AddedToken token;
    token.id = entry.member("id").asIndex();
    token.content = entry.member("content").asString();
    token.special = entry.boolOr("special", false);
    token.singleWord = entry.boolOr("single_word", false);
    token.lstrip = entry.boolOr("lstrip", false);
    token.rstrip = entry.boolOr("rstrip", false);
    // Hugging Face's default: special tokens match the raw text.
    token.normalized = entry.boolOr("normalized", !token.special);
    if (token.content.empty())
      entry.member("content").fail("an added token cannot be empty");
    int32_t modelId = model.tokenToId(token.content);
    if (modelId >= 0 && modelId != token.id)
      entry.member("id").fail("added token \"" + token.content + "\" has id " +
                              std::to_string(token.id) +
                              " but the vocabulary gives it " +
                              std::to_string(modelId));
    const std::string *modelToken = model.idToToken(token.id);
    if (modelToken && *modelToken != token.content)
      entry.member("id").fail("id " + std::to_string(token.id) +
                              " is also the id of \"" + *modelToken +
                              "\" in the vocabulary");
    if (static_cast<size_t>(token.id) >= t.addedIndexById_.size())
      t.addedIndexById_.resize(static_cast<size_t>(token.id) + 1, -1);
    int32_t &slot = t.addedIndexById_[token.id];
    if (slot >= 0)
      entry.member("id").fail("id " + std::to_string(token.id) +
                              " is also the id of added token \"" +
                              t.added_[slot].content + "\"");
    slot = static_cast<int32_t>(t.added_.size());
    t.idLimit_ = std::max(t.idLimit_, token.id + 1);
    t.added_.push_back(std::move(token));
  }
  // Raw tokens match the text as written; normalized ones match the
  // normalized text, so their own text is normalized the same way.
  std::vector<AddedToken> raw, normalized;
  std::vector<std::string> rawPatterns, normalizedPatterns;
  for (const AddedToken &token : t.added_) {
    if (token.normalized) {
      std::string pattern = token.content;
      t.normalizer_->apply(pattern);
      normalized.push_back(token);
      normalizedPatterns.push_back(std::move(pattern));
    } else {
      raw.push_back(token);
      rawPatterns.push_back(token.content);
    }
  }
  t.rawMatcher_.build(raw, rawPatterns);
  t.normalizedMatcher_.build(normalized, normalizedPatterns);
}

// A token named by tokenizer_config.json: a string, or an object with
// "content" (the serialized AddedToken form).
int32_t TokenizerLoader::specialTokenId(const Tokenizer &t,
                                        const JsonNode &node) {
  const std::string &text =
      node.isObject() ? node.member("content").asString() : node.asString();
  int32_t id = t.tokenToId(text);
  if (id < 0)
    node.fail("token \"" + text + "\" is not in the vocabulary");
  return id;
}

void TokenizerLoader::loadTokenizerConfig(Tokenizer &t, const JsonNode &root) {
  root.expectObject();
  if (auto bos = root.optional("bos_token"))
    t.bosId_ = specialTokenId(t, *bos);
  if (auto eos = root.optional("eos_token"))
    t.eosIds_ = {specialTokenId(t, *eos)};
  if (auto chat = root.optional("chat_template")) {
    if (chat->isString()) {
      t.chatTemplate_ = chat->asString();
    } else {
      // A list of named templates: the one named "default", else the first.
      chat->expectArray();
      for (size_t i = 0; i < chat->size(); ++i) {
        JsonNode entry = chat->at(i);
        std::string name = entry.stringOr("name", "");
        if (i == 0 || name == "default")
          t.chatTemplate_ = entry.member("template").asString();
        if (name == "default")
          break;
      }
    }
  }
}

void TokenizerLoader::loadGenerationConfig(Tokenizer &t, const JsonNode &root) {
  root.expectObject();
  auto checkedId = [&](const JsonNode &node) {
    int32_t id = node.asIndex();
    if (id >= t.idLimit_)
      node.fail("id " + std::to_string(id) + " is beyond the vocabulary (" +
                std::to_string(t.idLimit_) + " ids)");
    return id;
  };
  if (auto bos = root.optional("bos_token_id"); bos && !t.bosId_)
    t.bosId_ = checkedId(*bos);
  if (auto eos = root.optional("eos_token_id")) {
    std::vector<int32_t> ids;
    if (eos->isArray())
      for (size_t i = 0; i < eos->size(); ++i)
        ids.push_back(checkedId(eos->at(i)));
    else
      ids.push_back(checkedId(*eos));
    t.eosIds_ = std::move(ids);
  }
}

Tokenizer Tokenizer::fromJson(std::string_view tokenizerJson,
                              const std::string &name,
                              const TokenizerSideFiles &side) {
  auto doc = parseJsonDocument(tokenizerJson, name);
  JsonNode root = JsonNode::root(*doc);
  root.expectKeys({"version", "truncation", "padding", "added_tokens",
                   "normalizer", "pre_tokenizer", "model", "post_processor",
                   "decoder"});
  // Truncation and padding change the ids encode returns; a tokenizer for
  // inference has neither.
  for (const char *key : {"truncation", "padding"})
    if (auto v = root.optional(key))
      v->fail(std::string(key) + " is not supported; set it to null");

  Tokenizer t;
  t.model_ = BpeModel::fromJson(root.member("model"));
  t.idLimit_ = t.model_->idLimit();
  t.normalizer_ = std::make_unique<Normalizer>(
      Normalizer::fromJson(root.optional("normalizer")));
  t.preTokenizer_ = std::make_unique<PreTokenizer>(
      PreTokenizer::fromJson(root.optional("pre_tokenizer")));
  t.postProcessor_ = std::make_unique<PostProcessor>(
      PostProcessor::fromJson(root.optional("post_processor")));
  t.decoder_ =
      std::make_unique<Decoder>(Decoder::fromJson(root.optional("decoder")));
  TokenizerLoader::loadAddedTokens(t, root.optional("added_tokens"));
  for (const std::vector<int32_t> *ids :
       {&t.postProcessor_->prefix(), &t.postProcessor_->suffix()})
    for (int32_t id : *ids)
      if (id >= t.idLimit_)
        root.member("post_processor")
            .fail("special token id " + std::to_string(id) +
                  " is beyond the vocabulary");

  if (side.tokenizerConfig) {
    auto cfg =
        parseJsonDocument(*side.tokenizerConfig, side.tokenizerConfigName);
    TokenizerLoader::loadTokenizerConfig(t, JsonNode::root(*cfg));
  }
  if (side.generationConfig) {
    auto cfg =
        parseJsonDocument(*side.generationConfig, side.generationConfigName);
    TokenizerLoader::loadGenerationConfig(t, JsonNode::root(*cfg));
  }
  return t;
}

namespace {

// The text of `path`, or nothing when there is no such file.
std::optional<std::string> readIfPresent(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad())
    throw TokenizerError(path + ": cannot read the file");
  return text.str();
}

} // namespace

TokenizerSources readTokenizerSources(const std::string &path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw TokenizerError(path + ": is a folder, not a tokenizer.json");
  const std::string text = readFileBytes(path);
  size_t slash = path.find_last_of('/');
  std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  TokenizerSources sources;
  sources.tokenizerJson = text;
  sources.name = path;
  TokenizerSideFiles &side = sources.side;
  side.tokenizerConfigName = dir + "tokenizer_config.json";
  side.generationConfigName = dir + "generation_config.json";
  side.tokenizerConfig = readIfPresent(side.tokenizerConfigName);
  side.generationConfig = readIfPresent(side.generationConfigName);
  return sources;
}

Tokenizer Tokenizer::fromFile(const std::string &path) {
  const TokenizerSources sources = readTokenizerSources(path);
  return fromJson(sources.tokenizerJson, sources.name, sources.side);
}

} // namespace strata::tok
