// The pieces of `strata bench-serve` that need no server: the URL it
// accepts, the requests it plans (lengths, ids, shared prefix, arrivals),
// the body it sends, how it reads a stream into TTFT / ITL / usage
// whatever the byte boundaries, and the statistics of its report.
// tests/serve/bench_test.py runs it against `strata serve`.
#include "tools/serve/BenchServe.h"
#include "tools/serve/BenchServeLoad.h"
#include "tools/serve/BenchServeReport.h"
#include "tools/serve/BenchServeStream.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <set>

using namespace strata::serve;
using Catch::Matchers::WithinAbs;

namespace {

BenchServeSettings settingsFor(int64_t inputLen, int64_t outputLen,
                               double ratio, int64_t prefix, int64_t vocab) {
  BenchServeSettings s;
  s.inputLen = inputLen;
  s.outputLen = outputLen;
  s.rangeRatio = ratio;
  s.sharedPrefixLen = prefix;
  s.vocab = vocab;
  return s;
}

/// A completion chunk as strata serve writes it (usage: null, since the
/// request asks for the usage).
std::string chunk(const std::string &text, const char *finish = nullptr) {
  nlohmann::json body = {
      {"id", "cmpl-1"},
      {"object", "text_completion"},
      {"choices",
       {{{"index", 0},
         {"text", text},
         {"logprobs", nullptr},
         {"finish_reason",
          finish ? nlohmann::json(finish) : nlohmann::json(nullptr)}}}},
      {"usage", nullptr}};
  return "data: " + body.dump() + "\n\n";
}

std::string usageChunk(int64_t prompt, int64_t completion) {
  nlohmann::json body = {{"id", "cmpl-1"},
                         {"choices", nlohmann::json::array()},
                         {"usage",
                          {{"prompt_tokens", prompt},
                           {"completion_tokens", completion},
                           {"total_tokens", prompt + completion}}}};
  return "data: " + body.dump() + "\n\n";
}

/// The events of a stream with the time each arrives.
struct Timed {
  std::string bytes;
  double seconds;
};

std::vector<Timed> fullStream() {
  return {{chunk("He"), 0.100},         {": keep-alive\n\n", 0.120},
          {chunk("llo"), 0.150},        {chunk(" world"), 0.175},
          {chunk("", "length"), 0.180}, {usageChunk(16, 8), 0.181},
          {"data: [DONE]\n\n", 0.182}};
}

/// Feeds each event in pieces of `step` bytes (0: whole).
RequestOutcome readStream(const std::vector<Timed> &events, size_t step) {
  CompletionStream stream;
  for (const Timed &e : events) {
    const size_t n = step ? step : e.bytes.size();
    for (size_t at = 0; at < e.bytes.size(); at += n)
      stream.feed(e.bytes.data() + at, std::min(n, e.bytes.size() - at),
                  e.seconds);
  }
  return stream.finish();
}

} // namespace

TEST_CASE("the server's URL is http://HOST:PORT with an optional slash") {
  std::string host;
  int port = 0;
  REQUIRE(parseServerUrl("http://127.0.0.1:8000", host, port));
  CHECK(host == "127.0.0.1");
  CHECK(port == 8000);
  REQUIRE(parseServerUrl("http://gpu-node_3.example:65535/", host, port));
  CHECK(host == "gpu-node_3.example");
  CHECK(port == 65535);
  for (const char *bad :
       {"127.0.0.1:8000", "https://h:1", "http://h", "http://h:", "http://:80",
        "http://h:0", "http://h:65536", "http://h:80/v1", "http://h:80//",
        "http://h:8x", "http://[::1]:80", "http://h :80", "http://u@h:80",
        "http://h:+80", ""}) {
    INFO(bad);
    CHECK_FALSE(parseServerUrl(bad, host, port));
  }
}

TEST_CASE("length ranges round outwards and keep at least one token") {
  BenchServeSettings s = settingsFor(16, 1, 0.1, 0, 100);
  CHECK(s.minInputLen() == 14); // floor(14.4)
  CHECK(s.maxInputLen() == 18); // ceil(17.6)
  // 10 * 1.1 is 11.000000000000002 in doubles: still 11.
  s = settingsFor(10, 1, 0.1, 0, 100);
  CHECK(s.minInputLen() == 9);
  CHECK(s.maxInputLen() == 11);
  s = settingsFor(10, 1, 0.5, 0, 100);
  CHECK(s.minOutputLen() == 1); // floor(0.5) would be no token
  CHECK(s.maxOutputLen() == 2);
  s = settingsFor(7, 3, 0, 0, 100);
  CHECK(s.minInputLen() == 7);
  CHECK(s.maxInputLen() == 7);
  CHECK(s.minOutputLen() == 3);
  CHECK(s.maxOutputLen() == 3);
}

