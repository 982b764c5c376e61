// The load of `strata bench-serve`: the requests of a run (prompts of
// random token ids, output lengths, arrival times), and the client threads
// that send them as streamed completions and time every answer.
#ifndef STRATA_TOOLS_SERVE_BENCHSERVELOAD_H
#define STRATA_TOOLS_SERVE_BENCHSERVELOAD_H

#include "tools/serve/BenchServe.h"
#include "tools/serve/BenchServeStream.h"

#include <cstdint>
#include <string>
#include <vector>

namespace strata::serve {

struct PlannedRequest {
  std::vector<int32_t> prompt;
  int64_t maxTokens = 0;
  /// When to send it, in seconds after the run begins.
  double arrival = 0;
};

/// `count` requests drawn from `seed`: lengths uniform in the settings'
/// ranges, the settings' shared prefix then ids uniform in [2, vocab), and
/// Poisson arrivals at the request rate (all at 0 when it is infinite).
/// The prompts do not depend on the rate, so runs at several rates send
/// the same prompts.
std::vector<PlannedRequest> planRequests(const BenchServeSettings &settings,
                                         int64_t count, uint64_t seed);

/// The body of a request: the prompt as ids, streamed with the usage,
/// greedy, ignoring EOS so that exactly maxTokens are generated; `model`
/// (the served model's id) is left out when empty.
std::string requestBody(const PlannedRequest &request,
                        const std::string &model);

struct LoadResult {
  std::vector<RequestOutcome> outcomes; ///< in the order of the requests
  /// From the start of the run to the end of the last answer.
  double seconds = 0;
};

/// Sends the requests at their arrival times, at most `inFlight` at once
/// (a request whose time has come waits for a free place, and its timings
/// start when it is sent). `label` prefixes the progress line shown on
/// stderr when it is a terminal.
LoadResult sendRequests(const BenchServeSettings &settings,
                        const std::vector<PlannedRequest> &requests,
                        const std::string &model, int64_t inFlight,
                        const std::string &label);

/// GET `path` with the settings' timeouts: the status (0 when no answer
/// came: `error` says why) and the body.
int getFromServer(const BenchServeSettings &settings, const std::string &path,
                  std::string &body, std::string &error);

} // namespace strata::serve

#endif // STRATA_TOOLS_SERVE_BENCHSERVELOAD_H
