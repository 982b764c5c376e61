#include "tools/common/BenchReport.h"

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

/// The table's cells, right-aligned under a header, first column left.
void printTable(FILE *out, const std::vector<std::vector<std::string>> &rows) {
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

} // namespace

void printMarkdown(FILE *out, const BenchMetadata &meta,
                   const std::vector<BenchResult> &results) {
  std::fprintf(out,
               "model: %s; weights: %s, %s read per decode step (%s "
               "in the plan)\n",
               meta.model.c_str(), meta.weights.c_str(),
               mib(meta.weightBytes).c_str(),
               mib(meta.planWeightBytes).c_str());
  std::fprintf(out, "plan: %s; limits %lld tokens, %lld sequences per step\n",
               meta.planSource.c_str(), (long long)meta.planMaxTokens,
               (long long)meta.planMaxBatch);
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
  std::fprintf(out,
               "runs: %lld per row after one warm-up; ppN prefills B prompts "
               "of N tokens one after another, tgN decodes N steps of B "
               "sequences after a one-token prompt\n",
               (long long)meta.repetitions);
  std::fprintf(out,
               "roofline: the bytes a decode step must move (the weights it "
               "reads, the KV cache read, the linear state read and "
               "written) at "
               "%g GB/s%s\n\n",
               meta.bandwidthGBs,
               meta.bandwidthGBs == kH200ReadBandwidthGBs
                   ? ", the H200's measured read bandwidth"
                   : "");
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
  printTable(out, rows);
}

namespace {

std::string quote(const std::string &s) {
  std::string q = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      q += '\\';
      q += char(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      q += buf;
    } else {
      q += char(c);
    }
  }
  return q + "\"";
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.9g", v);
  return buf;
}

std::string list(const std::vector<double> &values) {
  std::string s = "[";
  for (size_t i = 0; i < values.size(); ++i)
    s += (i ? ", " : "") + num(values[i]);
  return s + "]";
}

} // namespace

void printJson(FILE *out, const BenchMetadata &meta,
               const std::vector<BenchResult> &results) {
  std::string programs = "[";
  for (size_t i = 0; i < meta.programs.size(); ++i)
    programs += (i ? ", " : "") + quote(meta.programs[i]);
  programs += "]";
  std::string batches = "[";
  for (size_t i = 0; i < meta.batches.size(); ++i)
    batches += (i ? ", " : "") + std::to_string(meta.batches[i]);
  batches += "]";
  std::fprintf(
      out,
      "{\n"
      "  \"tool\": %s,\n  \"version\": %s,\n"
      "  \"machine\": {\"host\": %s, \"cpu\": %s, \"cpu_threads\": %u},\n"
      "  \"device\": {\"kind\": %s, \"name\": %s, \"why\": %s, "
      "\"cuda_graphs\": %s, \"dependent_launch\": %s, \"decode_gemv\": "
      "%s},\n"
      "  \"model\": {\"name\": %s, \"weights\": %s, "
      "\"decode_weight_bytes\": %s, \"plan_weight_bytes\": %s},\n"
      "  \"plan\": {\"source\": %s, \"max_tokens\": %lld, \"max_batch\": "
      "%lld, \"programs\": %s},\n"
      "  \"settings\": {\"prompt_tokens\": %lld, \"gen_tokens\": %lld, "
      "\"batches\": %s, \"repetitions\": %lld, \"warmup_runs\": 1, "
      "\"bandwidth_gbs\": %s},\n"
      "  \"results\": [",
      quote(meta.tool).c_str(), quote(meta.version).c_str(),
      quote(meta.host).c_str(), quote(meta.cpu).c_str(), meta.cpuThreads,
      quote(meta.device).c_str(), quote(meta.deviceName).c_str(),
      quote(meta.deviceWhy).c_str(),
      meta.device == "cuda" && meta.cudaGraphs ? "true" : "false",
      meta.device == "cuda" && meta.dependentLaunch ? "true" : "false",
      meta.device == "cuda" && meta.decodeGemv ? "true" : "false",
      quote(meta.model).c_str(), quote(meta.weights).c_str(),
      num(meta.weightBytes).c_str(), num(meta.planWeightBytes).c_str(),
      quote(meta.planSource).c_str(), (long long)meta.planMaxTokens,
      (long long)meta.planMaxBatch, programs.c_str(),
      (long long)meta.promptTokens, (long long)meta.genTokens, batches.c_str(),
      (long long)meta.repetitions, num(meta.bandwidthGBs).c_str());
  for (size_t i = 0; i < results.size(); ++i) {
    const BenchResult &r = results[i];
    std::vector<double> tps = r.tokensPerSecond();
    Stats s = meanAndStddev(tps);
    std::fprintf(out,
                 "%s\n    {\"test\": %s, \"phase\": %s, \"batch\": %lld, "
                 "\"tokens_per_run\": %lld, \"seconds\": %s, "
                 "\"tokens_per_second\": %s, \"mean_tokens_per_second\": %s, "
                 "\"stddev_tokens_per_second\": %s",
                 i ? "," : "", quote(r.test).c_str(),
                 r.decode ? "\"decode\"" : "\"prefill\"", (long long)r.batch,
                 (long long)r.tokensPerRun, list(r.seconds).c_str(),
                 list(tps).c_str(), num(s.mean).c_str(), num(s.stddev).c_str());
    if (r.decode)
      std::fprintf(
          out,
          ",\n     \"steps_per_run\": %lld, \"mean_context\": %s, "
          "\"bytes_per_step\": {\"weights\": %s, \"kv_cache\": %s, "
          "\"linear_state\": %s, \"total\": %s}, \"mean_step_seconds\": %s, "
          "\"ideal_step_seconds\": %s, \"roofline_fraction\": %s",
          (long long)r.stepsPerRun, num(r.meanContext).c_str(),
          num(r.stepBytes.weights).c_str(), num(r.stepBytes.kvCache).c_str(),
          num(r.stepBytes.linearState).c_str(),
          num(r.stepBytes.total()).c_str(), num(r.stepSeconds()).c_str(),
          num(idealSeconds(r.stepBytes.total(), meta.bandwidthGBs)).c_str(),
          num(r.rooflineFraction(meta.bandwidthGBs)).c_str());
    std::fprintf(out, "}");
  }
  std::fprintf(out, "\n  ]\n}\n");
}

} // namespace strata::tools
