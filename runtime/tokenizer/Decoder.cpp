#include "runtime/tokenizer/Decoder.h"

#include "runtime/tokenizer/ByteLevel.h"
#include "runtime/tokenizer/Utf8.h"

namespace strata::tok {

namespace {

std::string joined(const std::vector<std::string> &tokens,
                   std::string_view separator) {
  std::string out;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (i)
      out += separator;
    out += tokens[i];
  }
  return out;
}

// "<0x4F>" -> 0x4F; -1 for anything else.
int byteToken(const std::string &t) {
  if (t.size() != 6 || t.compare(0, 3, "<0x") != 0 || t[5] != '>')
    return -1;
  auto hex = [](char c) {
    if (c >= '0' && c <= '9')
      return c - '0';
    if (c >= 'A' && c <= 'F')
      return c - 'A' + 10;
    if (c >= 'a' && c <= 'f')
      return c - 'a' + 10;
    return -1;
  };
  int hi = hex(t[3]), lo = hex(t[4]);
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

void byteFallback(std::vector<std::string> &tokens) {
  std::vector<std::string> out;
  out.reserve(tokens.size());
  std::string bytes;
  size_t count = 0;
  auto flush = [&] {
    if (!count)
      return;
    // Bytes that do not form valid UTF-8 become one U+FFFD each.
    if (findInvalidUtf8(bytes) == std::string::npos)
      out.push_back(bytes);
    else
      for (size_t i = 0; i < count; ++i)
        out.push_back(kReplacementChar);
    bytes.clear();
    count = 0;
  };
  for (std::string &t : tokens) {
    int b = byteToken(t);
    if (b >= 0) {
      bytes += static_cast<char>(b);
      ++count;
      continue;
    }
    flush();
    out.push_back(std::move(t));
  }
  flush();
  tokens.swap(out);
}

// Removes up to `start` leading and `stop` trailing copies of the
// character `c` from each token.
void strip(std::vector<std::string> &tokens, const std::string &c, size_t start,
           size_t stop) {
  for (std::string &t : tokens) {
    size_t from = 0;
    for (size_t i = 0; i < start && from + c.size() <= t.size() &&
                       t.compare(from, c.size(), c) == 0;
         ++i)
      from += c.size();
    size_t to = t.size();
    for (size_t i = 0; i < stop && to >= from + c.size() &&
                       t.compare(to - c.size(), c.size(), c) == 0;
         ++i)
      to -= c.size();
    t = t.substr(from, to - from);
  }
}

} // namespace

Decoder Decoder::fromJson(const std::optional<JsonNode> &node) {
  Decoder d;
  if (node) {
    d.present_ = true;
    d.addFromJson(*node);
  }
  return d;
}

void Decoder::addFromJson(const JsonNode &node) {
  const std::string &type = node.typeName();
  Step step;
  if (type == "Sequence") {
    node.expectKeys({"type", "decoders"});
    JsonNode list = node.member("decoders");
    list.expectArray();
    for (size_t i = 0; i < list.size(); ++i)
      addFromJson(list.at(i));
    return;
  }
  if (type == "ByteLevel") {
    node.expectKeys({"type", "add_prefix_space", "trim_offsets", "use_regex"});
    step.kind = Step::Kind::ByteLevel;
  } else if (type == "Replace") {
    node.expectKeys({"type", "pattern", "content"});
    step.kind = Step::Kind::Replace;
    step.pattern = Pattern::fromJson(node.member("pattern"));
    step.content = node.member("content").asString();
  } else if (type == "ByteFallback") {
    node.expectKeys({"type"});
    step.kind = Step::Kind::ByteFallback;
  } else if (type == "Fuse") {
    node.expectKeys({"type"});
    step.kind = Step::Kind::Fuse;
  } else if (type == "Strip") {
    node.expectKeys({"type", "content", "start", "stop"});
    step.kind = Step::Kind::Strip;
    JsonNode content = node.member("content");
    step.content = content.asString();
    if (step.content.empty() ||
        validUtf8Prefix(step.content) != step.content.size())
      content.fail("expected one character");
    step.start = static_cast<size_t>(node.indexOr("start", 0));
    step.stop = static_cast<size_t>(node.indexOr("stop", 0));
  } else if (type == "Metaspace") {
    node.expectKeys({"type", "replacement", "prepend_scheme", "split",
                     "add_prefix_space", "str_rep"});
    step.kind = Step::Kind::Metaspace;
    JsonNode rep = node.member("replacement");
    step.content = rep.asString();
    if (step.content.empty() ||
        validUtf8Prefix(step.content) != step.content.size())
      rep.fail("expected one character");
    if (auto scheme = node.optional("prepend_scheme"))
      step.prependScheme = scheme->asString() != "never";
    else
      step.prependScheme = node.boolOr("add_prefix_space", true);
  } else {
    node.member("type").fail("unsupported decoder \"" + type +
                             "\" (supported: ByteFallback, ByteLevel, Fuse, "
                             "Metaspace, Replace, Strip, Sequence)");
  }
  steps_.push_back(std::move(step));
}

std::string Decoder::decode(std::vector<std::string> tokens) const {
  if (!present_)
    return joined(tokens, " ");
  for (const Step &step : steps_) {
    switch (step.kind) {
    case Step::Kind::ByteLevel: {
      // Each token's characters back to bytes; a token with a character
      // outside the alphabet (an added token, say) stays as it is.
      const ByteLevelAlphabet &alphabet = ByteLevelAlphabet::get();
      std::string bytes;
      for (const std::string &t : tokens)
        if (!alphabet.decode(t, bytes))
          bytes += t;
      tokens.assign(1, utf8Lossy(bytes));
      break;
    }
    case Step::Kind::Replace:
      for (std::string &t : tokens)
        t = step.pattern->replaceAll(t, step.content);
      break;
    case Step::Kind::ByteFallback:
      byteFallback(tokens);
      break;
    case Step::Kind::Fuse:
      tokens.assign(1, joined(tokens, ""));
      break;
    case Step::Kind::Strip:
      strip(tokens, step.content, step.start, step.stop);
      break;
    case Step::Kind::Metaspace:
      for (size_t i = 0; i < tokens.size(); ++i) {
        std::string &t = tokens[i];
        std::string out;
        size_t pos = 0, from = 0;
        while ((pos = t.find(step.content, from)) != std::string::npos) {
          out.append(t, from, pos - from);
          // The prefix the pre-tokenizer added is dropped again.
          if (!(i == 0 && pos == 0 && step.prependScheme))
            out += ' ';
          from = pos + step.content.size();
        }
        out.append(t, from, std::string::npos);
        t.swap(out);
      }
      break;
    }
  }
  return joined(tokens, "");
}

} // namespace strata::tok
