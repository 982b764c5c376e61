// Encoding and decoding, in Hugging Face tokenizers' order: added tokens
// are cut out of the raw text, each remaining piece is normalized, searched
// for normalized added tokens, pre-tokenized into words, and each word is
// encoded by the model; the post-processor adds the special tokens.
#include "runtime/tokenizer/Tokenizer.h"

#include "runtime/tokenizer/BpeModel.h"
#include "runtime/tokenizer/Decoder.h"
#include "runtime/tokenizer/Normalizer.h"
#include "runtime/tokenizer/PostProcessor.h"
#include "runtime/tokenizer/PreTokenizer.h"
#include "runtime/tokenizer/Utf8.h"

namespace strata::tok {

Tokenizer::Tokenizer() = default;
Tokenizer::Tokenizer(Tokenizer &&) noexcept = default;
Tokenizer &Tokenizer::operator=(Tokenizer &&) noexcept = default;
Tokenizer::~Tokenizer() = default;

void Tokenizer::encodePiece(std::string piece, bool atStart,
                            std::vector<int32_t> &out) const {
  normalizer_->apply(piece);
  if (piece.empty())
    return;
  std::vector<TextSegment> segments;
  if (normalizedMatcher_.empty())
    segments.push_back({0, piece.size(), -1});
  else
    normalizedMatcher_.split(piece, segments);
  auto encodeWord = [&](std::string_view word) {
    model_->encodeWord(word, out);
  };
  for (const TextSegment &seg : segments) {
    if (seg.id >= 0) {
      out.push_back(seg.id);
      continue;
    }
    preTokenizer_->split({piece.substr(seg.start, seg.end - seg.start),
                          atStart && seg.start == 0},
                         encodeWord);
  }
}

std::vector<int32_t> Tokenizer::encode(std::string_view text,
                                       bool addSpecial) const {
  size_t bad = findInvalidUtf8(text);
  if (bad != std::string_view::npos)
    throw TokenizerError("cannot encode text that is not valid UTF-8 "
                         "(invalid byte at offset " +
                         std::to_string(bad) + ")");
  std::vector<int32_t> out;
  out.reserve(text.size() / 3 + 4);
  if (addSpecial)
    out = postProcessor_->prefix();
  std::vector<TextSegment> segments;
  rawMatcher_.split(text, segments);
  for (const TextSegment &seg : segments) {
    if (seg.id >= 0)
      out.push_back(seg.id);
    else
      encodePiece(std::string(text.substr(seg.start, seg.end - seg.start)),
                  seg.start == 0, out);
  }
  if (addSpecial)
    out.insert(out.end(), postProcessor_->suffix().begin(),
               postProcessor_->suffix().end());
  return out;
}

void Tokenizer::tokenStrings(const int32_t *ids, size_t count, bool skipSpecial,
                             std::vector<std::string> &out) const {
  out.reserve(out.size() + count);
  for (size_t i = 0; i < count; ++i) {
    int32_t id = ids[i];
    if (id >= 0 && static_cast<size_t>(id) < addedIndexById_.size() &&
        addedIndexById_[id] >= 0) {
      const AddedToken &token = added_[addedIndexById_[id]];
      if (!(skipSpecial && token.special))
        out.push_back(token.content);
    } else if (const std::string *token = model_->idToToken(id)) {
      out.push_back(*token);
    }
  }
}

std::string Tokenizer::decodeStrings(std::vector<std::string> tokens) const {
  return decoder_->decode(std::move(tokens));
}

std::string Tokenizer::decode(const int32_t *ids, size_t count,
                              bool skipSpecial) const {
  std::vector<std::string> tokens;
  tokenStrings(ids, count, skipSpecial, tokens);
  return decodeStrings(std::move(tokens));
}

std::optional<std::string_view> Tokenizer::idToToken(int32_t id) const {
  if (id >= 0 && static_cast<size_t>(id) < addedIndexById_.size() &&
      addedIndexById_[id] >= 0)
    return std::string_view(added_[addedIndexById_[id]].content);
  if (const std::string *token = model_->idToToken(id))
    return std::string_view(*token);
  return std::nullopt;
}

int32_t Tokenizer::tokenToId(std::string_view token) const {
  for (const AddedToken &a : added_)
    if (a.content == token)
      return a.id;
  return model_->tokenToId(token);
}

bool Tokenizer::isSpecial(int32_t id) const {
  return id >= 0 && static_cast<size_t>(id) < addedIndexById_.size() &&
         addedIndexById_[id] >= 0 && added_[addedIndexById_[id]].special;
}

bool Tokenizer::isEos(int32_t id) const {
  for (int32_t e : eosIds_)
    if (e == id)
      return true;
  return false;
}

const std::vector<int32_t> &Tokenizer::specialPrefix() const {
  return postProcessor_->prefix();
}

const std::vector<int32_t> &Tokenizer::specialSuffix() const {
  return postProcessor_->suffix();
}

} // namespace strata::tok
