#include "tools/serve/BenchServeReport.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

namespace strata::serve {

namespace {

using Json = nlohmann::ordered_json;

std::string format(const char *fmt, double value) {
  char text[64];
  std::snprintf(text, sizeof(text), fmt, value);
  return text;
}

double perSecond(double amount, double seconds) {
  return seconds > 0 ? amount / seconds : 0;
}

/// "16", or "12 to 20" for lengths drawn from a range.
std::string lengths(int64_t lo, int64_t hi) {
  return lo == hi ? std::to_string(lo)
                  : std::to_string(lo) + " to " + std::to_string(hi);
}

std::string rateText(double rate) {
  return std::isfinite(rate) ? format("%g", rate) + " requests/s (Poisson)"
                             : std::string("inf (all at once)");
}

/// Rows with the first column left-aligned and the others right-aligned,
/// padded to the widest cell.
void printTable(FILE *out, const std::vector<std::vector<std::string>> &rows) {
  std::vector<size_t> width(rows.front().size(), 3);
  for (const auto &row : rows)
    for (size_t c = 0; c < row.size(); ++c)
      width[c] = std::max(width[c], row[c].size());
  auto print = [&](const std::vector<std::string> &row) {
    std::fprintf(out, "|");
    for (size_t c = 0; c < row.size(); ++c) {
      const std::string pad(width[c] - row[c].size(), ' ');
      std::fprintf(out, " %s |",
                   (c == 0 ? row[c] + pad : pad + row[c]).c_str());
    }
    std::fprintf(out, "\n");
  };
  print(rows.front());
  std::vector<std::string> rule;
  for (size_t c = 0; c < width.size(); ++c)
    rule.push_back(c == 0 ? ":" + std::string(width[c] - 1, '-')
                          : std::string(width[c] - 1, '-') + ":");
  print(rule);
  for (size_t r = 1; r < rows.size(); ++r)
    print(rows[r]);
}

Json distributionJson(const Distribution &d) {
  auto value = [&](double v) { return d.count ? Json(v) : Json(nullptr); };
  return Json{{"mean", value(d.mean)},
              {"median", value(d.median)},
              {"p99", value(d.p99)},
              {"count", d.count}};
}

} // namespace

double percentile(const std::vector<double> &sorted, double p) {
  const double rank = p / 100.0 * double(sorted.size() - 1);
  const size_t lo = size_t(std::floor(rank));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - double(lo));
}

Distribution distributionOf(std::vector<double> values) {
  Distribution d;
  d.count = values.size();
  if (values.empty())
    return d;
  std::sort(values.begin(), values.end());
  for (double v : values)
    d.mean += v;
  d.mean /= double(values.size());
  d.median = percentile(values, 50);
  d.p99 = percentile(values, 99);
  return d;
}

double BenchServeReport::requestThroughput() const {
  return perSecond(double(completed), seconds);
}
double BenchServeReport::inputThroughput() const {
  return perSecond(double(inputTokens), seconds);
}
double BenchServeReport::outputThroughput() const {
  return perSecond(double(outputTokens), seconds);
}

BenchServeReport summarize(const BenchServeSettings &settings,
                           const LoadResult &run) {
  BenchServeReport report;
  report.settings = settings;
  report.seconds = run.seconds;
  std::vector<double> ttft, tpot, itl, e2el;
  for (const RequestOutcome &o : run.outcomes) {
    if (!o.ok) {
      if (report.failed++ == 0)
        report.firstError = o.error;
      continue;
    }
    ++report.completed;
    report.inputTokens += o.promptTokens;
    report.outputTokens += o.outputTokens;
    ttft.push_back(o.ttft * 1e3);
    e2el.push_back(o.latency * 1e3);
    if (o.outputTokens > 1)
      tpot.push_back((o.latency - o.ttft) * 1e3 / double(o.outputTokens - 1));
    for (double gap : o.itl)
      itl.push_back(gap * 1e3);
  }
  report.ttft = distributionOf(std::move(ttft));
  report.tpot = distributionOf(std::move(tpot));
  report.itl = distributionOf(std::move(itl));
  report.e2el = distributionOf(std::move(e2el));
  return report;
}

