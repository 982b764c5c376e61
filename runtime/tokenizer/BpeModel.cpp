#include "runtime/tokenizer/BpeModel.h"

#include "runtime/tokenizer/TokenizerError.h"
#include "runtime/tokenizer/Utf8.h"

#include <algorithm>
#include <cstdio>
#include <functional>

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
  // the pair at its position changed since it was pushed. The buffers are
  // per thread, so that a word costs no allocation.
  struct Candidate {
    int32_t rank;
    int32_t pos;
    bool operator>(const Candidate &o) const {
      return rank != o.rank ? rank > o.rank : pos > o.pos;
    }
  };
  thread_local std::vector<int32_t> prev, next;
  thread_local std::vector<uint8_t> alive;
  thread_local std::vector<Candidate> heap;
  prev.resize(n);
  next.resize(n);
  alive.assign(n, 1);
  heap.clear();
  for (size_t i = 0; i < n; ++i) {
    prev[i] = static_cast<int32_t>(i) - 1;
    next[i] = i + 1 < n ? static_cast<int32_t>(i + 1) : -1;
  }
  const std::greater<> later;
  auto consider = [&](int32_t pos) {
    if (pos < 0 || next[pos] < 0)
      return;
    MergeResult m = merges_.find(ids[pos], ids[next[pos]]);
    if (m.rank >= 0) {
      heap.push_back({m.rank, pos});
      std::push_heap(heap.begin(), heap.end(), later);
    }
  };
  for (size_t i = 0; i + 1 < n; ++i)
    consider(static_cast<int32_t>(i));
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), later);
    Candidate c = heap.back();
    heap.pop_back();
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

void BpeModel::encodeCached(std::string_view word,
                            std::vector<int32_t> &out) const {
  bool cacheable = word.size() <= kCacheMaxWordBytes;
  uint64_t hash = 0;
  if (cacheable) {
    hash = hashBytes(word);
    std::lock_guard<std::mutex> lock(cacheMutex_);
    if (cache_.lookup(word, hash, out))
      return;
  }
  thread_local std::vector<int32_t> ids;
  ids.clear();
  encodeWordWhole(word, ids);
  out.insert(out.end(), ids.begin(), ids.end());
  if (cacheable) {
    std::lock_guard<std::mutex> lock(cacheMutex_);
    cache_.insert(word, hash, ids.data(), ids.size());
  }
}

bool BpeModel::cutsAvailable() const {
  std::call_once(cutsOnce_, [this] {
    // Token texts that are not UTF-8 would make "adjacent characters"
    // ambiguous; such a vocabulary is never cut.
    for (int32_t id = 0; id < vocab_.idLimit(); ++id)
      if (const std::string *t = vocab_.token(id);
          t && findInvalidUtf8(*t) != std::string_view::npos)
        return;
    auto forEachAdjacent = [this](auto &&onPair) {
      for (int32_t id = 0; id < vocab_.idLimit(); ++id) {
        const std::string *t = vocab_.token(id);
        if (!t)
          continue;
        int32_t before = -1;
        for (size_t pos = 0; pos < t->size();) {
          size_t n = utf8SequenceLength(static_cast<unsigned char>((*t)[pos]));
          int32_t ch = vocab_.find(std::string_view(*t).substr(pos, n));
          if (before >= 0 && ch >= 0)
            onPair(before, ch);
          before = ch;
          pos += n;
        }
      }
    };
    // The characters that occur in most pairs get a dense code and their
    // pairs a bit matrix; the rest go to the hash table.
    std::vector<uint32_t> uses(static_cast<size_t>(vocab_.idLimit()), 0);
    forEachAdjacent([&](int32_t a, int32_t b) {
      ++uses[a];
      ++uses[b];
    });
    std::vector<int32_t> order;
    for (int32_t id = 0; id < vocab_.idLimit(); ++id)
      if (uses[id] > 0)
        order.push_back(id);
    std::stable_sort(order.begin(), order.end(),
                     [&](int32_t a, int32_t b) { return uses[a] > uses[b]; });
    denseChar_.assign(static_cast<size_t>(vocab_.idLimit()), -1);
    for (size_t i = 0; i < order.size() && i < kDenseChars; ++i)
      denseChar_[order[i]] = static_cast<int16_t>(i);
    denseAdjacent_.assign(kDenseChars * kDenseChars / 64, 0);
    forEachAdjacent([&](int32_t a, int32_t b) {
      if (denseChar_[a] >= 0 && denseChar_[b] >= 0) {
        size_t bit = static_cast<size_t>(denseChar_[a]) * kDenseChars +
                     static_cast<size_t>(denseChar_[b]);
        denseAdjacent_[bit / 64] |= uint64_t(1) << (bit % 64);
      } else {
        adjacentChars_.insert(a, b, {0, 0});
      }
    });
    bmpCharIds_.assign(0x10000, -1);
    for (uint32_t cp = 0; cp < 0x10000; ++cp) {
      if (cp >= 0xD800 && cp < 0xE000)
        continue; // surrogates are not characters
      std::string utf8;
      appendUtf8(utf8, cp);
      bmpCharIds_[cp] = vocab_.find(utf8);
    }
    cutsUsable_ = true;
  });
  return cutsUsable_;
}

