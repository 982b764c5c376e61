#include "runtime/PromptLookup.h"

#include <algorithm>

namespace strata {

std::vector<int32_t> lookupProposals(const std::vector<int32_t> &context,
                                     int64_t count) {
  const int64_t size = int64_t(context.size());
  if (count <= 0)
    return {};
  for (int64_t n = std::min(kLookupMaxNgram, size - 1); n >= kLookupMinNgram;
       --n) {
    const int32_t *suffix = context.data() + size - n;
    // Earlier occurrences (they may overlap the suffix), the most recent
    // first: it is the likeliest to continue alike.
    for (int64_t start = size - n - 1; start >= 0; --start) {
      if (!std::equal(suffix, suffix + n, context.data() + start))
        continue;
      const int64_t from = start + n;
      const int64_t to = std::min(size, from + count);
      return std::vector<int32_t>(context.begin() + from,
                                  context.begin() + to);
    }
  }
  return {};
}

} // namespace strata
