// Chi-square tests for the statistical checks of sampling: goodness of fit
// of counts against a distribution, and two samples of the same size drawn
// from one distribution. Bins too thin for the chi-square approximation are
// pooled into one. The p-value uses the Wilson-Hilferty normal
// approximation of the chi-square distribution, ample at the thresholds
// the tests use (1e-3 and above).
#ifndef STRATA_TESTS_UNIT_CHISQUARE_H
#define STRATA_TESTS_UNIT_CHISQUARE_H

#include <cmath>
#include <cstdint>
#include <map>
#include <vector>

namespace strata::testing {

/// P(X >= statistic) for X chi-square with `df` degrees of freedom.
inline double chiSquarePValue(double statistic, int64_t df) {
  if (df <= 0)
    return 1.0;
  const double k = double(df);
  const double z = (std::cbrt(statistic / k) - (1.0 - 2.0 / (9.0 * k))) /
                   std::sqrt(2.0 / (9.0 * k));
  return 0.5 * std::erfc(z / std::sqrt(2.0));
}

struct ChiSquare {
  double statistic = 0.0;
  int64_t df = 0;
  double pValue = 1.0;
};

/// `observed[v]` draws of outcome v against probabilities `probs[v]`
/// (summing to 1). Outcomes expected fewer than 5 times are pooled.
inline ChiSquare chiSquareFit(const std::vector<int64_t> &observed,
                              const std::vector<double> &probs) {
  int64_t n = 0;
  for (int64_t c : observed)
    n += c;
  ChiSquare out;
  double pooledExpected = 0.0;
  int64_t pooledObserved = 0, bins = 0;
  for (size_t v = 0; v < probs.size(); ++v) {
    const double expected = probs[v] * double(n);
    if (expected < 5.0) {
      pooledExpected += expected;
      pooledObserved += observed[v];
      continue;
    }
    const double d = double(observed[v]) - expected;
    out.statistic += d * d / expected;
    ++bins;
  }
  if (pooledExpected > 0.0) {
    const double d = double(pooledObserved) - pooledExpected;
    out.statistic += d * d / pooledExpected;
    ++bins;
  }
  out.df = bins - 1;
  out.pValue = chiSquarePValue(out.statistic, out.df);
  return out;
}

/// Two samples of equal size, as counts per outcome: whether they come
/// from one distribution. Outcomes seen fewer than 10 times in both
/// together are pooled.
template <typename Key>
ChiSquare chiSquareTwoSample(const std::map<Key, int64_t> &a,
                             const std::map<Key, int64_t> &b) {
  std::map<Key, std::pair<int64_t, int64_t>> both;
  for (const auto &[key, count] : a)
    both[key].first += count;
  for (const auto &[key, count] : b)
    both[key].second += count;
  ChiSquare out;
  int64_t pooledA = 0, pooledB = 0, bins = 0;
  auto add = [&](int64_t x, int64_t y) {
    const double d = double(x - y);
    out.statistic += d * d / double(x + y);
    ++bins;
  };
  for (const auto &[key, counts] : both) {
    if (counts.first + counts.second < 10) {
      pooledA += counts.first;
      pooledB += counts.second;
      continue;
    }
    add(counts.first, counts.second);
  }
  if (pooledA + pooledB > 0)
    add(pooledA, pooledB);
  out.df = bins - 1;
  out.pValue = chiSquarePValue(out.statistic, out.df);
  return out;
}

} // namespace strata::testing

#endif // STRATA_TESTS_UNIT_CHISQUARE_H
