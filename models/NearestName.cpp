#include "models/NearestName.h"

#include <algorithm>
#include <cstdint>

namespace strata {

size_t editDistance(const std::string &a, const std::string &b) {
  // Three rows of the table are enough (the swap looks two rows back), so
  // memory follows the candidate (`b`), not the typed name.
  std::vector<size_t> before(b.size() + 1), prev(b.size() + 1),
      row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j)
    prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      row[j] = std::min({prev[j] + 1, row[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        row[j] = std::min(row[j], before[j - 2] + 1);
    }
    std::swap(before, prev);
    std::swap(prev, row);
  }
  return prev[b.size()];
}

std::string nearestName(const std::string &name,
                        const std::vector<std::string> &candidates) {
  std::string lname = name;
  for (char &c : lname)
    if (c >= 'A' && c <= 'Z')
      c = static_cast<char>(c - 'A' + 'a');
  // A third of the length catches a dropped plural or a swapped pair in
  // long names without proposing unrelated short ones.
  size_t threshold = std::max<size_t>(2, lname.size() / 3);
  std::string best;
  size_t bestDistance = SIZE_MAX;
  for (const std::string &c : candidates) {
    // The distance is at least the difference in length: a name far longer
    // than every candidate (a file can hold megabytes of one) is no typo
    // of any, and comparing would cost its length times theirs.
    size_t gap =
        std::max(lname.size(), c.size()) - std::min(lname.size(), c.size());
    if (gap > threshold)
      continue;
    size_t d = editDistance(lname, c);
    if (d < bestDistance) {
      bestDistance = d;
      best = c;
    }
  }
  if (!best.empty() && bestDistance <= threshold)
    return best;
  if (lname.size() >= 3)
    for (const std::string &c : candidates)
      if (c.compare(0, lname.size(), lname) == 0)
        return c;
  return "";
}

} // namespace strata
