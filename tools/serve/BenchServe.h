// `strata bench-serve` and `strata-bench --serve URL`: a load generator for
// an OpenAI-compatible server (docs/serving.md, "Benchmarking a server").
// Prompts of random token ids go out as streamed completions on a schedule
// (Poisson arrivals, a cap on the requests in flight); each answer is timed,
// and the run is summarized as throughput and TTFT / TPOT / ITL /
// end-to-end latency statistics, as vLLM's benchmark_serving reports them.
// A client only: no engine and no MLIR, so the runtime-only strata-bench
// links it.
#ifndef STRATA_TOOLS_SERVE_BENCHSERVE_H
#define STRATA_TOOLS_SERVE_BENCHSERVE_H

#include "tools/common/ArgParser.h"

#include <cstdint>
#include <limits>
#include <string>

namespace strata::serve {

constexpr const char *kDefaultBenchUrl = "http://127.0.0.1:8000";
/// Requests in flight at most: each is one client thread.
constexpr int64_t kMaxInFlight = 4096;

struct BenchServeSettings {
  /// The server, as given (for the report) and split.
  std::string url = kDefaultBenchUrl;
  std::string host = "127.0.0.1";
  int port = 8000;
  int64_t numRequests = 1000;
  int64_t inputLen = 1024;
  int64_t outputLen = 128;
  /// Lengths are uniform in [len * (1 - r), len * (1 + r)].
  double rangeRatio = 0;
  /// Requests per second of the Poisson arrivals; infinity sends every
  /// request at once.
  double requestRate = std::numeric_limits<double>::infinity();
  /// At most this many requests in flight; 0: no cap but kMaxInFlight.
  int64_t maxConcurrency = 0;
  /// The first this-many tokens of every prompt are the same.
  int64_t sharedPrefixLen = 0;
  uint64_t seed = 0;
  /// Prompt ids are drawn from [2, vocab).
  int64_t vocab = 0;
  int64_t warmup = 0;
  double timeoutSeconds = 600;
  bool json = false;

  int64_t minInputLen() const;
  int64_t maxInputLen() const;
  int64_t minOutputLen() const;
  int64_t maxOutputLen() const;
  /// The requests in flight at most: the cap, the request count, the
  /// client's threads.
  int64_t inFlight(int64_t requests) const;
};

/// --num-requests, --input-len, --output-len, --random-range-ratio,
/// --request-rate, --max-concurrency, --shared-prefix-len, --seed, --vocab,
/// --warmup, --json, --timeout, and --url unless `withUrl` is false
/// (strata-bench takes the URL as the value of --serve).
void addBenchServeOptions(tools::ArgParser &parser, bool withUrl);

/// Reads and checks the options; the server's address is the value of
/// `urlOption` ("url", or strata-bench's "serve"), kDefaultBenchUrl when
/// it is not given. Returns 0, or 2 after one message naming the option,
/// prefixed by `tool`.
int parseBenchServeSettings(const std::string &tool,
                            const tools::ArgParser &parser,
                            const std::string &urlOption,
                            BenchServeSettings &settings);

/// Splits "http://HOST:PORT" (a trailing '/' allowed): HOST letters,
/// digits, '.', '-' and '_', PORT in [1, 65535]. False for anything else.
bool parseServerUrl(const std::string &url, std::string &host, int &port);

/// Asks the server for its model, runs the warm-up and the measured
/// requests, and prints the report on stdout (JSON with settings.json).
/// Returns 0; 1 when no server answers at the URL, when it is not an
/// OpenAI-compatible server, or when every measured request failed (after
/// the report); 2 when the lengths do not fit the served model's context.
int runBenchServe(const BenchServeSettings &settings, const std::string &tool,
                  const std::string &version);

} // namespace strata::serve

#endif // STRATA_TOOLS_SERVE_BENCHSERVE_H
