// The one "did you mean" search: the same typo gets the same suggestion from
// the command line, the model file reader and the pass list.
#include "models/NearestName.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using strata::editDistance;
using strata::nearestName;

TEST_CASE("edit distance counts insertions, deletions and substitutions") {
  CHECK(editDistance("", "") == 0);
  CHECK(editDistance("", "abc") == 3);
  CHECK(editDistance("abc", "") == 3);
  CHECK(editDistance("same", "same") == 0);
  CHECK(editDistance("kitten", "sitting") == 3);
  CHECK(editDistance("num_kv_head", "num_kv_heads") == 1);
}

TEST_CASE("edit distance counts a swap of neighbours as one edit") {
  CHECK(editDistance("emti", "emit") == 1);
  CHECK(editDistance("strata-fuse-qvk", "strata-fuse-qkv") == 1);
  // Optimal string alignment: a swapped pair is not edited again, so "ca"
  // to "abc" is three edits, not the two of unrestricted transpositions.
  CHECK(editDistance("ca", "abc") == 3);
}

TEST_CASE("the nearest name is the closest plausible typo") {
  std::vector<std::string> options = {"emit", "output", "no-graphs"};
  CHECK(nearestName("emti", options) == "emit");
  CHECK(nearestName("ouput", options) == "output");
  CHECK(nearestName("no-graph", options) == "no-graphs");
  // Compared in lower case: a key typed in capitals still finds its name.
  CHECK(nearestName("OUTPUT", options) == "output");
}

TEST_CASE("a name far from every candidate gets no suggestion") {
  std::vector<std::string> options = {"emit", "output", "no-graphs"};
  CHECK(nearestName("completely-different", options).empty());
  CHECK(nearestName("xyz", options).empty());
  CHECK(nearestName("", options).empty());
  CHECK(nearestName("emit", {}).empty());
  // Far longer than every candidate: skipped without being compared.
  CHECK(nearestName(std::string(100000, 'e'), options).empty());
}

TEST_CASE("the allowed distance grows with the name's length") {
  // Two edits are always allowed ...
  CHECK(nearestName("ab", {"abcd"}) == "abcd");
  // ... three only from nine characters on (a third of the length).
  CHECK(nearestName("max-tokxx", {"max-tokens"}) == "max-tokens");
  CHECK(nearestName("mox", {"maxyz"}).empty());
}

TEST_CASE("ties go to the earlier candidate") {
  CHECK(nearestName("cat", {"bat", "hat"}) == "bat");
  CHECK(nearestName("cat", {"hat", "bat"}) == "hat");
}

TEST_CASE("an abbreviation of three characters or more finds its name") {
  std::vector<std::string> kinds = {"full_attention", "sliding_attention",
                                    "linear_attention"};
  CHECK(nearestName("sliding", kinds) == "sliding_attention");
  CHECK(nearestName("lin", kinds) == "linear_attention");
  // Two characters are too few to be a deliberate abbreviation.
  CHECK(nearestName("li", {"linear_attention"}).empty());
}
