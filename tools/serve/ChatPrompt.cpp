#include "tools/serve/ChatPrompt.h"

namespace strata::serve {

namespace {

bool refuse(ApiError &error, size_t index, const std::string &message) {
  error.status = 400;
  error.type = "invalid_request_error";
  error.param = "messages[" + std::to_string(index) + "].role";
  error.message = "'" + error.param + "': " + message;
  error.code = "invalid_value";
  return false;
}

} // namespace

bool chatPromptText(tok::ChatFormat format,
                    const std::vector<ChatMessage> &messages, std::string &text,
                    ApiError &error) {
  size_t i = 0;
  std::string system;
  if (!messages.empty() && messages[0].role == "system")
    system = messages[i++].content;
  // Roles alternate user, assistant, user, ... from here.
  for (size_t j = i; j < messages.size(); ++j) {
    const char *expected = (j - i) % 2 == 0 ? "user" : "assistant";
    if (messages[j].role == expected)
      continue;
    if (messages[j].role == "system")
      return refuse(error, j, "a system message may only come first");
    return refuse(error, j,
                  "this message is the " + messages[j].role + "'s, but the " +
                      expected +
                      "'s comes next: after an optional system message, "
                      "user and assistant messages take turns");
  }
  if (i == messages.size())
    return refuse(error, i - 1, "the conversation has no user message");
  if (messages.back().role != "user")
    return refuse(error, messages.size() - 1,
                  "the last message must be the user's (the reply to it is "
                  "generated)");
  text = tok::chatOpening(format, system, messages[i].content);
  for (size_t j = i + 1; j + 1 < messages.size(); j += 2)
    text +=
        messages[j].content + tok::chatNextTurn(format, messages[j + 1].content,
                                                /*replyEnded=*/false);
  return true;
}

} // namespace strata::serve
