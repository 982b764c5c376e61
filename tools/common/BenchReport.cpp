#include "tools/common/BenchReport.h"
#include "tools/common/BenchJson.h"

#include <algorithm>
#include <cmath>

namespace strata::tools {

Stats meanAndStddev(const std::vector<double> &values) {
  Stats s;
  if (values.empty())
    return s;
  for (double v : values)
    s.mean += v;
  s.mean /= double(values.size());
  if (values.size() < 2)
    return s;
  double sq = 0;
  for (double v : values)
    sq += (v - s.mean) * (v - s.mean);
  s.stddev = std::sqrt(sq / double(values.size() - 1));
  return s;
}

std::vector<double> BenchResult::tokensPerSecond() const {
  std::vector<double> tps;
  for (double s : seconds)
    tps.push_back(s > 0 ? double(tokensPerRun) / s : 0.0);
  return tps;
}

double BenchResult::stepSeconds() const {
  if (!decode || stepsPerRun == 0)
    return 0;
  return meanAndStddev(seconds).mean / double(stepsPerRun);
}

double BenchResult::rooflineFraction(double bandwidthGBs) const {
  double measured = stepSeconds();
  if (measured <= 0)
    return 0;
  return idealSeconds(stepBytes.total(), bandwidthGBs) / measured;
}

namespace {

std::string format(const char *fmt, double a, double b = 0) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), fmt, a, b);
  return buf;
}

std::string mib(double bytes) { return format("%.2f MiB", bytes / 1048576.0); }

/// Terminal columns of UTF-8 text: one per code point ("±" is two bytes).
size_t columns(const std::string &text) {
  size_t n = 0;
  for (unsigned char c : text)
    n += (c & 0xC0) != 0x80;
  return n;
}

} // namespace

void printMarkdownTable(FILE *out,
                        const std::vector<std::vector<std::string>> &rows) {
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto &row : rows)
    for (size_t c = 0; c < row.size(); ++c)
      width[c] = std::max(width[c], columns(row[c]));
  auto cell = [&](size_t c, const std::string &text) {
    std::string pad(width[c] - columns(text), ' ');
    return c == 0 ? text + pad : pad + text;
  };
  for (size_t r = 0; r < rows.size(); ++r) {
    std::fprintf(out, "|");
    for (size_t c = 0; c < rows[r].size(); ++c)
      std::fprintf(out, " %s |", cell(c, rows[r][c]).c_str());
    std::fprintf(out, "\n");
    if (r == 0) {
      std::fprintf(out, "|");
      for (size_t c = 0; c < width.size(); ++c)
        std::fprintf(out, " %s |",
                     c == 0 ? (":" + std::string(width[c] - 1, '-')).c_str()
                            : (std::string(width[c] - 1, '-') + ":").c_str());
      std::fprintf(out, "\n");
    }
  }
}

void printMarkdownHeader(FILE *out, const BenchMetadata &meta) {
  std::fprintf(out,
               "model: %s; weights: %s, %s read per decode step (%s "
               "in the plan)\n",
               meta.model.c_str(), meta.weights.c_str(),
               mib(meta.weightBytes).c_str(),
               mib(meta.planWeightBytes).c_str());
  std::fprintf(out, "plan: %s; limits %lld tokens, %lld sequences per step\n",
               meta.planSource.c_str(), (long long)meta.planMaxTokens,
               (long long)meta.planMaxBatch);
  std::fprintf(out, "fusions: %s\n", meta.fusions.c_str());
  std::string cudaSettings;
  if (meta.device == "cuda") {
    cudaSettings = meta.cudaGraphs ? ", CUDA graphs on" : ", CUDA graphs off";
    cudaSettings += meta.dependentLaunch ? ", dependent launch on"
                                         : ", dependent launch off";
    cudaSettings += meta.decodeGemv ? ", decode GEMV" : ", decode cuBLASLt";
  }
  std::fprintf(out, "device: %s, %s%s [%s]\n", meta.device.c_str(),
               meta.deviceName.c_str(), cudaSettings.c_str(),
               meta.deviceWhy.c_str());
  const std::string after =
      meta.depth > 1 ? "a prompt of " + std::to_string(meta.depth) +
                           " tokens (@d" + std::to_string(meta.depth) + ")"
                     : std::string("a one-token prompt");
  std::fprintf(out,
               "runs: %lld per row after one warm-up; ppN prefills B prompts "
               "of N tokens one after another, tgN decodes N steps of B "
               "sequences after %s\n",
               (long long)meta.repetitions, after.c_str());
  std::fprintf(out,
               "roofline: the bytes a decode step must move (the weights it "
               "reads, the KV cache read, the linear state read and "
               "written) at "
               "%g GB/s%s\n\n",
               meta.bandwidthGBs,
               meta.bandwidthGBs == kH200ReadBandwidthGBs
                   ? ", the H200's measured read bandwidth"
                   : "");
}

