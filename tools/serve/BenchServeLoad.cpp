#include "tools/serve/BenchServeLoad.h"

#include <httplib.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <thread>

#include <unistd.h>

namespace strata::serve {

namespace {

using Clock = std::chrono::steady_clock;
using Json = nlohmann::json;

// Arrival times come from a stream of their own, so that the prompts do
// not change with the request rate.
constexpr uint64_t kArrivalStream = 0x9e3779b97f4a7c15ull;
// How long a connection may take to open: a server that is not there must
// not hold the run for the whole --timeout.
constexpr double kMaxConnectSeconds = 10;
// The part of an error response kept for its message.
constexpr size_t kMaxErrorBody = 4096;

/// Uniform draws computed from std::mt19937_64's output (which the
/// standard fixes), not through the library's distributions (which it
/// does not), so that a seed gives the same requests with any library.
class Draws {
public:
  explicit Draws(uint64_t seed) : rng_(seed) {}
  /// In [lo, hi]; the modulo's bias is below 2^-40 for these ranges.
  int64_t integer(int64_t lo, int64_t hi) {
    return lo + int64_t(rng_() % uint64_t(hi - lo + 1));
  }
  /// In [0, 1).
  double unit() { return double(rng_() >> 11) * 0x1.0p-53; }

private:
  std::mt19937_64 rng_;
};

double secondsBetween(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

void setTimeouts(httplib::Client &client, const BenchServeSettings &s) {
  auto asDuration = [](double seconds) {
    return std::chrono::duration_cast<std::chrono::microseconds>(
        std::chrono::duration<double>(seconds));
  };
  client.set_connection_timeout(
      asDuration(std::min(s.timeoutSeconds, kMaxConnectSeconds)));
  client.set_read_timeout(asDuration(s.timeoutSeconds));
  client.set_write_timeout(asDuration(s.timeoutSeconds));
}

/// The message of an error answer: OpenAI's error.message, else the start
/// of the body.
std::string errorMessage(const std::string &body) {
  const Json json = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (json.is_object() && json.contains("error")) {
    const Json &error = json["error"];
    if (error.is_object() && error.contains("message") &&
        error["message"].is_string())
      return error["message"].get<std::string>();
  }
  std::string text = body.substr(0, 200);
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text.empty() ? "(no body)" : text;
}

std::string timedOut(double seconds) {
  char text[64];
  std::snprintf(text, sizeof(text), "timed out after %g s (--timeout)",
                seconds);
  return text;
}

/// What an httplib failure means to the user (its own names are terse:
/// "Connection", "Read").
std::string describe(httplib::Error error, const BenchServeSettings &s) {
  switch (error) {
  case httplib::Error::Connection:
    return "could not connect; is a server listening there?";
  case httplib::Error::ConnectionTimeout: {
    char text[64];
    std::snprintf(text, sizeof(text), "no connection within %g s",
                  std::min(s.timeoutSeconds, kMaxConnectSeconds));
    return text;
  }
  case httplib::Error::Read:
    return "the connection closed or went silent while reading the answer";
  case httplib::Error::Write:
    return "the connection closed while sending the request";
  default:
    return httplib::to_string(error);
  }
}

/// Sends one request and reads its stream to the end.
RequestOutcome sendOne(httplib::Client &client, const BenchServeSettings &s,
                       const std::string &body) {
  httplib::Request req;
  req.method = "POST";
  req.path = "/v1/completions";
  req.set_header("Content-Type", "application/json");
  // A compressed stream could hold chunks back; none is asked for.
  req.set_header("Accept-Encoding", "identity");
  req.body = body;
  int status = 0;
  std::string errorBody;
  CompletionStream stream;
  bool expired = false;
  const Clock::time_point sent = Clock::now();
  req.response_handler = [&](const httplib::Response &res) {
    status = res.status;
    return true;
  };
  req.content_receiver = [&](const char *data, size_t size, uint64_t,
                             uint64_t) {
    const double now = secondsBetween(sent, Clock::now());
    if (status != 200) {
      if (errorBody.size() < kMaxErrorBody)
        errorBody.append(data,
                         std::min(size, kMaxErrorBody - errorBody.size()));
      return true;
    }
    stream.feed(data, size, now);
    // The server's keep-alive comments come every second, so a stream
    // that stalls is still checked here.
    if (now > s.timeoutSeconds) {
      expired = true;
      return false;
    }
    return true;
  };
  httplib::Response res;
  httplib::Error error = httplib::Error::Success;
  const bool answered = client.send(req, res, error);
  const double elapsed = secondsBetween(sent, Clock::now());

  RequestOutcome out;
  if (status == 200 && answered && !expired)
    out = stream.finish();
  else if (expired ||
           (error == httplib::Error::Read && elapsed >= s.timeoutSeconds))
    out.error = timedOut(s.timeoutSeconds);
  else if (status == 0)
    out.error = "no answer: " + describe(error, s);
  else if (status != 200)
    out.error =
        "HTTP " + std::to_string(status) + ": " + errorMessage(errorBody);
  else {
    out = stream.finish();
    if (!out.ok && !stream.failed())
      out.error = "the stream broke off before data: [DONE] (" +
                  describe(error, s) + ")";
  }
  return out;
}

} // namespace

std::vector<PlannedRequest> planRequests(const BenchServeSettings &s,
                                         int64_t count, uint64_t seed) {
  Draws draws(seed);
  std::vector<int32_t> prefix;
  for (int64_t t = 0; t < s.sharedPrefixLen; ++t)
    prefix.push_back(int32_t(draws.integer(2, s.vocab - 1)));
  std::vector<PlannedRequest> requests(size_t(std::max<int64_t>(count, 0)));
  for (PlannedRequest &r : requests) {
    const int64_t inputLen = draws.integer(s.minInputLen(), s.maxInputLen());
    r.maxTokens = draws.integer(s.minOutputLen(), s.maxOutputLen());
    r.prompt = prefix;
    for (int64_t t = s.sharedPrefixLen; t < inputLen; ++t)
      r.prompt.push_back(int32_t(draws.integer(2, s.vocab - 1)));
  }
  // Poisson arrivals: exponential gaps of mean 1 / rate; the first request
  // goes at once.
  Draws gaps(seed ^ kArrivalStream);
  double t = 0;
  for (PlannedRequest &r : requests) {
    r.arrival = t;
    if (std::isfinite(s.requestRate))
      t += -std::log1p(-gaps.unit()) / s.requestRate;
  }
  return requests;
}

std::string requestBody(const PlannedRequest &r, const std::string &model) {
  Json body = {
      {"prompt", r.prompt}, {"max_tokens", r.maxTokens},
      {"temperature", 0},   {"ignore_eos", true},
      {"stream", true},     {"stream_options", {{"include_usage", true}}}};
  if (!model.empty())
    body["model"] = model;
  return body.dump();
}

LoadResult sendRequests(const BenchServeSettings &s,
                        const std::vector<PlannedRequest> &requests,
                        const std::string &model, int64_t inFlight,
                        const std::string &label) {
  LoadResult result;
  result.outcomes.resize(requests.size());
  if (requests.empty())
    return result;
  std::vector<std::string> bodies;
  bodies.reserve(requests.size());
  for (const PlannedRequest &r : requests)
    bodies.push_back(requestBody(r, model));

  std::atomic<size_t> next{0}, finished{0};
  const Clock::time_point start = Clock::now();
  // Each thread takes the next request in arrival order, waits for its
  // time, and sends it; with every thread busy, a request whose time has
  // come waits for the first one free.
  auto client = [&] {
    httplib::Client http(s.host, s.port);
    setTimeouts(http, s);
    for (size_t i; (i = next++) < requests.size(); ++finished) {
      std::this_thread::sleep_until(
          start + std::chrono::duration_cast<Clock::duration>(
                      std::chrono::duration<double>(requests[i].arrival)));
      result.outcomes[i] = sendOne(http, s, bodies[i]);
    }
  };
  const size_t threads =
      size_t(std::clamp<int64_t>(inFlight, 1, int64_t(requests.size())));
  std::vector<std::thread> pool;
  for (size_t t = 0; t < threads; ++t)
    pool.emplace_back(client);
  if (isatty(fileno(stderr))) {
    for (size_t done; (done = finished.load()) < requests.size();) {
      std::fprintf(stderr, "\r%s: %zu of %zu requests done ", label.c_str(),
                   done, requests.size());
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    std::fprintf(stderr, "\r%70s\r", "");
  }
  for (std::thread &t : pool)
    t.join();
  result.seconds = secondsBetween(start, Clock::now());
  return result;
}

int getFromServer(const BenchServeSettings &s, const std::string &path,
                  std::string &body, std::string &error) {
  httplib::Client http(s.host, s.port);
  setTimeouts(http, s);
  const Clock::time_point sent = Clock::now();
  httplib::Result res = http.Get(path.c_str());
  if (!res) {
    error = res.error() == httplib::Error::Read &&
                    secondsBetween(sent, Clock::now()) >= s.timeoutSeconds
                ? timedOut(s.timeoutSeconds)
                : describe(res.error(), s);
    return 0;
  }
  body = res->body;
  return res->status;
}

} // namespace strata::serve
