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

void PreTokenizer::run(size_t index, PreToken piece,
                       const WordSink &sink) const {
  if (index == steps_.size()) {
    if (!piece.text.empty())
      sink(piece.text);
    return;
  }
  const Step &step = steps_[index];
  const std::string &text = piece.text;
  auto next = [&](size_t start, size_t end) {
    if (end > start)
      run(index + 1,
          {text.substr(start, end - start), piece.atStart && start == 0}, sink);
  };
  // Isolated and Removed keep each gap and (for Isolated) each match as it
  // is found; the merging behaviours need all matches first.
  auto cutAt = [&](auto &&forEach, SplitBehavior behavior, bool invert) {
    if (!invert && (behavior == SplitBehavior::Isolated ||
                    behavior == SplitBehavior::Removed)) {
      size_t prev = 0;
      forEach([&](Span m) {
        next(prev, m.start);
        if (behavior == SplitBehavior::Isolated)
          next(m.start, m.end);
        prev = m.end;
      });
      next(prev, text.size());
      return;
    }
    std::vector<Span> matches, parts;
    forEach([&](Span m) { matches.push_back(m); });
    splitByMatches(text, matches, behavior, invert, parts);
    for (const Span &s : parts)
      next(s.start, s.end);
  };
  switch (step.kind) {
  case Step::Kind::Split:
    cutAt([&](auto &&f) { step.pattern->forEachMatch(text, f); }, step.behavior,
          step.invert);
    return;
  case Step::Kind::Digits:
    cutAt([&](auto &&f) { step.regex->forEachMatch(text, f); },
          SplitBehavior::Isolated, false);
    return;
  case Step::Kind::ByteLevel: {
    if (step.addPrefixSpace && (text.empty() || text[0] != ' '))
      piece.text.insert(0, 1, ' ');
    // Each byte becomes its printable stand-in character, after the
    // optional GPT-2 split.
    const ByteLevelAlphabet &alphabet = ByteLevelAlphabet::get();
    const bool last = index + 1 == steps_.size();
    auto mapped = [&](size_t start, size_t end) {
      if (end <= start)
        return;
      if (last) {
        // The usual last step: the word goes to the sink from a buffer
        // kept per thread, with no allocation per word.
        thread_local std::string buffer;
        buffer.clear();
        alphabet.encode(std::string_view(text).substr(start, end - start),
                        buffer);
        sink(buffer);
        return;
      }
      PreToken word;
      word.atStart = piece.atStart && start == 0;
      word.text.reserve((end - start) * 2);
      alphabet.encode(std::string_view(text).substr(start, end - start),
                      word.text);
      run(index + 1, std::move(word), sink);
    };
    if (!step.useRegex) {
      mapped(0, text.size());
      return;
    }
    size_t prev = 0;
    step.regex->forEachMatch(text, [&](Span m) {
      mapped(prev, m.start);
      mapped(m.start, m.end);
      prev = m.end;
    });
    mapped(prev, text.size());
    return;
  }
  case Step::Kind::Metaspace: {
    std::string replaced;
    replaced.reserve(text.size() + 8);
    for (char c : text) {
      if (c == ' ')
        replaced += step.replacement;
      else
        replaced += c;
    }
    bool startsWithRep =
        replaced.compare(0, step.replacement.size(), step.replacement) == 0;
    if (!startsWithRep &&
        (step.prepend == PrependScheme::Always ||
         (step.prepend == PrependScheme::First && piece.atStart)))
      replaced.insert(0, step.replacement);
    piece.text.swap(replaced);
    if (!step.splitOnReplacement) {
      next(0, text.size());
      return;
    }
    std::vector<Span> matches, parts;
    Pattern::literalMatches(text, step.replacement, matches);
    splitByMatches(text, matches, SplitBehavior::MergedWithNext, false, parts);
    for (const Span &s : parts)
      next(s.start, s.end);
    return;
  }
  }
}

void PreTokenizer::split(PreToken piece, const WordSink &sink) const {
  run(0, std::move(piece), sink);
}

} // namespace strata::tok
