#include "runtime/tokenizer/PostProcessor.h"

namespace strata::tok {

PostProcessor PostProcessor::fromJson(const std::optional<JsonNode> &node) {
  PostProcessor p;
  if (node)
    p.addFromJson(*node);
  return p;
}

void PostProcessor::addFromJson(const JsonNode &node) {
  const std::string &type = node.typeName();
  if (type == "Sequence") {
    node.expectKeys({"type", "processors"});
    JsonNode list = node.member("processors");
    list.expectArray();
    for (size_t i = 0; i < list.size(); ++i)
      addFromJson(list.at(i));
  } else if (type == "ByteLevel") {
    node.expectKeys({"type", "add_prefix_space", "trim_offsets", "use_regex"});
  } else if (type == "TemplateProcessing") {
    node.expectKeys({"type", "single", "pair", "special_tokens"});
    addTemplate(node);
  } else {
    node.member("type").fail("unsupported post-processor \"" + type +
                             "\" (supported: ByteLevel, TemplateProcessing, "
                             "Sequence)");
  }
}

void PostProcessor::addTemplate(const JsonNode &node) {
  JsonNode specials = node.member("special_tokens");
  specials.expectObject();
  JsonNode single = node.member("single");
  single.expectArray();
  std::vector<int32_t> before, after;
  bool sawSequence = false;
  for (size_t i = 0; i < single.size(); ++i) {
    JsonNode piece = single.at(i);
    piece.expectObject();
    if (piece.size() != 1)
      piece.fail("expected one member, \"SpecialToken\" or \"Sequence\"");
    if (auto seq = piece.optional("Sequence")) {
      seq->expectKeys({"id", "type_id"});
      JsonNode id = seq->member("id");
      if (id.asString() != "A")
        id.fail("the single template can only hold sequence \"A\"");
      if (sawSequence)
        seq->fail("sequence \"A\" appears twice");
      sawSequence = true;
    } else if (auto special = piece.optional("SpecialToken")) {
      special->expectKeys({"id", "type_id"});
      JsonNode name = special->member("id");
      auto entry = specials.optional(name.asString());
      if (!entry)
        name.fail("special token \"" + name.asString() +
                  "\" is not in /special_tokens of this template");
      entry->expectKeys({"id", "ids", "tokens"});
      JsonNode ids = entry->member("ids");
      ids.expectArray();
      for (size_t k = 0; k < ids.size(); ++k)
        (sawSequence ? after : before).push_back(ids.at(k).asIndex());
    } else {
      piece.fail("expected \"SpecialToken\" or \"Sequence\"");
    }
  }
  if (!sawSequence)
    single.fail("the template has no sequence \"A\"");
  // A later processor wraps what the earlier ones produced.
  prefix_.insert(prefix_.begin(), before.begin(), before.end());
  suffix_.insert(suffix_.end(), after.begin(), after.end());
}

} // namespace strata::tok
