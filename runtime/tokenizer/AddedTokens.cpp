#include "runtime/tokenizer/AddedTokens.h"

#include "runtime/tokenizer/Unicode.h"
#include "runtime/tokenizer/Utf8.h"

#include <algorithm>

namespace strata::tok {

namespace {

// The code point that ends `text` (valid UTF-8), and where it starts.
uint32_t lastCodePoint(std::string_view text, size_t &start) {
  start = text.size();
  do {
    --start;
  } while (start > 0 &&
           (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80);
  size_t pos = start;
  return nextCodePoint(text, pos);
}

bool endsWithWordChar(std::string_view text) {
  if (text.empty())
    return false;
  size_t start;
  return isUnicodeWordChar(lastCodePoint(text, start));
}

bool startsWithWordChar(std::string_view text) {
  if (text.empty())
    return false;
  size_t pos = 0;
  return isUnicodeWordChar(nextCodePoint(text, pos));
}

// Where the whitespace that ends `text` begins.
size_t trailingSpaceStart(std::string_view text) {
  size_t end = text.size();
  while (end > 0) {
    size_t start;
    if (!isUnicodeWhitespace(lastCodePoint(text.substr(0, end), start)))
      break;
    end = start;
  }
  return end;
}

// The length of the whitespace that starts `text`.
size_t leadingSpaceLength(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t next = pos;
    if (!isUnicodeWhitespace(nextCodePoint(text, next)))
      break;
    pos = next;
  }
  return pos;
}

} // namespace

void AddedTokenMatcher::build(const std::vector<AddedToken> &tokens,
                              const std::vector<std::string> &patterns) {
  nodes_.assign(1, Node());
  tokens_ = tokens;
  std::fill(std::begin(firstByte_), std::end(firstByte_), false);
  for (size_t t = 0; t < tokens.size(); ++t) {
    const std::string &p = patterns[t];
    if (p.empty())
      continue;
    firstByte_[static_cast<unsigned char>(p[0])] = true;
    int32_t node = 0;
    for (char ch : p) {
      auto c = static_cast<unsigned char>(ch);
      int32_t next = child(node, c);
      if (next < 0) {
        next = static_cast<int32_t>(nodes_.size());
        nodes_.emplace_back();
        auto &kids = nodes_[node].children;
        kids.insert(std::lower_bound(kids.begin(), kids.end(),
                                     std::make_pair(c, int32_t(-1))),
                    {c, next});
      }
      node = next;
    }
    // The first of two tokens with the same text wins.
    if (nodes_[node].token < 0)
      nodes_[node].token = static_cast<int32_t>(t);
  }
}

int32_t AddedTokenMatcher::child(int32_t node, unsigned char c) const {
  const auto &kids = nodes_[node].children;
  auto it = std::lower_bound(kids.begin(), kids.end(),
                             std::make_pair(c, int32_t(-1)));
  return it != kids.end() && it->first == c ? it->second : -1;
}

bool AddedTokenMatcher::longestAt(std::string_view text, size_t pos,
                                  int32_t &token, size_t &length) const {
  token = -1;
  int32_t node = 0;
  for (size_t i = pos; i < text.size(); ++i) {
    node = child(node, static_cast<unsigned char>(text[i]));
    if (node < 0)
      break;
    if (nodes_[node].token >= 0) {
      token = nodes_[node].token;
      length = i + 1 - pos;
    }
  }
  return token >= 0;
}

void AddedTokenMatcher::split(std::string_view text,
                              std::vector<TextSegment> &out) const {
  size_t done = 0; // end of the last segment pushed
  size_t pos = 0;
  while (pos < text.size() && !empty()) {
    int32_t t;
    size_t length;
    if (!firstByte_[static_cast<unsigned char>(text[pos])] ||
        !longestAt(text, pos, t, length)) {
      ++pos;
      continue;
    }
    const AddedToken &token = tokens_[t];
    size_t start = pos, stop = pos + length;
    // A rejected match still consumes its text: the search goes on after
    // it, as a leftmost-longest automaton's iterator does.
    pos = stop;
    if (token.singleWord && (endsWithWordChar(text.substr(0, start)) ||
                             startsWithWordChar(text.substr(stop))))
      continue;
    if (token.lstrip)
      start = std::max(trailingSpaceStart(text.substr(0, start)), done);
    if (token.rstrip)
      stop += leadingSpaceLength(text.substr(stop));
    if (start > done)
      out.push_back({done, start, -1});
    out.push_back({start, stop, token.id});
    done = pos = stop;
  }
  if (done < text.size())
    out.push_back({done, text.size(), -1});
}

} // namespace strata::tok
