// The server's counters and latency histograms, written as the Prometheus
// text format (GET /metrics). Handler threads and the engine thread record
// into it; one mutex guards everything (a few updates per token).
#ifndef STRATA_TOOLS_SERVE_SERVEMETRICS_H
#define STRATA_TOOLS_SERVE_SERVEMETRICS_H

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace strata::serve {

/// A Prometheus histogram: counts per upper bound (cumulative when
/// written), the sum and the count of the observations.
class Histogram {
public:
  explicit Histogram(std::vector<double> bounds);
  void observe(double value);
  /// The `_bucket`, `_sum` and `_count` lines of `name`.
  std::string format(const std::string &name) const;
  uint64_t count() const { return count_; }

private:
  std::vector<double> bounds_;
  std::vector<uint64_t> counts_; // one per bound, plus +Inf
  double sum_ = 0.0;
  uint64_t count_ = 0;
};

/// What the engine holds at the moment /metrics is read.
struct EngineLoad {
  int64_t running = 0, waiting = 0;
  int64_t kvBlocks = 0, freeKvBlocks = 0;
  int64_t steps = 0, preemptions = 0;
  int64_t promptTokensFed = 0; ///< recomputed ones included
  int64_t prefixQueryTokens = 0, prefixHitTokens = 0;
  /// Speculative decoding (--spec-lookup, --draft): verify steps, tokens
  /// proposed, kept.
  int64_t verifySteps = 0, specProposedTokens = 0, specAcceptedTokens = 0;
  /// Decode steps and how many replayed a CUDA graph; graphs captured.
  int64_t decodeSteps = 0, graphReplays = 0, graphCaptures = 0;
};

class ServeMetrics {
public:
  ServeMetrics();

  /// A request refused before it reached the queue: "invalid" (400),
  /// "queue_full" (429), "unavailable" (503).
  void rejected(const std::string &reason);
  /// A request that reached the engine, with its prompt's tokens.
  void admitted(int64_t promptTokens);
  /// A request's token, `sinceLast` seconds after its previous one (or
  /// after its arrival for the first token).
  void token(bool first, double sinceLast);
  /// A request that ended: "stop", "length", "cancelled" or "error",
  /// `seconds` after it arrived.
  void finished(const std::string &reason, double seconds);

  /// Every metric in the Prometheus text format (version 0.0.4).
  std::string prometheus(const EngineLoad &load) const;

private:
  mutable std::mutex mutex_;
  std::map<std::string, uint64_t> rejected_, finished_;
  uint64_t promptTokens_ = 0, generationTokens_ = 0;
  Histogram ttft_, itl_, latency_;
};

} // namespace strata::serve

#endif // STRATA_TOOLS_SERVE_SERVEMETRICS_H
