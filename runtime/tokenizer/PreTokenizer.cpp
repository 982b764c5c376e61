#include "runtime/tokenizer/PreTokenizer.h"

#include "runtime/tokenizer/ByteLevel.h"
#include "runtime/tokenizer/TokenizerError.h"
#include "runtime/tokenizer/Utf8.h"

#include <algorithm>

namespace strata::tok {

namespace {

// The split pattern of GPT-2, which ByteLevel applies when use_regex is set.
const char kGpt2Pattern[] =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

std::shared_ptr<const Regex> sharedRegex(const char *pattern) {
  return std::make_shared<const Regex>(pattern);
}

SplitBehavior parseBehavior(const JsonNode &node) {
  const std::string &name = node.asString();
  if (name == "Removed")
    return SplitBehavior::Removed;
  if (name == "Isolated")
    return SplitBehavior::Isolated;
  if (name == "MergedWithPrevious")
    return SplitBehavior::MergedWithPrevious;
  if (name == "MergedWithNext")
    return SplitBehavior::MergedWithNext;
  if (name == "Contiguous")
    return SplitBehavior::Contiguous;
  node.fail("unknown split behavior \"" + name +
            "\" (known: Removed, Isolated, MergedWithPrevious, "
            "MergedWithNext, Contiguous)");
}

} // namespace

void splitByMatches(std::string_view text, const std::vector<Span> &matches,
                    SplitBehavior behavior, bool invert,
                    std::vector<Span> &parts) {
  // The whole text as alternating gaps and matches, each flagged.
  struct Part {
    Span span;
    bool match;
  };
  std::vector<Part> all;
  all.reserve(matches.size() * 2 + 1);
  size_t prev = 0;
  for (const Span &m : matches) {
    if (m.start > prev)
      all.push_back({{prev, m.start}, invert});
    all.push_back({m, !invert});
    prev = m.end;
  }
  if (prev < text.size())
    all.push_back({{prev, text.size()}, invert});

  std::vector<Span> merged;
  merged.reserve(all.size());
  switch (behavior) {
  case SplitBehavior::Removed:
    for (const Part &p : all)
      if (!p.match)
        merged.push_back(p.span);
    break;
  case SplitBehavior::Isolated:
    for (const Part &p : all)
      merged.push_back(p.span);
    break;
  case SplitBehavior::MergedWithPrevious: {
    bool previousMatch = false;
    for (const Part &p : all) {
      if (p.match && !previousMatch && !merged.empty())
        merged.back().end = p.span.end;
      else
        merged.push_back(p.span);
      previousMatch = p.match;
    }
    break;
  }
  case SplitBehavior::MergedWithNext: {
    // Mirror image of MergedWithPrevious: walk from the end.
    bool previousMatch = false;
    for (auto it = all.rbegin(); it != all.rend(); ++it) {
      if (it->match && !previousMatch && !merged.empty())
        merged.back().start = it->span.start;
      else
        merged.push_back(it->span);
      previousMatch = it->match;
    }
    std::reverse(merged.begin(), merged.end());
    break;
  }
  case SplitBehavior::Contiguous: {
    bool previousMatch = false;
    for (const Part &p : all) {
      if (p.match == previousMatch && !merged.empty())
        merged.back().end = p.span.end;
      else
        merged.push_back(p.span);
      previousMatch = p.match;
    }
    break;
  }
  }
  for (const Span &s : merged)
    if (s.end > s.start)
      parts.push_back(s);
}

PreTokenizer PreTokenizer::fromJson(const std::optional<JsonNode> &node) {
  PreTokenizer p;
  if (node)
    p.addFromJson(*node);
  return p;
}

void PreTokenizer::addFromJson(const JsonNode &node) {
  const std::string &type = node.typeName();
  Step step;
  if (type == "Sequence") {
    node.expectKeys({"type", "pretokenizers"});
    JsonNode list = node.member("pretokenizers");
    list.expectArray();
    for (size_t i = 0; i < list.size(); ++i)
      addFromJson(list.at(i));
    return;
  }
  if (type == "Split") {
    node.expectKeys({"type", "pattern", "behavior", "invert"});
    step.kind = Step::Kind::Split;
    step.pattern = Pattern::fromJson(node.member("pattern"));
    step.behavior = parseBehavior(node.member("behavior"));
    step.invert = node.boolOr("invert", false);
  } else if (type == "ByteLevel") {
    // trim_offsets changes offsets only, which this library does not
    // report.
    node.expectKeys({"type", "add_prefix_space", "trim_offsets", "use_regex"});
    step.kind = Step::Kind::ByteLevel;
    step.addPrefixSpace = node.boolOr("add_prefix_space", true);
    step.useRegex = node.boolOr("use_regex", true);
    if (step.useRegex)
      step.regex = sharedRegex(kGpt2Pattern);
  } else if (type == "Digits") {
    node.expectKeys({"type", "individual_digits"});
    step.kind = Step::Kind::Digits;
    // Each digit alone, or runs of digits (Contiguous); \p{N} is what Rust's
    // char::is_numeric tests.
    bool individual = node.boolOr("individual_digits", false);
    step.regex = sharedRegex(individual ? R"(\p{N})" : R"(\p{N}+)");
    step.behavior = SplitBehavior::Isolated;
  } else if (type == "Metaspace") {
    node.expectKeys({"type", "replacement", "prepend_scheme", "split",
                     "add_prefix_space", "str_rep"});
    step.kind = Step::Kind::Metaspace;
    JsonNode rep = node.member("replacement");
    step.replacement = rep.asString();
    if (step.replacement.empty() ||
        step.replacement.size() != validUtf8Prefix(step.replacement))
      rep.fail("expected one character");
    if (auto scheme = node.optional("prepend_scheme")) {
      const std::string &s = scheme->asString();
      if (s == "always")
        step.prepend = PrependScheme::Always;
      else if (s == "first")
        step.prepend = PrependScheme::First;
      else if (s == "never")
        step.prepend = PrependScheme::Never;
      else
        scheme->fail("unknown prepend_scheme \"" + s +
                     "\" (known: always, first, never)");
    } else {
      step.prepend = node.boolOr("add_prefix_space", true)
                         ? PrependScheme::Always
                         : PrependScheme::Never;
    }
    step.splitOnReplacement = node.boolOr("split", true);
  } else {
    node.member("type").fail("unsupported pre-tokenizer \"" + type +
                             "\" (supported: ByteLevel, Digits, Metaspace, "
                             "Split, Sequence)");
  }
  steps_.push_back(std::move(step));
}

void PreTokenizer::applyStep(const Step &step, std::vector<PreToken> &in,
                             std::vector<PreToken> &out) const {
  std::vector<Span> matches, parts;
  auto cut = [&](PreToken &piece, SplitBehavior behavior, bool invert) {
    parts.clear();
    splitByMatches(piece.text, matches, behavior, invert, parts);
    for (const Span &s : parts)
      out.push_back({piece.text.substr(s.start, s.end - s.start),
                     piece.atStart && s.start == 0});
  };
  for (PreToken &piece : in) {
    matches.clear();
    switch (step.kind) {
    case Step::Kind::Split:
      step.pattern->findAll(piece.text, matches);
      cut(piece, step.behavior, step.invert);
      break;
    case Step::Kind::Digits:
      step.regex->findAll(piece.text, matches);
      cut(piece, SplitBehavior::Isolated, false);
      break;
    case Step::Kind::ByteLevel: {
      if (step.addPrefixSpace && (piece.text.empty() || piece.text[0] != ' '))
        piece.text.insert(0, 1, ' ');
      size_t first = out.size();
      if (step.useRegex) {
        step.regex->findAll(piece.text, matches);
        cut(piece, SplitBehavior::Isolated, false);
      } else if (!piece.text.empty()) {
        out.push_back(std::move(piece));
      }
      // Each byte becomes its printable stand-in character.
      const ByteLevelAlphabet &alphabet = ByteLevelAlphabet::get();
      std::string mapped;
      for (size_t i = first; i < out.size(); ++i) {
        mapped.clear();
        alphabet.encode(out[i].text, mapped);
        out[i].text.swap(mapped);
      }
      break;
    }
    case Step::Kind::Metaspace: {
      std::string text;
      text.reserve(piece.text.size() + 8);
      for (char c : piece.text) {
        if (c == ' ')
          text += step.replacement;
        else
          text += c;
      }
      bool startsWithRep = text.compare(0, step.replacement.size(),
                                        step.replacement) == 0;
      if (!startsWithRep && (step.prepend == PrependScheme::Always ||
                             (step.prepend == PrependScheme::First &&
                              piece.atStart)))
        text.insert(0, step.replacement);
      piece.text.swap(text);
      if (step.splitOnReplacement) {
        Pattern::literalMatches(piece.text, step.replacement, matches);
        cut(piece, SplitBehavior::MergedWithNext, false);
      } else if (!piece.text.empty()) {
        out.push_back(std::move(piece));
      }
      break;
    }
    }
  }
}

void PreTokenizer::split(PreToken piece, std::vector<PreToken> &words) const {
  if (steps_.empty()) {
    if (!piece.text.empty())
      words.push_back(std::move(piece));
    return;
  }
  std::vector<PreToken> current;
  current.push_back(std::move(piece));
  for (size_t i = 0; i < steps_.size(); ++i) {
    std::vector<PreToken> next;
    next.reserve(current.size() * 2);
    applyStep(steps_[i], current, next);
    current.swap(next);
  }
  for (PreToken &w : current)
    words.push_back(std::move(w));
}

} // namespace strata::tok
