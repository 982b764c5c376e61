// The BPE model of a tokenizer.json ("model": {"type": "BPE", ...}): a
// vocabulary, merges applied by rank, ignore_merges (a word that is itself
// a token is not split), byte fallback (<0xNN> tokens for characters outside
// the vocabulary), and the unknown token with optional fusing. Words seen
// before come from a cache.
#ifndef STRATA_RUNTIME_TOKENIZER_BPEMODEL_H
#define STRATA_RUNTIME_TOKENIZER_BPEMODEL_H

#include "runtime/tokenizer/JsonNode.h"
#include "runtime/tokenizer/TokenTables.h"
#include "runtime/tokenizer/WordCache.h"

#include <array>
#include <mutex>
#include <string>
#include <vector>

namespace strata::tok {

class BpeModel {
public:
  /// From the "model" member; fails on anything but a well-formed BPE.
  static std::unique_ptr<BpeModel> fromJson(const JsonNode &node);

  /// Appends the ids of one pre-tokenized word.
  void encodeWord(std::string_view word, std::vector<int32_t> &out) const;
  /// The same ids from one BPE run over the whole word: no cache, no cuts
  /// (the reference that the cuts are tested against).
  void encodeWordWhole(std::string_view word, std::vector<int32_t> &out) const;

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
  /// A word through the cache: ignore_merges, else BPE.
  void encodeCached(std::string_view word, std::vector<int32_t> &out) const;
  /// A word too long for the cache, cut into pieces that encode alone.
  void encodeLongWord(std::string_view word, std::vector<int32_t> &out) const;
  /// Fills adjacentChars_ (once); false when cutting is not safe.
  bool cutsAvailable() const;

  TokenTable vocab_;
  MergeTable merges_;
  bool ignoreMerges_ = false;
  bool byteFallback_ = false;
  bool fuseUnk_ = false;
  int32_t unkId_ = -1;
  /// Ids of <0x00>..<0xFF>, -1 where absent.
  std::array<int32_t, 256> byteIds_{};

  // Words seen before, up to a bound in words and bytes (a few MB).
  static constexpr size_t kCacheMaxWords = 1 << 16;
  static constexpr size_t kCacheMaxBytes = 16 << 20;
  static constexpr size_t kCacheMaxWordBytes = 256;
  mutable std::mutex cacheMutex_;
  mutable WordCache cache_{kCacheMaxWords, kCacheMaxBytes};

  // Pairs of single-character tokens (a, b) such that some token's text has
  // a's character right before b's: a merge can join a and b only if its
  // result holds both. Built on the first long word.
  mutable std::once_flag cutsOnce_;
  mutable bool cutsUsable_ = false;
  mutable MergeTable adjacentChars_;
  static constexpr size_t kDenseChars = 256;
  mutable std::vector<int16_t> denseChar_;      // by id: dense code or -1
  mutable std::vector<uint64_t> denseAdjacent_; // bit matrix of dense pairs
  bool adjacentInSomeToken(int32_t a, int32_t b) const;
  /// Id of each code point below U+10000 that is a token alone, else -1:
  /// the cutting walk looks up every character.
  mutable std::vector<int32_t> bmpCharIds_;
  int32_t charId(std::string_view word, size_t pos, size_t n) const;
};

} // namespace strata::tok

#endif // STRATA_RUNTIME_TOKENIZER_BPEMODEL_H
