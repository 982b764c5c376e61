// The tokenizer of a plan: the files a model file names are embedded when a
// plan is built, and a tokenizer is made back from them wherever the plan
// runs (strata, strata-run, the server), so that a plan file needs nothing
// beside it.
#ifndef STRATA_RUNTIME_PLANTOKENIZER_H
#define STRATA_RUNTIME_PLANTOKENIZER_H

#include "runtime/plan/Plan.h"
#include "runtime/tokenizer/Tokenizer.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace strata {

/// Reads `tokenizerJson` and the side files beside it into `out`, keeping
/// the BOS / EOS ids already there. Returns the error (naming the file)
/// when a file cannot be read, the tokenizer does not load or it has ids
/// beyond `vocabSize`; empty on success. Throws nothing: the compiler
/// side calls it.
std::string embedTokenizer(const std::string &tokenizerJson, int64_t vocabSize,
                           plan::TokenizerFiles &out);

/// The plan's tokenizer, or nothing when it has none; throws
/// tok::TokenizerError (naming "PLAN: embedded tokenizer.json") when it
/// does not load.
std::optional<tok::Tokenizer> planTokenizer(const plan::Plan &plan,
                                            const std::string &planName);

/// The ids that end generation: the model file's EOS ids when it gives
/// them, else the tokenizer's (none without a tokenizer).
std::vector<int32_t> eosIdsOf(const plan::Plan &plan,
                              const tok::Tokenizer *tokenizer);
/// The BOS id the same way, or -1.
int32_t bosIdOf(const plan::Plan &plan, const tok::Tokenizer *tokenizer);

} // namespace strata

#endif // STRATA_RUNTIME_PLANTOKENIZER_H