bool BpeModel::adjacentInSomeToken(int32_t a, int32_t b) const {
  int16_t da = denseChar_[a], db = denseChar_[b];
  if (da >= 0 && db >= 0) {
    size_t bit =
        static_cast<size_t>(da) * kDenseChars + static_cast<size_t>(db);
    return (denseAdjacent_[bit / 64] >> (bit % 64)) & 1;
  }
  return adjacentChars_.find(a, b).rank >= 0;
}

int32_t BpeModel::charId(std::string_view word, size_t pos, size_t n) const {
  // Sequences of up to three bytes that are well-formed UTF-8 (words are,
  // but a byte that is not must not alias a character) use the table.
  auto b = [&](size_t i) {
    return static_cast<uint32_t>(static_cast<unsigned char>(word[pos + i]));
  };
  auto tail = [&](size_t i) { return (b(i) & 0xC0) == 0x80; };
  uint32_t cp = 0x110000;
  if (n == 1 && b(0) < 0x80)
    cp = b(0);
  else if (n == 2 && tail(1))
    cp = (b(0) & 0x1F) << 6 | (b(1) & 0x3F);
  else if (n == 3 && tail(1) && tail(2))
    cp = (b(0) & 0x0F) << 12 | (b(1) & 0x3F) << 6 | (b(2) & 0x3F);
  bool wellFormed = n == 1 || (n == 2 && cp >= 0x80) ||
                    (n == 3 && cp >= 0x800 && (cp < 0xD800 || cp >= 0xE000));
  if (wellFormed && cp < bmpCharIds_.size())
    return bmpCharIds_[cp];
  return vocab_.find(word.substr(pos, n));
}

void BpeModel::encodeLongWord(std::string_view word,
                              std::vector<int32_t> &out) const {
  // BPE never merges across a point between characters X and Y when both
  // are tokens themselves (so each is its own first symbol) and no token
  // holds XY: every merged symbol's text is the concatenation of its
  // parts, so a merge across would have produced such a token. The two
  // sides then merge independently, and each piece gives the ids it gives
  // alone. SentencePiece-style tokenizers without a pre-tokenizer hand BPE
  // whole texts; cut at word starts, the pieces hit the cache.
  size_t start = 0;
  int32_t before = -1;
  bool single = false; // the piece so far is one character, a token
  auto flush = [&](size_t end) {
    // A lone character that is a token is its own id; CJK text cuts
    // between most characters, and the cache would cost more than that.
    if (single)
      out.push_back(before);
    else
      encodeCached(word.substr(start, end - start), out);
  };
  for (size_t pos = 0; pos < word.size();) {
    size_t n = utf8SequenceLength(static_cast<unsigned char>(word[pos]));
    n = std::min(n, word.size() - pos);
    int32_t ch = charId(word, pos, n);
    if (before >= 0 && ch >= 0 && !adjacentInSomeToken(before, ch)) {
      flush(pos);
      start = pos;
    }
    single = start == pos && ch >= 0;
    before = ch;
    pos += n;
  }
  flush(word.size());
}

void BpeModel::encodeWord(std::string_view word,
                          std::vector<int32_t> &out) const {
  if (word.empty())
    return;
  // With ignore_merges the whole word decides first, so it is never cut.
  if (word.size() > kCacheMaxWordBytes && !ignoreMerges_ && cutsAvailable()) {
    encodeLongWord(word, out);
    return;
  }
  encodeCached(word, out);
}

void BpeModel::encodeWordWhole(std::string_view word,
                               std::vector<int32_t> &out) const {
  const int32_t whole = ignoreMerges_ ? vocab_.find(word) : -1;
  if (whole >= 0) {
    out.push_back(whole);
    return;
  }
  // The merges work on a vector of this word's symbols alone; one per
  // thread, so that a word allocates nothing.
  thread_local std::vector<int32_t> symbols;
  symbols.clear();
  initialSymbols(word, symbols);
  mergeSymbols(symbols);
  out.insert(out.end(), symbols.begin(), symbols.end());
}

} // namespace strata::tok