void printReportMarkdown(FILE *out, const BenchServeReport &r) {
  const BenchServeSettings &s = r.settings;
  std::fprintf(out, "server: %s, model %s (%s %s)\n", s.url.c_str(),
               r.model.c_str(), r.tool.c_str(), r.version.c_str());
  std::string prefix;
  if (s.sharedPrefixLen > 0)
    prefix =
        ", the first " + std::to_string(s.sharedPrefixLen) + " shared by all";
  std::fprintf(out,
               "requests: %lld after %lld warm-up; prompts of %s token ids "
               "uniform in [2, %lld)%s; %s output tokens each; seed %llu\n",
               (long long)s.numRequests, (long long)s.warmup,
               lengths(s.minInputLen(), s.maxInputLen()).c_str(),
               (long long)s.vocab, prefix.c_str(),
               lengths(s.minOutputLen(), s.maxOutputLen()).c_str(),
               (unsigned long long)s.seed);
  std::fprintf(out, "load: request rate %s, at most %lld in flight%s\n\n",
               rateText(s.requestRate).c_str(),
               (long long)s.inFlight(s.numRequests),
               s.maxConcurrency ? " (--max-concurrency)" : "");
  printTable(out, {{"result", "value"},
                   {"completed", std::to_string(r.completed)},
                   {"failed", std::to_string(r.failed)},
                   {"duration (s)", format("%.3f", r.seconds)},
                   {"requests/s", format("%.2f", r.requestThroughput())},
                   {"input tokens/s", format("%.2f", r.inputThroughput())},
                   {"output tokens/s", format("%.2f", r.outputThroughput())},
                   {"input tokens", std::to_string(r.inputTokens)},
                   {"output tokens", std::to_string(r.outputTokens)}});
  std::fprintf(out, "\n");
  std::vector<std::vector<std::string>> rows{
      {"latency (ms)", "mean", "median", "p99"}};
  for (auto [name, d] :
       {std::pair<const char *, const Distribution *>{"TTFT", &r.ttft},
        {"TPOT", &r.tpot},
        {"ITL", &r.itl},
        {"E2E", &r.e2el}}) {
    if (d->count == 0)
      rows.push_back({name, "-", "-", "-"});
    else
      rows.push_back({name, format("%.2f", d->mean), format("%.2f", d->median),
                      format("%.2f", d->p99)});
  }
  printTable(out, rows);
  if (r.failed > 0)
    std::fprintf(out, "\nfirst error: %s\n", r.firstError.c_str());
}

void printReportJson(FILE *out, const BenchServeReport &r) {
  const BenchServeSettings &s = r.settings;
  Json doc;
  doc["tool"] = r.tool;
  doc["version"] = r.version;
  doc["url"] = s.url;
  doc["model"] = r.model;
  doc["settings"] = {
      {"num_requests", s.numRequests},
      {"input_len", s.inputLen},
      {"output_len", s.outputLen},
      {"random_range_ratio", s.rangeRatio},
      // JSON has no infinity.
      {"request_rate",
       std::isfinite(s.requestRate) ? Json(s.requestRate) : Json("inf")},
      {"max_concurrency",
       s.maxConcurrency ? Json(s.maxConcurrency) : Json(nullptr)},
      {"in_flight", s.inFlight(s.numRequests)},
      {"shared_prefix_len", s.sharedPrefixLen},
      {"seed", s.seed},
      {"vocab", s.vocab},
      {"warmup", s.warmup},
      {"timeout_s", s.timeoutSeconds}};
  doc["completed"] = r.completed;
  doc["failed"] = r.failed;
  doc["first_error"] = r.failed ? Json(r.firstError) : Json(nullptr);
  doc["duration_s"] = r.seconds;
  doc["total_input_tokens"] = r.inputTokens;
  doc["total_output_tokens"] = r.outputTokens;
  doc["request_throughput"] = r.requestThroughput();
  doc["input_throughput"] = r.inputThroughput();
  doc["output_throughput"] = r.outputThroughput();
  doc["ttft_ms"] = distributionJson(r.ttft);
  doc["tpot_ms"] = distributionJson(r.tpot);
  doc["itl_ms"] = distributionJson(r.itl);
  doc["e2el_ms"] = distributionJson(r.e2el);
  // The server's messages need not be UTF-8.
  std::fprintf(out, "%s\n",
               doc.dump(2, ' ', false, Json::error_handler_t::replace).c_str());
}

} // namespace strata::serve
