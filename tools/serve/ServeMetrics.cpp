#include "tools/serve/ServeMetrics.h"

#include <algorithm>
#include <cstdio>

namespace strata::serve {

namespace {

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.9g", value);
  return text;
}

// Bounds in seconds. The first buckets are finer than vLLM's: a decode
// step of a small model takes well under 10 ms, on the CPU too.
std::vector<double> ttftBounds() {
  return {0.001, 0.0025, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1,  0.25,
          0.5,   0.75,   1.0,   2.5,  5.0,  7.5,  10.0, 20.0, 40.0, 80.0};
}
std::vector<double> itlBounds() {
  return {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15,
          0.2,    0.3,   0.4,    0.5,   0.75, 1.0,   2.5,  5.0,   10.0};
}
std::vector<double> latencyBounds() {
  return {0.01, 0.025, 0.05, 0.1,  0.25,  0.5,   1.0,   2.5,   5.0,
          10.0, 20.0,  40.0, 80.0, 160.0, 320.0, 640.0, 1280.0};
}

void header(std::string &out, const char *name, const char *type,
            const char *help) {
  out += "# HELP ";
  out += name;
  out += " ";
  out += help;
  out += "\n# TYPE ";
  out += name;
  out += " ";
  out += type;
  out += "\n";
}

void sample(std::string &out, const std::string &name, double value) {
  out += name + " " + number(value) + "\n";
}

} // namespace

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::observe(double value) {
  const size_t bucket =
      std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin();
  ++counts_[bucket];
  sum_ += value;
  ++count_;
}

std::string Histogram::format(const std::string &name) const {
  std::string out;
  uint64_t cumulative = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    cumulative += counts_[i];
    const std::string le = i < bounds_.size() ? number(bounds_[i]) : "+Inf";
    out += name + "_bucket{le=\"" + le + "\"} " + std::to_string(cumulative) +
           "\n";
  }
  out += name + "_sum " + number(sum_) + "\n";
  out += name + "_count " + std::to_string(count_) + "\n";
  return out;
}

ServeMetrics::ServeMetrics()
    : ttft_(ttftBounds()), itl_(itlBounds()), latency_(latencyBounds()) {
  // Every label value exists from the start, so that rates work from the
  // first scrape.
  for (const char *reason : {"invalid", "queue_full", "unavailable"})
    rejected_[reason] = 0;
  for (const char *reason : {"stop", "length", "cancelled", "error"})
    finished_[reason] = 0;
}

void ServeMetrics::rejected(const std::string &reason) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++rejected_[reason];
}

void ServeMetrics::admitted(int64_t promptTokens) {
  std::lock_guard<std::mutex> lock(mutex_);
  promptTokens_ += uint64_t(promptTokens);
}

void ServeMetrics::token(bool first, double sinceLast) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++generationTokens_;
  (first ? ttft_ : itl_).observe(sinceLast);
}

void ServeMetrics::finished(const std::string &reason, double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++finished_[reason];
  latency_.observe(seconds);
}

