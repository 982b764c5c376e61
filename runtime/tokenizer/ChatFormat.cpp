#include "runtime/tokenizer/ChatFormat.h"

namespace strata::tok {

namespace {

constexpr ChatFormat kFormats[] = {ChatFormat::Llama3, ChatFormat::ChatML,
                                   ChatFormat::Mistral, ChatFormat::Llama2};

/// The families' templates strip surrounding white space of a message.
std::string trimmed(const std::string &s) {
  const char *space = " \t\r\n";
  const size_t first = s.find_first_not_of(space);
  if (first == std::string::npos)
    return "";
  return s.substr(first, s.find_last_not_of(space) - first + 1);
}

std::string llama3Message(const std::string &role, const std::string &text) {
  return "<|start_header_id|>" + role + "<|end_header_id|>\n\n" +
         trimmed(text) + "<|eot_id|>";
}

std::string chatmlMessage(const std::string &role, const std::string &text) {
  return "<|im_start|>" + role + "\n" + text + "<|im_end|>\n";
}

} // namespace

const char *chatFormatName(ChatFormat format) {
  switch (format) {
  case ChatFormat::Llama3:
    return "llama3";
  case ChatFormat::ChatML:
    return "chatml";
  case ChatFormat::Mistral:
    return "mistral";
  case ChatFormat::Llama2:
    return "llama2";
  }
  return "unknown";
}

std::optional<ChatFormat> chatFormatByName(const std::string &name) {
  for (ChatFormat f : kFormats)
    if (name == chatFormatName(f))
      return f;
  return std::nullopt;
}

std::string knownChatFormats() {
  std::string out;
  for (ChatFormat f : kFormats)
    out += std::string(out.empty() ? "" : ", ") + chatFormatName(f);
  return out;
}

std::optional<ChatFormat> recognizeChatTemplate(const std::string &tmpl) {
  auto has = [&](const char *marker) {
    return tmpl.find(marker) != std::string::npos;
  };
  if (has("<|start_header_id|>") && has("<|eot_id|>"))
    return ChatFormat::Llama3;
  if (has("<|im_start|>") && has("<|im_end|>"))
    return ChatFormat::ChatML;
  // Llama-2's template is the [INST] one with a <<SYS>> block.
  if (has("[INST]") && has("<<SYS>>"))
    return ChatFormat::Llama2;
  if (has("[INST]"))
    return ChatFormat::Mistral;
  return std::nullopt;
}

std::string chatOpening(ChatFormat format, const std::string &system,
                        const std::string &user) {
  switch (format) {
  case ChatFormat::Llama3:
    return "<|begin_of_text|>" +
           (system.empty() ? "" : llama3Message("system", system)) +
           llama3Message("user", user) +
           "<|start_header_id|>assistant<|end_header_id|>\n\n";
  case ChatFormat::ChatML:
    return (system.empty() ? "" : chatmlMessage("system", system)) +
           chatmlMessage("user", user) + "<|im_start|>assistant\n";
  case ChatFormat::Mistral:
    return "<s>[INST] " + (system.empty() ? "" : trimmed(system) + "\n\n") +
           trimmed(user) + " [/INST]";
  case ChatFormat::Llama2:
    return "<s>[INST] " +
           (system.empty() ? ""
                           : "<<SYS>>\n" + trimmed(system) + "\n<</SYS>>\n\n") +
           trimmed(user) + " [/INST]";
  }
  return "";
}

std::string chatNextTurn(ChatFormat format, const std::string &user,
                         bool replyEnded) {
  const std::string end = replyEnded ? "" : chatReplyEnd(format);
  switch (format) {
  case ChatFormat::Llama3:
    return end + llama3Message("user", user) +
           "<|start_header_id|>assistant<|end_header_id|>\n\n";
  case ChatFormat::ChatML:
    return end + "\n" + chatmlMessage("user", user) + "<|im_start|>assistant\n";
  case ChatFormat::Mistral:
    return end + "[INST] " + trimmed(user) + " [/INST]";
  case ChatFormat::Llama2:
    return end + "<s>[INST] " + trimmed(user) + " [/INST]";
  }
  return "";
}

const char *chatReplyEnd(ChatFormat format) {
  switch (format) {
  case ChatFormat::Llama3:
    return "<|eot_id|>";
  case ChatFormat::ChatML:
    return "<|im_end|>";
  case ChatFormat::Mistral:
  case ChatFormat::Llama2:
    return "</s>";
  }
  return "";
}

} // namespace strata::tok
