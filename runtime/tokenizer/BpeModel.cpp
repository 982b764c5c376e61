#include "runtime/tokenizer/BpeModel.h"

#include "runtime/tokenizer/TokenizerError.h"
#include "runtime/tokenizer/Utf8.h"

#include <cstdio>
#include <queue>

namespace strata::tok {

std::unique_ptr<BpeModel> BpeModel::fromJson(const JsonNode &node) {
  node.expectObject();
  std::string type = node.optional("type") ? node.typeName() : "BPE";
  if (type != "BPE")
    node.member("type").fail("unsupported model \"" + type +
                             "\" (supported: BPE)");
  node.expectKeys({"type", "dropout", "unk_token", "continuing_subword_prefix",
                   "end_of_word_suffix", "fuse_unk", "byte_fallback",
                   "ignore_merges", "vocab", "merges"});
  // Dropout makes encoding random; inference wants it off.
  if (auto d = node.optional("dropout")) {
    if (!d->isNumber())
      d->fail(std::string("expected a number, got ") + d->value().kindName());
    if (std::strtod(d->value().text.c_str(), nullptr) != 0.0)
      d->fail("BPE dropout is not supported (encoding must be deterministic)");
  }
  for (const char *key : {"continuing_subword_prefix", "end_of_word_suffix"})
    if (auto v = node.optional(key); v && !v->asString().empty())
      v->fail(std::string(key) + " is not supported (only byte-level and "
                                 "SentencePiece-style BPE are)");

  std::unique_ptr<BpeModel> model(new BpeModel());
  model->ignoreMerges_ = node.boolOr("ignore_merges", false);
  model->byteFallback_ = node.boolOr("byte_fallback", false);
  model->fuseUnk_ = node.boolOr("fuse_unk", false);
  model->loadVocab(node.member("vocab"));
  model->loadMerges(node.member("merges"));
  if (auto unk = node.optional("unk_token")) {
    model->unkId_ = model->vocab_.find(unk->asString());
    if (model->unkId_ < 0)
      unk->fail("unk_token \"" + unk->asString() +
                "\" is not in the vocabulary");
  }
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    model->byteIds_[b] = model->vocab_.find(name);
  }
  return model;
}

void BpeModel::loadVocab(const JsonNode &vocab) {
  vocab.expectObject();
  const auto &members = vocab.value().object;
  int32_t limit = 0;
  for (const JsonMember &m : members) {
    uint64_t id = 0;
    if (m.value.asUint64(id) && id < 0x7fffffffu)
      limit = std::max(limit, static_cast<int32_t>(id) + 1);
  }
  vocab_.reserve(members.size(), limit);
  for (const JsonMember &m : members) {
    JsonNode entry(m.value, vocab.path() + "/" + jsonPointerToken(m.key),
                   vocab.document());
    int32_t id = entry.asIndex();
    if (const std::string *other = vocab_.insert(m.key, id))
      entry.fail("id " + std::to_string(id) + " is also the id of \"" + *other +
                 "\"");
  }
}

void BpeModel::loadMerges(const JsonNode &merges) {
  merges.expectArray();
  merges_.reserve(merges.size());
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    JsonNode merge = merges.at(rank);
    std::string left, right;
    if (merge.isString()) {
      // The older form: "left right", one space between the two.
      const std::string &text = merge.asString();
      size_t space = text.find(' ');
      if (space == std::string::npos ||
          text.find(' ', space + 1) != std::string::npos)
        merge.fail("expected two tokens separated by one space, got \"" + text +
                   "\"");
      left = text.substr(0, space);
      right = text.substr(space + 1);
    } else if (merge.isArray() && merge.size() == 2) {
      left = merge.at(0).asString();
      right = merge.at(1).asString();
    } else {
      merge.fail("expected \"left right\" or [\"left\", \"right\"]");
    }
    int32_t l = vocab_.find(left), r = vocab_.find(right);
    int32_t merged = vocab_.find(left + right);
    if (l < 0 || r < 0 || merged < 0)
      merge.fail("token \"" +
                 (l < 0   ? left
                  : r < 0 ? right
                          : left + right) +
                 "\" of this merge is not in the vocabulary");
    // A pair listed twice keeps its last rank, as Hugging Face does.
    merges_.insert(l, r, {static_cast<int32_t>(rank), merged});
  }
}