std::string ServeMetrics::prometheus(const EngineLoad &load) const {
  std::string out;
  header(out, "strata_requests_running", "gauge",
         "Requests whose sequences are in the engine's running set.");
  sample(out, "strata_requests_running", double(load.running));
  header(out, "strata_requests_waiting", "gauge",
         "Requests accepted and not running yet (queued or preempted).");
  sample(out, "strata_requests_waiting", double(load.waiting));
  header(out, "strata_kv_blocks_total", "gauge",
         "KV-cache blocks in the pool.");
  sample(out, "strata_kv_blocks_total", double(load.kvBlocks));
  header(out, "strata_kv_blocks_used", "gauge",
         "KV-cache blocks held by running sequences.");
  sample(out, "strata_kv_blocks_used",
         double(load.kvBlocks - load.freeKvBlocks));
  header(out, "strata_engine_steps_total", "counter", "Engine steps run.");
  sample(out, "strata_engine_steps_total", double(load.steps));
  header(out, "strata_preemptions_total", "counter",
         "Running sequences preempted (their tokens recomputed later) when "
         "the KV pool ran dry.");
  sample(out, "strata_preemptions_total", double(load.preemptions));
  header(out, "strata_prompt_tokens_fed_total", "counter",
         "Prompt tokens the engine ran, recomputed ones included.");
  sample(out, "strata_prompt_tokens_fed_total", double(load.promptTokensFed));
  header(out, "strata_prefix_cache_queries_total", "counter",
         "Prompt tokens looked up in the prefix cache (0 when it is off: "
         "models with lightning layers).");
  sample(out, "strata_prefix_cache_queries_total",
         double(load.prefixQueryTokens));
  header(out, "strata_prefix_cache_hits_total", "counter",
         "Of those, tokens whose KV blocks were found cached and not "
         "computed.");
  sample(out, "strata_prefix_cache_hits_total", double(load.prefixHitTokens));
  header(out, "strata_spec_verify_steps_total", "counter",
         "Steps that verified a drafter's proposals (--spec-lookup, --draft).");
  sample(out, "strata_spec_verify_steps_total", double(load.verifySteps));
  header(out, "strata_spec_proposed_tokens_total", "counter",
         "Tokens the drafter proposed.");
  sample(out, "strata_spec_proposed_tokens_total",
         double(load.specProposedTokens));
  header(out, "strata_spec_accepted_tokens_total", "counter",
         "Of those, tokens the model kept.");
  sample(out, "strata_spec_accepted_tokens_total",
         double(load.specAcceptedTokens));
  header(out, "strata_decode_graph_steps_total", "counter",
         "Decode-only steps, which can replay a captured CUDA graph (0 on "
         "the CPU backend and with --no-graphs).");
  sample(out, "strata_decode_graph_steps_total", double(load.decodeSteps));
  header(out, "strata_decode_graph_replays_total", "counter",
         "Of those, steps run by replaying a captured graph; the rest ran "
         "eagerly (a batch-size bucket's first step).");
  sample(out, "strata_decode_graph_replays_total", double(load.graphReplays));
  header(out, "strata_decode_graph_captures_total", "counter",
         "CUDA graphs captured, one per batch-size bucket in use.");
  sample(out, "strata_decode_graph_captures_total",
         double(load.graphCaptures));

  std::lock_guard<std::mutex> lock(mutex_);
  header(out, "strata_prompt_tokens_total", "counter",
         "Prompt tokens of the requests that reached the engine.");
  sample(out, "strata_prompt_tokens_total", double(promptTokens_));
  header(out, "strata_generation_tokens_total", "counter",
         "Tokens generated for requests.");
  sample(out, "strata_generation_tokens_total", double(generationTokens_));
  header(out, "strata_requests_finished_total", "counter",
         "Requests that ended, by reason: stop (EOS or a stop string), "
         "length (max_tokens), cancelled (client gone or shutdown), error "
         "(the engine failed).");
  for (const auto &[reason, count] : finished_)
    sample(out, "strata_requests_finished_total{reason=\"" + reason + "\"}",
           double(count));
  header(out, "strata_requests_rejected_total", "counter",
         "Requests refused before reaching the engine, by reason: invalid "
         "(400), queue_full (429), unavailable (503).");
  for (const auto &[reason, count] : rejected_)
    sample(out, "strata_requests_rejected_total{reason=\"" + reason + "\"}",
           double(count));
  header(out, "strata_time_to_first_token_seconds", "histogram",
         "Time from a request's arrival to its first generated token.");
  out += ttft_.format("strata_time_to_first_token_seconds");
  header(out, "strata_inter_token_latency_seconds", "histogram",
         "Time between consecutive generated tokens of a request.");
  out += itl_.format("strata_inter_token_latency_seconds");
  header(out, "strata_request_latency_seconds", "histogram",
         "Time from a request's arrival to its end.");
  out += latency_.format("strata_request_latency_seconds");
  return out;
}

} // namespace strata::serve
