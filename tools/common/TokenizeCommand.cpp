#include "tools/common/TokenizeCommand.h"

#include "models/ModelImporter.h"
#include "runtime/PlanTokenizer.h"
#include "runtime/plan/PlanFile.h"
#include "tools/common/ArgParser.h"
#include "tools/common/TextSetup.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <optional>

namespace strata::tools {

namespace {

bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// The tokenizer PATH names (see the header); errors read "PATH: error: ...".
std::optional<tok::Tokenizer> tokenizerOf(const std::string &path,
                                          std::string &error) {
  try {
    if (endsWith(path, ".splan")) {
      plan::Plan plan;
      if (!plan::readPlanFile(path, plan, error))
        return std::nullopt;
      std::optional<tok::Tokenizer> t = planTokenizer(plan, path);
      if (!t)
        error = path + ": error: the plan has no tokenizer (its model file "
                       "had no 'tokenizer:' entry)";
      return t;
    }
    if (endsWith(path, ".yaml") || endsWith(path, ".yml")) {
      ImportResult model = importModelFile(path);
      if (!model.ok) {
        error = model.diag.str();
        return std::nullopt;
      }
      if (model.spec.tokenizer.path.empty()) {
        error = path + ": error: the model file has no 'tokenizer:' entry";
        return std::nullopt;
      }
      return tok::Tokenizer::fromFile(model.spec.tokenizer.path);
    }
    return tok::Tokenizer::fromFile(tokenizerJsonPath(path));
  } catch (const tok::TokenizerError &e) {
    error = fileError(e);
    return std::nullopt;
  }
}

} // namespace

int runTokenizeCommand(const std::vector<std::string> &args) {
  ArgParser parser;
  parser.addOption("text", "TEXT", "the text to encode (required)");
  parser.addFlag("special",
                 "add what the tokenizer's post-processor adds (BOS, ...)");
  parser.addFlag("json",
                 "print {\"ids\": [...], \"tokens\": [...], \"decoded\": "
                 "\"...\"}");
  parser.addFlag("help", "show this help");
  parser.addAlias("-h", "help");
  if (!parser.parse(args)) {
    std::fprintf(stderr,
                 "strata tokenize: error: %s\nrun 'strata tokenize --help' "
                 "for usage\n",
                 parser.error().c_str());
    return 2;
  }
  if (parser.has("help")) {
    std::printf(
        "usage: strata tokenize PATH --text TEXT [--special] [--json]\n\n"
        "Prints the token ids of TEXT. PATH is a tokenizer.json, a folder "
        "holding one,\na model file (its tokenizer: entry) or a plan (the "
        "tokenizer it embeds).\n\noptions:\n%s",
        parser.helpText().c_str());
    return 0;
  }
  if (parser.positionals().size() != 1) {
    std::fprintf(stderr, "strata tokenize: error: expected one PATH (a "
                         "tokenizer.json, checkpoint folder, model file or "
                         "plan)\nrun 'strata tokenize --help' for usage\n");
    return 2;
  }
  if (!parser.has("text")) {
    std::fprintf(stderr, "strata tokenize: error: --text is required\n");
    return 2;
  }
  std::string error;
  std::optional<tok::Tokenizer> tokenizer =
      tokenizerOf(parser.positionals().front(), error);
  if (!tokenizer) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return 1;
  }
  std::vector<int32_t> ids;
  std::string decoded;
  try {
    ids = tokenizer->encode(parser.get("text"), parser.has("special"));
    decoded = tokenizer->decode(ids, false);
  } catch (const tok::TokenizerError &e) {
    std::fprintf(stderr, "strata tokenize: error: --text: %s\n", e.what());
    return 1;
  }
  if (!parser.has("json")) {
    for (size_t i = 0; i < ids.size(); ++i)
      std::printf("%s%d", i ? " " : "", ids[i]);
    std::printf("\n");
    return 0;
  }
  nlohmann::ordered_json doc;
  doc["ids"] = ids;
  nlohmann::ordered_json tokens = nlohmann::ordered_json::array();
  for (int32_t id : ids)
    tokens.push_back(std::string(tokenizer->idToToken(id).value_or("")));
  doc["tokens"] = std::move(tokens);
  doc["decoded"] = decoded;
  // Token strings need not be UTF-8 (a byte-level piece of a character):
  // such bytes are written as U+FFFD rather than failing.
  std::printf("%s\n",
              doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                  .c_str());
  return 0;
}

} // namespace strata::tools
