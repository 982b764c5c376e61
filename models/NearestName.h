// "Did you mean" suggestions for names the user typed: option names on a
// command line, keys and enum values in a model file, pass names.
//
// Kept in models/, the folder that depends on no other strata folder, so
// that the importers below and the tools above share one search and one
// distance: the same typo gets the same suggestion everywhere.
#ifndef STRATA_MODELS_NEARESTNAME_H
#define STRATA_MODELS_NEARESTNAME_H

#include <cstddef>
#include <string>
#include <vector>

namespace strata {

/// Optimal string alignment distance: insertions, deletions, substitutions
/// and swaps of two adjacent characters (the most common typo) cost one
/// each.
size_t editDistance(const std::string &a, const std::string &b);

/// The candidate closest to `name` (compared in lower case) when it is a
/// plausible typo: at most max(2, a third of the name's length) edits away.
/// Failing that, the first candidate that `name` (three characters or more)
/// begins, as an abbreviation ("sliding" for "sliding_attention"). Ties go
/// to the earlier candidate. "" when nothing qualifies.
std::string nearestName(const std::string &name,
                        const std::vector<std::string> &candidates);

} // namespace strata

#endif // STRATA_MODELS_NEARESTNAME_H
