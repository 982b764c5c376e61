// Text in and out for the generation commands (strata run, strata chat,
// strata-run): which tokenizer a run uses, which chat format, and the
// prompt's ids from --prompt, --prompt-file or --prompt-ids.
#ifndef STRATA_TOOLS_COMMON_TEXTSETUP_H
#define STRATA_TOOLS_COMMON_TEXTSETUP_H

#include "runtime/plan/Plan.h"
#include "runtime/tokenizer/ChatFormat.h"
#include "runtime/tokenizer/Tokenizer.h"
#include "tools/common/ArgParser.h"

#include <optional>
#include <string>
#include <vector>

namespace strata::tools {

/// The tokenizer of a run: --tokenizer PATH (a tokenizer.json or a folder
/// holding one) when given, else the plan's (`source` names the model or
/// plan file in messages). Nothing when neither has one. False with
/// `error` set when one does not load.
bool loadRunTokenizer(const ArgParser &parser, const plan::Plan &plan,
                      const std::string &source,
                      std::optional<tok::Tokenizer> &out, std::string &error);

/// A tokenizer's error as the tools print errors: its message starts with
/// the file (and place) it is about, to which ": error" is added.
std::string fileError(const tok::TokenizerError &e);

/// The tokenizer.json a PATH names: PATH itself, or PATH/tokenizer.json
/// for a folder.
std::string tokenizerJsonPath(const std::string &path);

/// The whole of the file `path` as bytes. False with `error` ("PATH:
/// error: OPTION: ...") when it is a folder or cannot be read.
bool readTextFile(const std::string &path, const std::string &option,
                  std::string &text, std::string &error);

/// The chat format: --chat-format NAME, else the one the tokenizer's chat
/// template writes. False with `error` listing the known formats when
/// neither names one.
bool resolveChatFormat(const ArgParser &parser, const tok::Tokenizer &tokenizer,
                       tok::ChatFormat &out, std::string &error);

/// What a run feeds the model.
struct Prompt {
  std::vector<int32_t> ids;
  /// Whether the prompt was text (--prompt, --prompt-file): the output is
  /// then text too unless --print-ids.
  bool text = false;
};

/// The prompt from exactly one of --prompt-ids, --prompt and
/// --prompt-file (with --chat, text is wrapped in the chat format). False
/// with a message naming the option when the options are wrong (`usage`
/// set: exit code 2) or a file or the tokenizer fails (exit code 1).
bool readPrompt(const ArgParser &parser, const plan::Plan &plan,
                const tok::Tokenizer *tokenizer, Prompt &out,
                std::string &error, bool &usage);

} // namespace strata::tools

#endif // STRATA_TOOLS_COMMON_TEXTSETUP_H
