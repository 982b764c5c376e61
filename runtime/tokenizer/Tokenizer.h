// A text tokenizer loaded from a Hugging Face tokenizer.json, with the BOS /
// EOS ids and chat template of the tokenizer_config.json and
// generation_config.json beside it. It reproduces Hugging Face tokenizers'
// ids for the BPE tokenizers of the Llama-2/3, Mistral and Qwen2/3 families
// (docs/tokenizers.md lists the supported components); anything it does not
// support is a load error naming the JSON path, never a different encoding.
//
// Every failure throws TokenizerError. A loaded Tokenizer is immutable and
// may be shared between threads (encode, decode and the lookups are const
// and thread-safe).
#ifndef STRATA_RUNTIME_TOKENIZER_TOKENIZER_H
#define STRATA_RUNTIME_TOKENIZER_TOKENIZER_H

#include "runtime/tokenizer/AddedTokens.h"
#include "runtime/tokenizer/TokenizerError.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace strata::tok {

class BpeModel;
class Normalizer;
class PreTokenizer;
class PostProcessor;
class Decoder;

/// The text of the two optional files next to tokenizer.json.
struct TokenizerSideFiles {
  std::optional<std::string> tokenizerConfig;  // tokenizer_config.json
  std::optional<std::string> generationConfig; // generation_config.json
  std::string tokenizerConfigName = "tokenizer_config.json";
  std::string generationConfigName = "generation_config.json";
};

/// A tokenizer.json's text and that of the side files beside it, as
/// Tokenizer::fromFile reads them (a plan embeds them).
struct TokenizerSources {
  std::string tokenizerJson;
  std::string name; ///< the tokenizer.json's path, for messages
  TokenizerSideFiles side;
};
/// Throws TokenizerError when `path` cannot be read.
TokenizerSources readTokenizerSources(const std::string &path);

class Tokenizer {
public:
  /// Loads `path` (a tokenizer.json) and, when present in the same folder,
  /// tokenizer_config.json and generation_config.json.
  static Tokenizer fromFile(const std::string &path);
  /// Loads from text; `name` is the file name used in messages.
  static Tokenizer fromJson(std::string_view tokenizerJson,
                            const std::string &name = "tokenizer.json",
                            const TokenizerSideFiles &side = {});

  Tokenizer(Tokenizer &&) noexcept;
  Tokenizer &operator=(Tokenizer &&) noexcept;
  ~Tokenizer();

  /// The ids of `text` (UTF-8; invalid UTF-8 throws). Added and special
  /// tokens written in the text are always recognized; `addSpecial` adds
  /// what the post-processor puts around the text (e.g. BOS).
  std::vector<int32_t> encode(std::string_view text, bool addSpecial) const;

  /// The text of `ids`. Unknown ids are skipped; `skipSpecial` skips the
  /// special tokens too. Bytes that do not form UTF-8 become U+FFFD.
  std::string decode(const int32_t *ids, size_t count, bool skipSpecial) const;
  std::string decode(const std::vector<int32_t> &ids, bool skipSpecial) const {
    return decode(ids.data(), ids.size(), skipSpecial);
  }

  /// The token string of `id` (added tokens first, then the model's), or
  /// nothing.
  std::optional<std::string_view> idToToken(int32_t id) const;
  /// The id of a token string, or -1.
  int32_t tokenToId(std::string_view token) const;
  /// One more than the largest id: an embedding table needs at least this
  /// many rows.
  int32_t vocabSize() const { return idLimit_; }
  bool isSpecial(int32_t id) const;

  /// The beginning-of-text id: tokenizer_config.json's bos_token, else
  /// generation_config.json's bos_token_id.
  std::optional<int32_t> bosId() const { return bosId_; }
  /// The ids that end generation: generation_config.json's eos_token_id
  /// (one or a list), else tokenizer_config.json's eos_token.
  const std::vector<int32_t> &eosIds() const { return eosIds_; }
  bool isEos(int32_t id) const;
  /// The ids encode(text, true) adds before and after the text's ids.
  const std::vector<int32_t> &specialPrefix() const;
  const std::vector<int32_t> &specialSuffix() const;
  /// tokenizer_config.json's chat_template (the "default" one when it
  /// holds several); empty when there is none.
  const std::string &chatTemplate() const { return chatTemplate_; }

private:
  Tokenizer();
  friend class StreamDecoder;
  friend struct TokenizerLoader;
  /// Appends the ids of one piece of text between added tokens.
  void encodePiece(std::string piece, bool atStart,
                   std::vector<int32_t> &out) const;
  /// The token strings of `ids` as decode passes them to the decoder.
  void tokenStrings(const int32_t *ids, size_t count, bool skipSpecial,
                    std::vector<std::string> &out) const;
  std::string decodeStrings(std::vector<std::string> tokens) const;

  std::unique_ptr<BpeModel> model_;
  std::unique_ptr<Normalizer> normalizer_;
  std::unique_ptr<PreTokenizer> preTokenizer_;
  std::unique_ptr<PostProcessor> postProcessor_;
  std::unique_ptr<Decoder> decoder_;
  std::vector<AddedToken> added_;       // in file order
  std::vector<int32_t> addedIndexById_; // id -> index in added_, or -1
  AddedTokenMatcher rawMatcher_;        // "normalized": false
  AddedTokenMatcher normalizedMatcher_; // "normalized": true
  int32_t idLimit_ = 0;
  std::optional<int32_t> bosId_;
  std::vector<int32_t> eosIds_;
  std::string chatTemplate_;
};

} // namespace strata::tok

#endif // STRATA_RUNTIME_TOKENIZER_TOKENIZER_H
