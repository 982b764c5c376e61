// The chat formats, written out exactly as each family's chat template
// writes a conversation, and recognized from those templates.
#include "runtime/tokenizer/ChatFormat.h"

#include <catch2/catch.hpp>

using namespace strata::tok;

TEST_CASE("each format writes the opening and the next turn as its family "
          "does") {
  CHECK(chatOpening(ChatFormat::Llama3, "Be brief.", " Hi ") ==
        "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n"
        "Be brief.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\n"
        "Hi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n");
  CHECK(chatNextTurn(ChatFormat::Llama3, "More", true) ==
        "<|start_header_id|>user<|end_header_id|>\n\nMore<|eot_id|>"
        "<|start_header_id|>assistant<|end_header_id|>\n\n");
  CHECK(chatNextTurn(ChatFormat::Llama3, "More", false).rfind(
            "<|eot_id|><|start_header_id|>user", 0) == 0);

  CHECK(chatOpening(ChatFormat::ChatML, "", "Hi") ==
        "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  CHECK(chatOpening(ChatFormat::ChatML, "S", "Hi") ==
        "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
        "<|im_start|>assistant\n");
  CHECK(chatNextTurn(ChatFormat::ChatML, "More", true) ==
        "\n<|im_start|>user\nMore<|im_end|>\n<|im_start|>assistant\n");
  CHECK(chatNextTurn(ChatFormat::ChatML, "More", false) ==
        "<|im_end|>\n<|im_start|>user\nMore<|im_end|>\n"
        "<|im_start|>assistant\n");

  CHECK(chatOpening(ChatFormat::Mistral, "", "Hi") == "<s>[INST] Hi [/INST]");
  CHECK(chatOpening(ChatFormat::Mistral, "S", "Hi") ==
        "<s>[INST] S\n\nHi [/INST]");
  CHECK(chatNextTurn(ChatFormat::Mistral, "More", true) ==
        "[INST] More [/INST]");
  CHECK(chatNextTurn(ChatFormat::Mistral, "More", false) ==
        "</s>[INST] More [/INST]");

  CHECK(chatOpening(ChatFormat::Llama2, "S", "Hi") ==
        "<s>[INST] <<SYS>>\nS\n<</SYS>>\n\nHi [/INST]");
  CHECK(chatNextTurn(ChatFormat::Llama2, "More", true) ==
        "<s>[INST] More [/INST]");
}

TEST_CASE("formats are recognized from their chat templates") {
  CHECK(recognizeChatTemplate(
            "{{- bos_token }}{%- for message in messages %}{{- "
            "'<|start_header_id|>' + message['role'] + '<|end_header_id|>"
            "\\n\\n'+ message['content'] | trim + '<|eot_id|>' }}") ==
        ChatFormat::Llama3);
  CHECK(recognizeChatTemplate("{{'<|im_start|>' + message['role'] + '\\n' + "
                              "message['content'] + '<|im_end|>'}}") ==
        ChatFormat::ChatML);
  CHECK(recognizeChatTemplate(
            "{{ bos_token + '[INST] ' + content.strip() + ' [/INST]' }}"
            "{% set content = '<<SYS>>\\n' + system_message %}") ==
        ChatFormat::Llama2);
  CHECK(recognizeChatTemplate("{{ '[INST] ' + message['content'] + "
                              "' [/INST]' }}") == ChatFormat::Mistral);
  CHECK_FALSE(recognizeChatTemplate("{{ message['content'] }}"));
  CHECK_FALSE(recognizeChatTemplate(""));
}

TEST_CASE("formats are named") {
  for (ChatFormat f : {ChatFormat::Llama3, ChatFormat::ChatML,
                       ChatFormat::Mistral, ChatFormat::Llama2})
    CHECK(chatFormatByName(chatFormatName(f)) == f);
  CHECK_FALSE(chatFormatByName("jinja"));
  CHECK(knownChatFormats() == "llama3, chatml, mistral, llama2");
}
