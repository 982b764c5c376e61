// Prompt lookup (runtime/PromptLookup.h): the tokens after the most recent
// earlier occurrence of the sequence's last n-gram, the longest n-gram
// first, none without a match.
#include "runtime/PromptLookup.h"

#include <catch2/catch.hpp>

using strata::lookupProposals;
using V = std::vector<int32_t>;

TEST_CASE("prompt lookup proposes what followed the last n-gram before") {
  // "1 2 3" occurred before, followed by 4 5 6 7.
  const V context{9, 1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3};
  CHECK(lookupProposals(context, 3) == V{4, 5, 6});
  CHECK(lookupProposals(context, 16) == V{4, 5, 6, 7, 8, 1, 2, 3});
  CHECK(lookupProposals(context, 0).empty());
}

TEST_CASE("prompt lookup prefers longer n-grams, then later occurrences") {
  // The 2-gram "2 3" occurs twice; the 3-gram "1 2 3" once, earlier.
  const V context{1, 2, 3, 10, 11, 7, 2, 3, 20, 21, 1, 2, 3};
  CHECK(lookupProposals(context, 2) == V{10, 11});
  // Only the 2-gram matches: the most recent occurrence wins.
  const V later{2, 3, 10, 7, 2, 3, 20, 5, 2, 3};
  CHECK(lookupProposals(later, 2) == V{20, 5});
}

TEST_CASE("prompt lookup needs a match of at least the shortest n-gram") {
  CHECK(lookupProposals(V{1, 2, 3, 4, 5}, 4).empty());
  // A single repeated token is not an n-gram of two.
  CHECK(lookupProposals(V{7, 1, 2, 7}, 4).empty());
  CHECK(lookupProposals(V{}, 4).empty());
  CHECK(lookupProposals(V{1}, 4).empty());
  // A run of one token overlaps itself.
  CHECK(lookupProposals(V{5, 5, 5, 5}, 3) == V{5});
}
