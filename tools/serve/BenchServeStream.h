// The client side of one streamed completion in `strata bench-serve`: the
// Server-Sent Events of the response body, read as its bytes arrive, and
// what they say (the time of each chunk carrying text, the usage, an error
// event, the closing [DONE]).
#ifndef STRATA_TOOLS_SERVE_BENCHSERVESTREAM_H
#define STRATA_TOOLS_SERVE_BENCHSERVESTREAM_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace strata::serve {

/// What one request gave: timings in seconds from the moment it was sent.
struct RequestOutcome {
  bool ok = false;
  /// Why the request failed: an HTTP status and the server's message, an
  /// error event, a broken stream, a timeout.
  std::string error;
  /// The first chunk carrying text (time to first token).
  double ttft = 0;
  /// The last event ([DONE]): the end-to-end latency.
  double latency = 0;
  /// Gaps between consecutive chunks carrying text (inter-token latency;
  /// a chunk may carry several tokens).
  std::vector<double> itl;
  int64_t promptTokens = 0;
  int64_t outputTokens = 0;
};

class CompletionStream {
public:
  /// Bytes of the response body, received `seconds` after the request was
  /// sent. Events may be split anywhere between calls.
  void feed(const char *data, size_t size, double seconds);
  /// The outcome once the body has ended: ok when the stream held no error
  /// event, ended with [DONE], and gave its usage.
  RequestOutcome finish() const;

  bool done() const { return done_; }
  bool failed() const { return !error_.empty(); }

private:
  void line(std::string text, double seconds);
  void event(const std::string &data, double seconds);

  std::string pending_; ///< bytes of a line not complete yet
  std::string data_;    ///< the data lines of the current event
  bool hasData_ = false;
  bool done_ = false;
  std::string error_;
  std::vector<double> textTimes_;
  /// The chunk with the finish reason: the first token's time for a
  /// request whose tokens decoded to no text at all.
  std::optional<double> finishTime_;
  double doneTime_ = 0;
  int64_t promptTokens_ = -1;
  int64_t completionTokens_ = -1;
};

} // namespace strata::serve

#endif // STRATA_TOOLS_SERVE_BENCHSERVESTREAM_H
