// Prompt lookup: draft tokens without a draft model. The last few tokens of
// a sequence (an n-gram) are looked up earlier in the same sequence, prompt
// and generated text; the tokens that followed the most recent earlier
// occurrence are proposed as what comes next. It pays where the output
// repeats its context: quoting, copying, editing code.
#ifndef STRATA_RUNTIME_PROMPTLOOKUP_H
#define STRATA_RUNTIME_PROMPTLOOKUP_H

#include <cstdint>
#include <vector>

namespace strata {

/// The n-gram lengths tried, longest first.
constexpr int64_t kLookupMaxNgram = 4;
constexpr int64_t kLookupMinNgram = 2;

/// Up to `count` tokens that followed the most recent earlier occurrence of
/// the longest suffix of `context` of kLookupMaxNgram down to
/// kLookupMinNgram tokens that occurs earlier; empty when none does.
std::vector<int32_t> lookupProposals(const std::vector<int32_t> &context,
                                     int64_t count);

} // namespace strata

#endif // STRATA_RUNTIME_PROMPTLOOKUP_H