TEST_CASE("planned prompts have lengths in range and ids from 2 to vocab - 1 "
          "after one shared prefix and do not change with the rate") {
  BenchServeSettings s = settingsFor(20, 10, 0.5, 5, 50);
  std::vector<PlannedRequest> a = planRequests(s, 300, 7);
  REQUIRE(a.size() == 300);
  std::set<int64_t> inputLens, outputLens;
  std::set<int32_t> ids;
  for (const PlannedRequest &r : a) {
    inputLens.insert(int64_t(r.prompt.size()));
    outputLens.insert(r.maxTokens);
    ids.insert(r.prompt.begin(), r.prompt.end());
    CHECK(std::equal(r.prompt.begin(), r.prompt.begin() + 5,
                     a.front().prompt.begin()));
    CHECK(r.arrival == 0); // the default rate is infinite
  }
  // Every length of [10, 30] and [5, 15] is drawn, and nothing else.
  CHECK(*inputLens.begin() == 10);
  CHECK(*inputLens.rbegin() == 30);
  CHECK(inputLens.size() == 21);
  CHECK(*outputLens.begin() == 5);
  CHECK(*outputLens.rbegin() == 15);
  CHECK(outputLens.size() == 11);
  CHECK(*ids.begin() == 2);
  CHECK(*ids.rbegin() == 49);
  CHECK(ids.size() == 48);
  // The prompts after the prefix differ.
  CHECK(a[0].prompt != a[1].prompt);

  std::vector<PlannedRequest> again = planRequests(s, 300, 7);
  s.requestRate = 5;
  std::vector<PlannedRequest> paced = planRequests(s, 300, 7);
  std::vector<PlannedRequest> other = planRequests(s, 300, 8);
  for (size_t i = 0; i < a.size(); ++i) {
    CHECK(again[i].prompt == a[i].prompt);
    CHECK(paced[i].prompt == a[i].prompt);
    CHECK(paced[i].maxTokens == a[i].maxTokens);
  }
  CHECK(other[0].prompt != a[0].prompt);
}

TEST_CASE("arrivals are Poisson at the request rate and the first is at once") {
  BenchServeSettings s = settingsFor(4, 2, 0, 0, 10);
  s.requestRate = 10;
  std::vector<PlannedRequest> r = planRequests(s, 4000, 1);
  CHECK(r.front().arrival == 0);
  std::vector<double> gaps;
  for (size_t i = 1; i < r.size(); ++i) {
    REQUIRE(r[i].arrival >= r[i - 1].arrival);
    gaps.push_back(r[i].arrival - r[i - 1].arrival);
  }
  // Exponential gaps: mean 1/rate, and the standard deviation equals the
  // mean (a fixed period would give 0). Within 10% over 4000 gaps.
  double mean = 0, square = 0;
  for (double g : gaps)
    mean += g;
  mean /= double(gaps.size());
  for (double g : gaps)
    square += (g - mean) * (g - mean);
  const double stddev = std::sqrt(square / double(gaps.size() - 1));
  CHECK_THAT(mean, WithinAbs(0.1, 0.01));
  CHECK_THAT(stddev, WithinAbs(0.1, 0.01));
}

TEST_CASE("a request body streams token ids greedily with the usage") {
  PlannedRequest r;
  r.prompt = {5, 7, 2};
  r.maxTokens = 9;
  const nlohmann::json body = nlohmann::json::parse(requestBody(r, "m"));
  CHECK(body["prompt"] == nlohmann::json::array({5, 7, 2}));
  CHECK(body["max_tokens"] == 9);
  CHECK(body["temperature"] == 0);
  CHECK(body["ignore_eos"] == true);
  CHECK(body["stream"] == true);
  CHECK(body["stream_options"]["include_usage"] == true);
  CHECK(body["model"] == "m");
  CHECK_FALSE(nlohmann::json::parse(requestBody(r, "")).contains("model"));
}

TEST_CASE("a stream gives TTFT and the gaps between text chunks and the usage "
          "however its bytes are split") {
  for (size_t step : {size_t(0), size_t(1), size_t(7)}) {
    INFO("pieces of " << step << " bytes");
    RequestOutcome o = readStream(fullStream(), step);
    REQUIRE(o.ok);
    CHECK(o.ttft == 0.100);
    // The finish chunk has no text: not a gap.
    REQUIRE(o.itl.size() == 2);
    CHECK_THAT(o.itl[0], WithinAbs(0.050, 1e-12));
    CHECK_THAT(o.itl[1], WithinAbs(0.025, 1e-12));
    CHECK(o.latency == 0.182);
    CHECK(o.promptTokens == 16);
    CHECK(o.outputTokens == 8);
  }
  // CRLF line ends and "data:" without a space are SSE too.
  std::vector<Timed> crlf;
  for (Timed e : fullStream()) {
    std::string out;
    for (char c : e.bytes)
      out += c == '\n' ? std::string("\r\n") : std::string(1, c);
    if (out.rfind("data: ", 0) == 0)
      out.erase(5, 1);
    crlf.push_back({out, e.seconds});
  }
  RequestOutcome o = readStream(crlf, 3);
  REQUIRE(o.ok);
  CHECK(o.ttft == 0.100);
  CHECK(o.itl.size() == 2);
  CHECK(o.outputTokens == 8);
}

