#include "tools/serve/BenchServe.h"

#include "tools/serve/BenchServeLoad.h"
#include "tools/serve/BenchServeReport.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <optional>

namespace strata::serve {

namespace {

using tools::parseInteger;
using tools::parseNumber;

constexpr int64_t kMaxRequests = 1000000;
constexpr int64_t kMaxLength = 1 << 20;
constexpr double kMaxTimeoutSeconds = 7 * 24 * 3600;
// The warm-up's prompts come from a stream of their own, so that the
// measured prompts are the same with any --warmup.
constexpr uint64_t kWarmupStream = 0x5bd1e9955bd1e995ull;

/// floor(len * factor) and ceil(len * factor), robust to the rounding of
/// the product (10 * 1.1 is 11.000000000000002 in doubles; its ceiling
/// must stay 11).
int64_t floorOf(int64_t len, double factor) {
  return int64_t(std::floor(double(len) * factor + 1e-9));
}
int64_t ceilOf(int64_t len, double factor) {
  return int64_t(std::ceil(double(len) * factor - 1e-9));
}

/// Reads the integer option `name` in [lo, hi] into `out` when it is
/// given; false with `error` naming it otherwise.
bool integerOption(const tools::ArgParser &parser, const char *name, int64_t lo,
                   int64_t hi, const std::string &what, int64_t &out,
                   std::string &error) {
  if (!parser.has(name) || parseInteger(parser.get(name), lo, hi, out))
    return true;
  error = std::string("--") + name + " expects an integer in [" +
          std::to_string(lo) + ", " + std::to_string(hi) + "]" + what +
          ", got '" + parser.get(name) + "'";
  return false;
}

/// The shortest prompt, and where its length comes from.
std::string shortestPrompt(const BenchServeSettings &s) {
  std::string text = std::to_string(s.minInputLen()) + " tokens";
  if (s.rangeRatio > 0) {
    char ratio[32];
    std::snprintf(ratio, sizeof(ratio), "%g", s.rangeRatio);
    text += ": --input-len " + std::to_string(s.inputLen) +
            " with --random-range-ratio " + ratio;
  }
  return text;
}

/// The served model's id and context length, from GET /v1/models; exit
/// code 1 after a message when no OpenAI-compatible server answers.
int askForModel(const BenchServeSettings &s, const std::string &tool,
                std::string &model, std::optional<int64_t> &contextLength) {
  std::string body, error;
  const int status = getFromServer(s, "/v1/models", body, error);
  if (status == 0) {
    std::fprintf(stderr, "%s: error: no answer from %s (GET /v1/models: %s)\n",
                 tool.c_str(), s.url.c_str(), error.c_str());
    return 1;
  }
  const nlohmann::json json =
      nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  const nlohmann::json *first = nullptr;
  if (json.is_object() && json.contains("data") && json["data"].is_array() &&
      !json["data"].empty() && json["data"][0].is_object() &&
      json["data"][0].contains("id") && json["data"][0]["id"].is_string())
    first = &json["data"][0];
  if (status != 200 || !first) {
    std::fprintf(stderr,
                 "%s: error: %s is not an OpenAI-compatible server: GET "
                 "/v1/models answered HTTP %d%s\n",
                 tool.c_str(), s.url.c_str(), status,
                 status == 200 ? " without a model in \"data\"" : "");
    return 1;
  }
  model = (*first)["id"].get<std::string>();
  if (first->contains("max_model_len") &&
      (*first)["max_model_len"].is_number_integer())
    contextLength = (*first)["max_model_len"].get<int64_t>();
  return 0;
}

} // namespace

int64_t BenchServeSettings::minInputLen() const {
  return std::max<int64_t>(1, floorOf(inputLen, 1 - rangeRatio));
}
int64_t BenchServeSettings::maxInputLen() const {
  return ceilOf(inputLen, 1 + rangeRatio);
}
int64_t BenchServeSettings::minOutputLen() const {
  return std::max<int64_t>(1, floorOf(outputLen, 1 - rangeRatio));
}
int64_t BenchServeSettings::maxOutputLen() const {
  return ceilOf(outputLen, 1 + rangeRatio);
}
int64_t BenchServeSettings::inFlight(int64_t requests) const {
  return std::max<int64_t>(
      1, std::min(requests, maxConcurrency ? maxConcurrency : kMaxInFlight));
}

void addBenchServeOptions(tools::ArgParser &parser, bool withUrl) {
  if (withUrl)
    parser.addOption("url", "URL",
                     "the server: http://HOST:PORT (default "
                     "http://127.0.0.1:8000)");
  parser.addOption("vocab", "N",
                   "required: the served model's vocabulary size; prompt "
                   "token ids are drawn uniformly from [2, N)");
  parser.addOption("num-requests", "N", "requests measured (default 1000)");
  parser.addOption("input-len", "N", "prompt tokens (default 1024)");
  parser.addOption("output-len", "N",
                   "tokens generated per request (default 128; EOS is "
                   "ignored)");
  parser.addOption("random-range-ratio", "R",
                   "draw each length uniformly from [len*(1-R), len*(1+R)] "
                   "(0 <= R < 1; default 0: fixed lengths)");
  parser.addOption("request-rate", "RPS",
                   "Poisson arrivals at RPS requests per second, or inf: "
                   "all at once (default inf)");
  parser.addOption("max-concurrency", "N",
                   "at most N requests in flight (default: no cap but the "
                   "client's 4096 threads)");
  parser.addOption("shared-prefix-len", "N",
                   "every prompt starts with the same N tokens, which a "
                   "prefix cache can reuse (default 0)");
  parser.addOption("seed", "S",
                   "seed of the prompts, lengths and arrivals (default 0)");
  parser.addOption("warmup", "N",
                   "requests sent first, all at once, and not counted "
                   "(default 0)");
  parser.addOption("timeout", "SECONDS",
                   "a request that takes longer fails (default 600; "
                   "connecting may take at most 10)");
  parser.addFlag("json", "print one JSON object instead of markdown tables");
}

bool parseServerUrl(const std::string &url, std::string &host, int &port) {
  const std::string scheme = "http://";
  if (url.compare(0, scheme.size(), scheme) != 0)
    return false;
  std::string rest = url.substr(scheme.size());
  if (!rest.empty() && rest.back() == '/')
    rest.pop_back();
  const size_t colon = rest.rfind(':');
  if (colon == std::string::npos || colon == 0)
    return false;
  for (size_t i = 0; i < colon; ++i) {
    const unsigned char c = (unsigned char)rest[i];
    if (!std::isalnum(c) && c != '.' && c != '-' && c != '_')
      return false;
  }
  const std::string digits = rest.substr(colon + 1);
  int64_t value = 0;
  if (digits.find_first_not_of("0123456789") != std::string::npos ||
      !parseInteger(digits, 1, 65535, value))
    return false;
  host = rest.substr(0, colon);
  port = int(value);
  return true;
}

int parseBenchServeSettings(const std::string &tool,
                            const tools::ArgParser &parser,
                            const std::string &urlOption,
                            BenchServeSettings &s) {
  auto usage = [&](const std::string &message) {
    std::fprintf(stderr, "%s: error: %s\n", tool.c_str(), message.c_str());
    return 2;
  };
  const std::string url = parser.get(urlOption, kDefaultBenchUrl);
  if (!parseServerUrl(url, s.host, s.port))
    return usage("--" + urlOption +
                 " expects http://HOST:PORT (a port in [1, 65535], nothing "
                 "after it but '/'), got '" +
                 url + "'");
  s.url = "http://" + s.host + ":" + std::to_string(s.port);
  std::string error;
  if (!integerOption(parser, "num-requests", 1, kMaxRequests, "", s.numRequests,
                     error) ||
      !integerOption(parser, "input-len", 1, kMaxLength, "", s.inputLen,
                     error) ||
      !integerOption(parser, "output-len", 1, kMaxLength, "", s.outputLen,
                     error))
    return usage(error);
  if (parser.has("random-range-ratio") &&
      (!parseNumber(parser.get("random-range-ratio"), s.rangeRatio) ||
       s.rangeRatio < 0 || s.rangeRatio >= 1))
    return usage("--random-range-ratio expects a number in [0, 1), got '" +
                 parser.get("random-range-ratio") + "'");
  if (parser.has("request-rate") && parser.get("request-rate") != "inf" &&
      (!parseNumber(parser.get("request-rate"), s.requestRate) ||
       s.requestRate <= 0))
    return usage("--request-rate expects a positive number of requests per "
                 "second or 'inf', got '" +
                 parser.get("request-rate") + "'");
  if (!integerOption(parser, "max-concurrency", 1, kMaxInFlight, "",
                     s.maxConcurrency, error) ||
      !integerOption(parser, "shared-prefix-len", 0, kMaxLength, "",
                     s.sharedPrefixLen, error))
    return usage(error);
  if (s.sharedPrefixLen > s.minInputLen())
    return usage("--shared-prefix-len " + std::to_string(s.sharedPrefixLen) +
                 " is longer than the shortest prompt (" + shortestPrompt(s) +
                 ")");
  int64_t seed = 0;
  if (!integerOption(parser, "seed", 0, INT64_MAX, "", seed, error))
    return usage(error);
  s.seed = uint64_t(seed);
  if (!parser.has("vocab"))
    return usage("--vocab is required: the served model's vocabulary size "
                 "(prompt token ids are drawn from [2, N))");
  if (!integerOption(parser, "vocab", 3, INT32_MAX,
                     " (prompt token ids are drawn from [2, N))", s.vocab,
                     error) ||
      !integerOption(parser, "warmup", 0, kMaxRequests, "", s.warmup, error))
    return usage(error);
  if (parser.has("timeout") &&
      (!parseNumber(parser.get("timeout"), s.timeoutSeconds) ||
       s.timeoutSeconds <= 0 || s.timeoutSeconds > kMaxTimeoutSeconds))
    return usage("--timeout expects a number of seconds in (0, 604800], "
                 "got '" +
                 parser.get("timeout") + "'");
  s.json = parser.has("json");
  return 0;
}

int runBenchServe(const BenchServeSettings &s, const std::string &tool,
                  const std::string &version) {
  // A server that closes a connection while a request is written must
  // fail that request, not end the process.
  std::signal(SIGPIPE, SIG_IGN);
  std::string model;
  std::optional<int64_t> contextLength;
  if (int code = askForModel(s, tool, model, contextLength))
    return code;
  const int64_t positions = s.maxInputLen() + s.maxOutputLen();
  if (contextLength && positions > *contextLength) {
    std::fprintf(stderr,
                 "%s: error: prompts of up to %lld tokens and outputs of up "
                 "to %lld (--input-len, --output-len) need %lld positions; "
                 "the served model '%s' has %lld (max_model_len)\n",
                 tool.c_str(), (long long)s.maxInputLen(),
                 (long long)s.maxOutputLen(), (long long)positions,
                 model.c_str(), (long long)*contextLength);
    return 2;
  }

  if (s.warmup > 0) {
    std::vector<PlannedRequest> warm =
        planRequests(s, s.warmup, s.seed ^ kWarmupStream);
    for (PlannedRequest &r : warm)
      r.arrival = 0;
    const BenchServeReport w =
        summarize(s, sendRequests(s, warm, model, s.inFlight(s.warmup),
                                  tool + " warm-up"));
    if (w.failed > 0)
      std::fprintf(stderr,
                   "%s: warning: %lld of %lld warm-up requests failed; the "
                   "first: %s\n",
                   tool.c_str(), (long long)w.failed, (long long)s.warmup,
                   w.firstError.c_str());
  }

  const std::vector<PlannedRequest> requests =
      planRequests(s, s.numRequests, s.seed);
  BenchServeReport report = summarize(
      s, sendRequests(s, requests, model, s.inFlight(s.numRequests), tool));
  report.tool = tool;
  report.version = version;
  report.model = model;
  if (s.json)
    printReportJson(stdout, report);
  else
    printReportMarkdown(stdout, report);
  std::fflush(stdout);
  if (report.completed == 0) {
    std::fprintf(stderr, "%s: error: all %lld requests failed; the first: %s\n",
                 tool.c_str(), (long long)report.failed,
                 report.firstError.c_str());
    return 1;
  }
  if (report.failed > 0)
    std::fprintf(stderr,
                 "%s: warning: %lld of %lld requests failed; the first: %s\n",
                 tool.c_str(), (long long)report.failed,
                 (long long)s.numRequests, report.firstError.c_str());
  return 0;
}

} // namespace strata::serve
