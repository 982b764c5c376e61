// The text of a chat request's conversation in the model's chat format
// (runtime/tokenizer/ChatFormat.h): an optional system message, then user
// and assistant messages taking turns, ending with the user's; the text
// ends with the header of the assistant's reply.
#ifndef STRATA_TOOLS_SERVE_CHATPROMPT_H
#define STRATA_TOOLS_SERVE_CHATPROMPT_H

#include "runtime/tokenizer/ChatFormat.h"
#include "tools/serve/OpenAiRequest.h"

#include <string>
#include <vector>

namespace strata::serve {

/// False with `error` naming the message at fault when the conversation
/// has another shape (the formats have no place for it).
bool chatPromptText(tok::ChatFormat format,
                    const std::vector<ChatMessage> &messages, std::string &text,
                    ApiError &error);

} // namespace strata::serve

#endif // STRATA_TOOLS_SERVE_CHATPROMPT_H