void printMarkdown(FILE *out, const BenchMetadata &meta,
                   const std::vector<BenchResult> &results) {
  printMarkdownHeader(out, meta);
  std::vector<std::vector<std::string>> rows{
      {"test", "batch", "tokens/s", "ms/step", "GB/s", "roofline"}};
  for (const BenchResult &r : results) {
    Stats tps = meanAndStddev(r.tokensPerSecond());
    std::vector<std::string> row{r.test, std::to_string(r.batch),
                                 format("%.2f ± %.2f", tps.mean, tps.stddev)};
    if (r.decode) {
      double step = r.stepSeconds();
      row.push_back(format("%.3f", step * 1e3));
      row.push_back(
          format("%.1f", step > 0 ? r.stepBytes.total() / step / 1e9 : 0.0));
      row.push_back(
          format("%.3g%%", 100.0 * r.rooflineFraction(meta.bandwidthGBs)));
    } else {
      row.insert(row.end(), {"-", "-", "-"});
    }
    rows.push_back(row);
  }
  printMarkdownTable(out, rows);
}

BenchJson benchHeaderJson(const BenchMetadata &meta) {
  const bool cuda = meta.device == "cuda";
  BenchJson doc;
  doc["tool"] = meta.tool;
  doc["version"] = meta.version;
  doc["machine"] = {
      {"host", meta.host}, {"cpu", meta.cpu}, {"cpu_threads", meta.cpuThreads}};
  // The CUDA switches mean nothing on the CPU backend: false there.
  doc["device"] = {{"kind", meta.device},
                   {"name", meta.deviceName},
                   {"why", meta.deviceWhy},
                   {"cuda_graphs", cuda && meta.cudaGraphs},
                   {"dependent_launch", cuda && meta.dependentLaunch},
                   {"decode_gemv", cuda && meta.decodeGemv}};
  doc["model"] = {{"name", meta.model},
                  {"weights", meta.weights},
                  {"decode_weight_bytes", meta.weightBytes},
                  {"plan_weight_bytes", meta.planWeightBytes}};
  doc["plan"] = {
      {"source", meta.planSource},
      {"max_tokens", meta.planMaxTokens},
      {"max_batch", meta.planMaxBatch},
      {"programs", meta.programs},
      {"fusions", {{"on", meta.fusionsOn}, {"left_out", meta.fusionsOff}}}};
  doc["settings"] = {{"prompt_tokens", meta.promptTokens},
                     {"gen_tokens", meta.genTokens},
                     {"depth", meta.depth},
                     {"batches", meta.batches},
                     {"repetitions", meta.repetitions},
                     {"warmup_runs", 1},
                     {"bandwidth_gbs", meta.bandwidthGBs}};
  return doc;
}

BenchJson benchResultJson(const BenchResult &r, double bandwidthGBs) {
  std::vector<double> tps = r.tokensPerSecond();
  Stats s = meanAndStddev(tps);
  BenchJson row = {{"test", r.test},
                   {"phase", r.decode ? "decode" : "prefill"},
                   {"batch", r.batch},
                   {"tokens_per_run", r.tokensPerRun},
                   {"seconds", r.seconds},
                   {"tokens_per_second", tps},
                   {"mean_tokens_per_second", s.mean},
                   {"stddev_tokens_per_second", s.stddev}};
  if (r.decode) {
    row["steps_per_run"] = r.stepsPerRun;
    row["prompt_seconds"] = r.promptSeconds;
    row["mean_context"] = r.meanContext;
    row["bytes_per_step"] = {{"weights", r.stepBytes.weights},
                             {"kv_cache", r.stepBytes.kvCache},
                             {"linear_state", r.stepBytes.linearState},
                             {"total", r.stepBytes.total()}};
    row["activation_bytes_per_step"] = r.activationBytes;
    row["mean_step_seconds"] = r.stepSeconds();
    row["ideal_step_seconds"] = idealSeconds(r.stepBytes.total(), bandwidthGBs);
    row["roofline_fraction"] = r.rooflineFraction(bandwidthGBs);
  }
  return row;
}

void printJsonDocument(FILE *out, const BenchJson &doc) {
  // A host or path name need not be UTF-8: such bytes print as U+FFFD
  // rather than making the document invalid.
  std::string text =
      doc.dump(2, ' ', false, BenchJson::error_handler_t::replace);
  std::fprintf(out, "%s\n", text.c_str());
}

void printJson(FILE *out, const BenchMetadata &meta,
               const std::vector<BenchResult> &results) {
  BenchJson doc = benchHeaderJson(meta);
  BenchJson &list = doc["results"] = BenchJson::array();
  for (const BenchResult &r : results)
    list.push_back(benchResultJson(r, meta.bandwidthGBs));
  printJsonDocument(out, doc);
}

} // namespace strata::tools
