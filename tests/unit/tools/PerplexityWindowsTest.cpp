// The windows strata perplexity scores: consecutive pieces of the context
// length, the last one shorter, and none that would predict nothing.
#include "tools/common/PerplexityCommand.h"

#include <catch2/catch.hpp>

using strata::tools::perplexityWindows;
using Windows = std::vector<std::pair<int64_t, int64_t>>;

TEST_CASE("perplexity windows cut the ids into pieces of the context") {
  CHECK(perplexityWindows(8, 4) == Windows{{0, 4}, {4, 8}});
  CHECK(perplexityWindows(10, 4) == Windows{{0, 4}, {4, 8}, {8, 10}});
  CHECK(perplexityWindows(3, 16) == Windows{{0, 3}});
  CHECK(perplexityWindows(2, 2) == Windows{{0, 2}});
}

TEST_CASE("a last window of one token is left out") {
  CHECK(perplexityWindows(9, 4) == Windows{{0, 4}, {4, 8}});
  CHECK(perplexityWindows(5, 2) == Windows{{0, 2}, {2, 4}});
  CHECK(perplexityWindows(1, 4).empty());
  CHECK(perplexityWindows(0, 4).empty());
}
