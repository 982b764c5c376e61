// The BPE model of a tokenizer.json ("model": {"type": "BPE", ...}): a
// vocabulary, merges applied by rank, ignore_merges (a word that is itself
// a token is not split), byte fallback (<0xNN> tokens for characters outside
// the vocabulary), and the unknown token with optional fusing. Words seen
// before come from a cache.
#ifndef STRATA_RUNTIME_TOKENIZER_BPEMODEL_H
#define STRATA_RUNTIME_TOKENIZER_BPEMODEL_H

#include "runtime/tokenizer/JsonNode.h"
#include "runtime/tokenizer/TokenTables.h"

#include <array>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace strata::tok {

class BpeModel {
public:
  /// From the "model" member; fails on anything but a well-formed BPE.
  static std::unique_ptr<BpeModel> fromJson(const JsonNode &node);

  /// Appends the ids of one pre-tokenized word.
  void encodeWord(const std::string &word, std::vector<int32_t> &out) const;

  int32_t tokenToId(std::string_view token) const { return vocab_.find(token); }
  const std::string *idToToken(int32_t id) const { return vocab_.token(id); }
  size_t vocabSize() const { return vocab_.size(); }
  int32_t idLimit() const { return vocab_.idLimit(); }

private:
  BpeModel() = default;
  void loadVocab(const JsonNode &vocab);
  void loadMerges(const JsonNode &merges);
  /// The ids of `word` before any merge: one per character, or byte
  /// fallback / unknown tokens for characters outside the vocabulary.
  void initialSymbols(std::string_view word, std::vector<int32_t> &ids) const;
  void mergeSymbols(std::vector<int32_t> &ids) const;

  TokenTable vocab_;
  MergeTable merges_;
  bool ignoreMerges_ = false;
  bool byteFallback_ = false;
  bool fuseUnk_ = false;
  int32_t unkId_ = -1;
  /// Ids of <0x00>..<0xFF>, -1 where absent.
  std::array<int32_t, 256> byteIds_{};

  // Words seen before, up to a bound (as Hugging Face's BPE cache: once
  // full, new words are simply not added).
  static constexpr size_t kCacheCapacity = 10000;
  static constexpr size_t kCacheMaxWordBytes = 256;
  mutable std::mutex cacheMutex_;
  mutable std::unordered_map<std::string, std::vector<int32_t>> cache_;
};

} // namespace strata::tok

#endif // STRATA_RUNTIME_TOKENIZER_BPEMODEL_H