void BpeModel::initialSymbols(std::string_view word,
                              std::vector<int32_t> &ids) const {
  // A run of unknown characters: one unknown token (fuse_unk) or one each.
  bool pendingUnk = false;
  size_t pos = 0;
  while (pos < word.size()) {
    size_t n = utf8SequenceLength(static_cast<unsigned char>(word[pos]));
    n = std::min(n, word.size() - pos);
    std::string_view ch = word.substr(pos, n);
    pos += n;
    int32_t id = vocab_.find(ch);
    if (id >= 0) {
      if (pendingUnk)
        ids.push_back(unkId_);
      pendingUnk = false;
      ids.push_back(id);
      continue;
    }
    if (byteFallback_) {
      bool all = true;
      for (char c : ch)
        all = all && byteIds_[static_cast<unsigned char>(c)] >= 0;
      if (all) {
        if (pendingUnk)
          ids.push_back(unkId_);
        pendingUnk = false;
        for (char c : ch)
          ids.push_back(byteIds_[static_cast<unsigned char>(c)]);
        continue;
      }
    }
    // Without an unknown token the character is dropped, as Hugging Face
    // does.
    if (unkId_ < 0)
      continue;
    if (pendingUnk && !fuseUnk_)
      ids.push_back(unkId_);
    pendingUnk = true;
  }
  if (pendingUnk)
    ids.push_back(unkId_);
}

void BpeModel::mergeSymbols(std::vector<int32_t> &ids) const {
  size_t n = ids.size();
  if (n < 2)
    return;
  // A doubly linked list of symbols and a min-heap of candidate merges
  // (rank, then position: leftmost first). A heap entry is stale when
  // the pair at its position changed since it was pushed.
  std::vector<int32_t> prev(n), next(n);
  std::vector<uint8_t> alive(n, 1);
  for (size_t i = 0; i < n; ++i) {
    prev[i] = static_cast<int32_t>(i) - 1;
    next[i] = i + 1 < n ? static_cast<int32_t>(i + 1) : -1;
  }
  struct Candidate {
    int32_t rank;
    int32_t pos;
    bool operator>(const Candidate &o) const {
      return rank != o.rank ? rank > o.rank : pos > o.pos;
    }
  };
  std::vector<Candidate> storage;
  storage.reserve(n);
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> heap(
      std::greater<>(), std::move(storage));
  auto consider = [&](int32_t pos) {
    if (pos < 0 || next[pos] < 0)
      return;
    MergeResult m = merges_.find(ids[pos], ids[next[pos]]);
    if (m.rank >= 0)
      heap.push({m.rank, pos});
  };
  for (size_t i = 0; i + 1 < n; ++i)
    consider(static_cast<int32_t>(i));
  while (!heap.empty()) {
    Candidate c = heap.top();
    heap.pop();
    if (!alive[c.pos] || next[c.pos] < 0)
      continue;
    int32_t right = next[c.pos];
    MergeResult m = merges_.find(ids[c.pos], ids[right]);
    if (m.rank != c.rank)
      continue;
    ids[c.pos] = m.id;
    alive[right] = 0;
    next[c.pos] = next[right];
    if (next[right] >= 0)
      prev[next[right]] = c.pos;
    consider(prev[c.pos]);
    consider(c.pos);
  }
  size_t out = 0;
  for (size_t i = 0; i < n; ++i)
    if (alive[i])
      ids[out++] = ids[i];
  ids.resize(out);
}

void BpeModel::encodeWord(const std::string &word,
                          std::vector<int32_t> &out) const {
  if (word.empty())
    return;
  if (ignoreMerges_) {
    int32_t id = vocab_.find(word);
    if (id >= 0) {
      out.push_back(id);
      return;
    }
  }
  bool cacheable = word.size() <= kCacheMaxWordBytes;
  if (cacheable) {
    std::lock_guard<std::mutex> lock(cacheMutex_);
    auto it = cache_.find(word);
    if (it != cache_.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  std::vector<int32_t> ids;
  ids.reserve(word.size());
  initialSymbols(word, ids);
  mergeSymbols(ids);
  out.insert(out.end(), ids.begin(), ids.end());
  if (cacheable) {
    std::lock_guard<std::mutex> lock(cacheMutex_);
    if (cache_.size() < kCacheCapacity)
      cache_.emplace(word, std::move(ids));
  }
}

} // namespace strata::tok
