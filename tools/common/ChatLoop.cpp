#include "tools/common/ChatLoop.h"

#include "runtime/Engine.h"
#include "runtime/PlanTokenizer.h"
#include "runtime/TextStream.h"
#include "runtime/tokenizer/Utf8.h"
#include "tools/common/RunCommand.h"
#include "tools/common/TextSetup.h"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <new>
#include <optional>
#include <unistd.h>

namespace strata::tools {

void addChatOptions(ArgParser &parser) {
  addSamplingOptions(parser);
  parser.addOption("chat-format", "NAME",
                   "llama3, chatml, mistral or llama2 (default: recognized "
                   "from the tokenizer's chat template)");
  parser.addOption("system", "TEXT", "a system message");
  parser.addOption("context", "N",
                   "tokens the conversation may hold (default: the model's "
                   "positions, at most 4096); it starts over when full");
  parser.addOption("max-new-tokens", "N",
                   "tokens a reply may take at most (default 512)");
  parser.addOption("weights", "PATH",
                   "load the weights from a .safetensors file or its index "
                   "(default: the model's own)");
  parser.addOption("device", "cpu|cuda",
                   "where the programs run (default cpu)");
  parser.addFlag("no-graphs", "cuda: launch every step eagerly");
}

int runChatLoop(const std::string &tool, const ArgParser &parser,
                plan::Plan plan, const std::string &source) {
  auto usage = [&](const std::string &m) { return usageError(tool, m); };
  auto failed = [&](const std::string &m) { return inputError(tool, m); };
  std::string error;
  std::optional<tok::Tokenizer> tokenizer;
  if (!loadRunTokenizer(parser, plan, source, tokenizer, error))
    return failed(error);
  if (!tokenizer)
    return failed(source + ": error: chat needs a tokenizer: the model has "
                           "none (a 'tokenizer:' entry in the model file) "
                           "and no --tokenizer was given");
  tok::ChatFormat format;
  if (!resolveChatFormat(parser, *tokenizer, format, error))
    return usage(error);
  int64_t context = std::min<int64_t>(plan.maxPositions, 4096);
  if (parser.has("context") &&
      !parseInteger(parser.get("context"), 1, plan.maxPositions, context))
    return usage("--context expects an integer in [1, " +
                 std::to_string(plan.maxPositions) +
                 "] (the model's positions), got '" + parser.get("context") +
                 "'");
  int64_t maxNew = 512;
  if (parser.has("max-new-tokens") &&
      !parseInteger(parser.get("max-new-tokens"), 1, 1 << 20, maxNew))
    return usage("--max-new-tokens expects an integer in [1, 1048576], got '" +
                 parser.get("max-new-tokens") + "'");
  GenerationRequest turn;
  if (std::string bad = parseSamplingOptions(parser, turn.sampling);
      !bad.empty())
    return usage(bad);
  EngineOptions options;
  if (std::string bad = parseEngineOptions(parser, options); !bad.empty())
    return usage(bad);
  turn.stopTokens = eosIdsOf(plan, &*tokenizer);
  const std::string system = parser.get("system");
  const bool interactive = isatty(0);

  try {
    std::unique_ptr<Engine> engine =
        Engine::create(std::move(plan), options, error);
    if (!engine || !engine->openSession(context, error))
      return failed(error);
    if (interactive)
      std::fprintf(stderr,
                   "chat format %s; an empty line is skipped, /exit or "
                   "end of input ends the conversation\n",
                   tok::chatFormatName(format));
    bool first = true, replyEnded = false, refused = false;
    std::string line;
    while (true) {
      if (interactive) {
        std::fputs("> ", stdout);
        std::fflush(stdout);
      }
      if (!std::getline(std::cin, line) || line == "/exit")
        break;
      if (line.find_first_not_of(" \t\r") == std::string::npos)
        continue;
      // A line that cannot be encoded (not UTF-8) is refused and the
      // conversation goes on; the exit code says that one was refused.
      if (const size_t bad = tok::findInvalidUtf8(line);
          bad != std::string::npos) {
        std::fprintf(stderr,
                     "%s: error: the message is not valid UTF-8 (invalid "
                     "byte at offset %zu); it was not sent\n",
                     tool.c_str(), bad);
        refused = true;
        continue;
      }
      std::string text = first ? tok::chatOpening(format, system, line)
                               : tok::chatNextTurn(format, line, replyEnded);
      turn.prompt = tokenizer->encode(text, false);
      // A conversation that would not fit starts over with this message.
      if (!first &&
          engine->sessionLength() + int64_t(turn.prompt.size()) + 1 > context) {
        std::fprintf(stderr,
                     "[the conversation reached %lld tokens "
                     "(--context); starting over]\n",
                     (long long)context);
        engine->closeSession();
        if (!engine->openSession(context, error))
          return failed(error);
        text = tok::chatOpening(format, system, line);
        turn.prompt = tokenizer->encode(text, false);
      }
      const int64_t room =
          context - engine->sessionLength() - int64_t(turn.prompt.size());
      if (room < 1)
        return failed("the message takes " +
                      std::to_string(turn.prompt.size()) +
                      " tokens, more than --context " +
                      std::to_string(context) + " leaves for a reply");
      turn.maxNewTokens = std::min(maxNew, room);
      TextStream stream(*tokenizer, {});
      turn.onToken = [&stream](int32_t id) {
        const std::string out = stream.push(id);
        std::fwrite(out.data(), 1, out.size(), stdout);
        std::fflush(stdout);
        return true;
      };
      GenerationResult result;
      GenerationTimings timings;
      if (!engine->continueSession(turn, result, timings, error))
        return failed(error);
      std::printf("%s\n", stream.finish().c_str());
      std::fflush(stdout);
      replyEnded = result.finish == FinishReason::StopToken;
      first = false;
    }
    return refused ? 1 : 0;
  } catch (const tok::TokenizerError &e) {
    return failed(std::string("the message: ") + e.what());
  } catch (const std::bad_alloc &) {
    return failed("out of host memory");
  }
}

} // namespace strata::tools
