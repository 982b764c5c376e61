// Chat formats: how a conversation is written as text for the model
// families strata knows, with special tokens written as their text (encode
// recognizes them). A model's format is recognized from its
// tokenizer_config.json chat template, or named by the user; strata does
// not run Jinja templates.
//
//   llama3   <|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\n
//            Hi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n
//   chatml   <|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n
//            (Qwen2/3)
//   mistral  <s>[INST] Hi [/INST]     (a system message goes before the
//            first user message, separated by a blank line)
//   llama2   <s>[INST] <<SYS>>\nsystem\n<</SYS>>\n\nHi [/INST]
#ifndef STRATA_RUNTIME_TOKENIZER_CHATFORMAT_H
#define STRATA_RUNTIME_TOKENIZER_CHATFORMAT_H

#include <optional>
#include <string>
#include <vector>

namespace strata::tok {

enum class ChatFormat { Llama3, ChatML, Mistral, Llama2 };

/// "llama3", "chatml", "mistral", "llama2".
const char *chatFormatName(ChatFormat format);
/// The format of a name chatFormatName gives, or nothing.
std::optional<ChatFormat> chatFormatByName(const std::string &name);
/// "llama3, chatml, mistral, llama2": for messages.
std::string knownChatFormats();
/// The format a chat template writes, recognized by the markers each
/// family's template uses, or nothing.
std::optional<ChatFormat> recognizeChatTemplate(const std::string &tmpl);

/// The text that opens a conversation: the system message (may be empty),
/// the first user message and the header of the assistant's reply.
std::string chatOpening(ChatFormat format, const std::string &system,
                        const std::string &user);
/// The text that follows an assistant reply: the reply's end (unless the
/// model already ended it with its end-of-turn token, `replyEnded`), the
/// next user message and the header of the next reply.
std::string chatNextTurn(ChatFormat format, const std::string &user,
                         bool replyEnded);
/// The token text that ends an assistant reply.
const char *chatReplyEnd(ChatFormat format);

} // namespace strata::tok

#endif // STRATA_RUNTIME_TOKENIZER_CHATFORMAT_H
