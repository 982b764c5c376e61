#include "tools/common/TextSetup.h"

#include "runtime/PlanTokenizer.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace strata::tools {

std::string tokenizerJsonPath(const std::string &path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    return (std::filesystem::path(path) / "tokenizer.json").string();
  return path;
}

std::string fileError(const tok::TokenizerError &e) {
  std::string message = e.what();
  const size_t colon = message.find(": ");
  if (colon != std::string::npos &&
      message.find(": error: ") == std::string::npos)
    message.insert(colon, ": error");
  return message;
}

bool loadRunTokenizer(const ArgParser &parser, const plan::Plan &plan,
                      const std::string &source,
                      std::optional<tok::Tokenizer> &out, std::string &error) {
  try {
    if (parser.has("tokenizer")) {
      const std::string path = tokenizerJsonPath(parser.get("tokenizer"));
      out = tok::Tokenizer::fromFile(path);
      if (out->vocabSize() > plan.vocabSize) {
        error = path + ": error: the tokenizer has ids up to " +
                std::to_string(out->vocabSize() - 1) +
                " but the model's vocabulary has " +
                std::to_string(plan.vocabSize) + " ids";
        return false;
      }
      return true;
    }
    out = planTokenizer(plan, source);
    return true;
  } catch (const tok::TokenizerError &e) {
    error = fileError(e);
    return false;
  }
}

bool readTextFile(const std::string &path, const std::string &option,
                  std::string &text, std::string &error) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    error = path + ": error: " + option + ": is a folder";
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error =
        path + ": error: " + option + ": cannot open: " + std::strerror(errno);
    return false;
  }
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) {
    error = path + ": error: " + option + ": cannot read the file";
    return false;
  }
  text = s.str();
  return true;
}

bool resolveChatFormat(const ArgParser &parser, const tok::Tokenizer &tokenizer,
                       tok::ChatFormat &out, std::string &error) {
  if (parser.has("chat-format")) {
    const std::string name = parser.get("chat-format");
    if (auto f = tok::chatFormatByName(name)) {
      out = *f;
      return true;
    }
    error = "--chat-format: unknown format '" + name +
            "'; known formats: " + tok::knownChatFormats();
    return false;
  }
  if (tokenizer.chatTemplate().empty()) {
    error = "--chat: the tokenizer has no chat template "
            "(tokenizer_config.json); name the format with --chat-format "
            "(known formats: " +
            tok::knownChatFormats() + ")";
    return false;
  }
  if (auto f = tok::recognizeChatTemplate(tokenizer.chatTemplate())) {
    out = *f;
    return true;
  }
  error = "--chat: the tokenizer's chat template is not one of the known "
          "formats (" +
          tok::knownChatFormats() + "); name one with --chat-format";
  return false;
}

namespace {

bool parseIds(const std::string &ids, int64_t vocab, std::vector<int32_t> &out,
              std::string &error) {
  size_t start = 0;
  while (start <= ids.size()) {
    const size_t comma = ids.find(',', start);
    const std::string item = ids.substr(
        start, comma == std::string::npos ? std::string::npos : comma - start);
    int64_t id = 0;
    if (!parseInteger(item, 0, INT32_MAX, id)) {
      error = "--prompt-ids expects comma-separated token ids, got '" + item +
              "' in '" + ids + "'";
      return false;
    }
    if (id >= vocab) {
      error = "--prompt-ids: token id " + std::to_string(id) +
              " is outside the model's vocabulary (ids 0 to " +
              std::to_string(vocab - 1) + ")";
      return false;
    }
    out.push_back(int32_t(id));
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  return true;
}

} // namespace

bool readPrompt(const ArgParser &parser, const plan::Plan &plan,
                const tok::Tokenizer *tokenizer, Prompt &out,
                std::string &error, bool &usage) {
  usage = true;
  const int given = int(parser.has("prompt-ids")) + int(parser.has("prompt")) +
                    int(parser.has("prompt-file"));
  if (given != 1) {
    error = given == 0 ? "a prompt is required: --prompt TEXT, --prompt-file "
                         "FILE or --prompt-ids IDS"
                       : "give one of --prompt, --prompt-file and "
                         "--prompt-ids";
    return false;
  }
  if (parser.has("prompt-ids")) {
    if (parser.has("chat")) {
      error = "--chat takes a text prompt (--prompt or --prompt-file), not "
              "--prompt-ids";
      return false;
    }
    return parseIds(parser.get("prompt-ids"), plan.vocabSize, out.ids, error);
  }
  const char *option = parser.has("prompt") ? "--prompt" : "--prompt-file";
  if (!tokenizer) {
    error = std::string(option) +
            " needs a tokenizer: the model has none (a 'tokenizer:' entry in "
            "the model file, which import-hf writes) and no --tokenizer was "
            "given; --prompt-ids takes token ids";
    return false;
  }
  std::string text;
  if (parser.has("prompt")) {
    text = parser.get("prompt");
  } else if (!readTextFile(parser.get("prompt-file"), "--prompt-file", text,
                           error)) {
    usage = false;
    return false;
  }
  out.text = true;
  try {
    if (parser.has("chat")) {
      tok::ChatFormat format;
      if (!resolveChatFormat(parser, *tokenizer, format, error))
        return false;
      out.ids = tokenizer->encode(
          tok::chatOpening(format, parser.get("system"), text), false);
    } else {
      if (parser.has("system") || parser.has("chat-format")) {
        error =
            std::string(parser.has("system") ? "--system" : "--chat-format") +
            " applies with --chat only";
        return false;
      }
      out.ids = tokenizer->encode(text, true);
    }
  } catch (const tok::TokenizerError &e) {
    error = std::string(option) + ": " + e.what();
    return false;
  }
  if (out.ids.empty()) {
    error =
        std::string(option) + ": the prompt is empty (it encodes to no tokens)";
    return false;
  }
  return true;
}

} // namespace strata::tools