TEST_CASE("a stream whose tokens show no text has its TTFT at the finish") {
  RequestOutcome o = readStream({{chunk("", "length"), 0.3},
                                 {usageChunk(4, 2), 0.3},
                                 {"data: [DONE]\n\n", 0.31}},
                                0);
  REQUIRE(o.ok);
  CHECK(o.ttft == 0.3);
  CHECK(o.itl.empty());
  CHECK(o.outputTokens == 2);
}

TEST_CASE("a stream fails on an error event or a cut or no usage or bad JSON") {
  std::vector<Timed> events = fullStream();
  events.insert(events.begin() + 2,
                {"data: {\"error\": {\"message\": \"engine failed\", "
                 "\"type\": \"server_error\"}}\n\n",
                 0.13});
  RequestOutcome o = readStream(events, 0);
  CHECK_FALSE(o.ok);
  CHECK(o.error == "error event: engine failed");

  events = fullStream();
  events.pop_back(); // no [DONE]
  o = readStream(events, 0);
  CHECK_FALSE(o.ok);
  CHECK(o.error == "the stream ended before data: [DONE]");

  events = fullStream();
  events.erase(events.begin() + 5); // no usage chunk
  o = readStream(events, 0);
  CHECK_FALSE(o.ok);
  CHECK(o.error.find("no usage chunk") != std::string::npos);

  o = readStream(
      {{"data: {\"choices\": [\n\n", 0.1}, {"data: [DONE]\n\n", 0.2}}, 0);
  CHECK_FALSE(o.ok);
  CHECK(o.error.find("not a JSON object") != std::string::npos);

  o = readStream({{"data: [DONE]\n\n", 0.2}}, 0);
  CHECK_FALSE(o.ok);
  CHECK(o.error.find("no usage chunk") != std::string::npos);
}

TEST_CASE("percentiles interpolate between ranks as numpy's do") {
  CHECK(percentile({1, 2, 3, 4}, 50) == 2.5);
  CHECK_THAT(percentile({1, 2, 3, 4}, 99), WithinAbs(3.97, 1e-12));
  CHECK(percentile({1, 2, 3, 4}, 0) == 1);
  CHECK(percentile({1, 2, 3, 4}, 100) == 4);
  CHECK(percentile({5}, 99) == 5);
  Distribution d = distributionOf({30, 10, 20});
  CHECK(d.count == 3);
  CHECK(d.mean == 20);
  CHECK(d.median == 20);
  CHECK_THAT(d.p99, WithinAbs(29.8, 1e-12));
  CHECK(distributionOf({}).count == 0);
}

TEST_CASE("the report counts completed requests' tokens and the TPOT of "
          "requests of two tokens or more and the first failure") {
  LoadResult run;
  run.seconds = 2;
  RequestOutcome a;
  a.ok = true;
  a.ttft = 0.1;
  a.latency = 0.5;
  a.itl = {0.2, 0.2};
  a.promptTokens = 10;
  a.outputTokens = 5;
  RequestOutcome b = a;
  b.ttft = 0.3;
  b.latency = 0.3;
  b.itl = {};
  b.outputTokens = 1; // no TPOT
  RequestOutcome failed;
  failed.error = "HTTP 429: queue full";
  RequestOutcome failed2;
  failed2.error = "later";
  run.outcomes = {a, failed, b, failed2};
  BenchServeReport r = summarize(BenchServeSettings(), run);
  CHECK(r.completed == 2);
  CHECK(r.failed == 2);
  CHECK(r.firstError == "HTTP 429: queue full");
  CHECK(r.inputTokens == 20);
  CHECK(r.outputTokens == 6);
  CHECK(r.requestThroughput() == 1);
  CHECK(r.inputThroughput() == 10);
  CHECK(r.outputThroughput() == 3);
  CHECK(r.ttft.count == 2);
  CHECK_THAT(r.ttft.mean, WithinAbs(200, 1e-9));
  REQUIRE(r.tpot.count == 1);
  CHECK_THAT(r.tpot.mean, WithinAbs(100, 1e-9)); // (500 - 100) ms / 4
  CHECK(r.itl.count == 2);
  CHECK_THAT(r.e2el.median, WithinAbs(400, 1e-9));
}
