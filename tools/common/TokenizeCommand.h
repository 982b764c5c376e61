// `strata tokenize PATH --text TEXT [--special] [--json]`: the ids of a
// text with the tokenizer of PATH: a tokenizer.json, a checkpoint folder
// holding one, a model file (its `tokenizer:` entry) or a plan (the
// tokenizer it embeds).
#ifndef STRATA_TOOLS_COMMON_TOKENIZECOMMAND_H
#define STRATA_TOOLS_COMMON_TOKENIZECOMMAND_H

#include <string>
#include <vector>

namespace strata::tools {

/// Returns the exit code: 2 for a bad command line, 1 when PATH or its
/// tokenizer is wrong or the text cannot be encoded.
int runTokenizeCommand(const std::vector<std::string> &args);

} // namespace strata::tools

#endif // STRATA_TOOLS_COMMON_TOKENIZECOMMAND_H
