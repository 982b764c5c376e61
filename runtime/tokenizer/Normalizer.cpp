#include "runtime/tokenizer/Normalizer.h"

#include "runtime/tokenizer/TokenizerError.h"

namespace strata::tok {

Pattern Pattern::fromJson(const JsonNode &node) {
  node.expectObject();
  if (node.size() != 1)
    node.fail("expected one member, \"String\" or \"Regex\"");
  Pattern p;
  if (auto s = node.optional("String")) {
    p.literal_ = s->asString();
    if (p.literal_.empty())
      s->fail("an empty string pattern matches nothing useful");
  } else if (auto r = node.optional("Regex")) {
    try {
      p.regex_ = std::make_shared<const Regex>(r->asString());
    } catch (const TokenizerError &e) {
      r->fail(e.what());
    }
  } else {
    node.fail("expected \"String\" or \"Regex\"");
  }
  return p;
}

void Pattern::findAll(std::string_view text, std::vector<Span> &out) const {
  if (regex_) {
    regex_->findAll(text, out);
    return;
  }
  literalMatches(text, literal_, out);
}

void Pattern::forEachMatch(std::string_view text,
                           const std::function<void(Span)> &onMatch) const {
  if (regex_) {
    regex_->forEachMatch(text, onMatch);
    return;
  }
  size_t pos = 0;
  while ((pos = text.find(literal_, pos)) != std::string_view::npos) {
    onMatch({pos, pos + literal_.size()});
    pos += literal_.size();
  }
}

void Pattern::literalMatches(std::string_view text, std::string_view literal,
                             std::vector<Span> &out) {
  size_t pos = 0;
  while ((pos = text.find(literal, pos)) != std::string_view::npos) {
    out.push_back({pos, pos + literal.size()});
    pos += literal.size();
  }
}

std::string Pattern::replaceAll(std::string_view text,
                                const std::string &content) const {
  if (!regex_) {
    // A literal (SentencePiece's " " -> U+2581 over whole texts): one pass,
    // no list of matches.
    size_t pos = text.find(literal_);
    if (pos == std::string_view::npos)
      return std::string(text);
    std::string out;
    out.reserve(text.size() + text.size() / 4);
    size_t prev = 0;
    while (pos != std::string_view::npos) {
      out.append(text.substr(prev, pos - prev));
      out += content;
      prev = pos + literal_.size();
      pos = text.find(literal_, prev);
    }
    out.append(text.substr(prev));
    return out;
  }
  std::vector<Span> matches;
  findAll(text, matches);
  if (matches.empty())
    return std::string(text);
  std::string out;
  out.reserve(text.size() + matches.size() * content.size());
  size_t prev = 0;
  for (const Span &m : matches) {
    out.append(text.substr(prev, m.start - prev));
    out += content;
    prev = m.end;
  }
  out.append(text.substr(prev));
  return out;
}

Normalizer Normalizer::fromJson(const std::optional<JsonNode> &node) {
  Normalizer n;
  if (node)
    n.addFromJson(*node);
  return n;
}

void Normalizer::addFromJson(const JsonNode &node) {
  const std::string &type = node.typeName();
  if (type == "Sequence") {
    node.expectKeys({"type", "normalizers"});
    JsonNode list = node.member("normalizers");
    list.expectArray();
    for (size_t i = 0; i < list.size(); ++i)
      addFromJson(list.at(i));
    return;
  }
  Step step;
  if (type == "NFC" || type == "NFD" || type == "NFKC" || type == "NFKD") {
    node.expectKeys({"type"});
    step.kind = Step::Kind::Unicode;
    step.form = type == "NFC"    ? NormalForm::NFC
                : type == "NFD"  ? NormalForm::NFD
                : type == "NFKC" ? NormalForm::NFKC
                                 : NormalForm::NFKD;
  } else if (type == "Prepend") {
    node.expectKeys({"type", "prepend"});
    step.kind = Step::Kind::Prepend;
    step.content = node.member("prepend").asString();
  } else if (type == "Replace") {
    node.expectKeys({"type", "pattern", "content"});
    step.kind = Step::Kind::Replace;
    step.pattern = Pattern::fromJson(node.member("pattern"));
    step.content = node.member("content").asString();
  } else {
    node.member("type").fail(
        "unsupported normalizer \"" + type +
        "\" (supported: NFC, NFD, NFKC, NFKD, Prepend, Replace, Sequence)");
  }
  steps_.push_back(std::move(step));
}

void Normalizer::apply(std::string &text) const {
  for (const Step &step : steps_) {
    switch (step.kind) {
    case Step::Kind::Unicode:
      text = normalizeUnicode(text, step.form);
      break;
    case Step::Kind::Prepend:
      // As in Hugging Face tokenizers, an empty piece stays empty.
      if (!text.empty())
        text.insert(0, step.content);
      break;
    case Step::Kind::Replace:
      text = step.pattern->replaceAll(text, step.content);
      break;
    }
  }
}

} // namespace strata::tok
