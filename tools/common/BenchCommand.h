// The end-to-end benchmark shared by `strata bench MODEL.yaml` and
// `strata-bench MODEL.splan`: prefill (ppN) and decode (tgN) throughput of
// the Engine at several batch sizes, each repeated after a warm-up run,
// with the decode steps held against the memory roofline
// (tools/common/DecodeRoofline.h).
#ifndef STRATA_TOOLS_COMMON_BENCHCOMMAND_H
#define STRATA_TOOLS_COMMON_BENCHCOMMAND_H

#include "runtime/Engine.h"
#include "runtime/plan/Plan.h"
#include "tools/common/ArgParser.h"
#include "tools/common/BenchReport.h"

#include <cstdint>
#include <string>
#include <vector>

namespace strata::tools {

/// Declares --prompt-tokens, --gen-tokens, --depth, --batch, --repetitions,
/// --device, --no-graphs, --no-dependent-launch, --no-gemv, --weights,
/// --output, --bandwidth-gbs and --verify-tokens.
void addBenchOptions(ArgParser &parser);

struct BenchSettings {
  int64_t promptTokens = 512; ///< 0 skips the pp tests
  int64_t genTokens = 128;    ///< 0 skips the tg tests
  /// Prompt tokens before the tg test's decode steps (--depth; at least 1:
  /// the prompt's prefill yields the first token).
  int64_t depth = 1;
  std::vector<int64_t> batches{1, 8, 32};
  int64_t repetitions = 5;
  Device device = Device::Cpu;
  std::string deviceName; ///< the GPU's or the CPU's name
  std::string deviceWhy;  ///< why this device was picked
  bool cudaGraphs = true;
  bool dependentLaunch = true; ///< off with --no-dependent-launch
  bool decodeGemv = true;      ///< off with --no-gemv
  bool json = false;
  double bandwidthGBs = 4140.0;
  /// --weights; empty: the caller's default.
  std::string weightsPath;
  /// --verify-tokens: tree sizes whose verify step is timed against a
  /// decode step (instead of the pp and tg tests); empty: none.
  std::vector<int64_t> verifyTokens;
  int64_t maxBatch() const;
  /// "tg128", or "tg128@d512" when the decode steps follow a longer prompt.
  std::string decodeTestName() const;
  /// The cached context a tg step attends over, averaged over the steps.
  double decodeMeanContext() const;
};

/// Reads and checks the options and picks the device. Returns 0, or the
/// exit code after printing one message prefixed by `tool`: 2 for a bad
/// option value, 1 for `--device cuda` where no CUDA device can be used.
int parseBenchSettings(const std::string &tool, const ArgParser &parser,
                       BenchSettings &settings);

/// What the report says about where the plan and weights came from.
struct BenchSource {
  std::string tool;       ///< "strata bench" or "strata-bench"
  std::string version;    ///< the tool's version
  std::string planSource; ///< "file M.splan", "compiled from M.yaml ..."
};

/// Runs every test and prints the report on stdout. Returns the exit code:
/// 2 when a batch exceeds the plan's limit, 1 when the engine or a run
/// fails (the weights, memory), else 0.
int runBench(const BenchSettings &settings, const BenchSource &source,
             plan::Plan plan);

/// 0 when `plan` can run the tests of `settings`; else prints why (prefixed
/// by `tool`) and returns the exit code: 2 for a batch beyond the plan's
/// sequences per step, 1 for a vocabulary too small for the prompts.
int checkBenchPlan(const BenchSettings &settings, const std::string &tool,
                   const plan::Plan &plan);

/// What the report says about the machine, the settings and `plan`.
BenchMetadata benchMetadata(const BenchSettings &settings,
                            const BenchSource &source, const plan::Plan &plan);

/// What the tests of one plan gave.
struct PlanRun {
  std::vector<BenchResult> results;
  /// Per result, in the same order: the tokens each sequence generated in
  /// the test's first (untimed) run. Decoding is greedy, so every run of a
  /// test generates the same tokens.
  std::vector<std::vector<std::vector<int32_t>>> tokens;
  /// Why the engine could not be made for the plan (engineFailed: the
  /// weights, memory, a kernel the backend lacks) or a run failed; empty
  /// when every test ran.
  std::string error;
  bool engineFailed = false;
};

/// The logits `plan` gives for the next token of sequence `sequence` of
/// `test` after `history` (tokens it generated): the test's prompt of that
/// sequence followed by `history`, prefilled alone on a new engine with
/// the logits kept. Teacher forcing makes the distribution depend on the
/// tokens only, not on how the run that made them was batched or rounded.
/// False with `error` set when the engine or the run fails.
bool tokenLogits(const BenchSettings &settings, const plan::Plan &plan,
                 const BenchResult &test, size_t sequence,
                 const std::vector<int32_t> &history,
                 std::vector<float> &logits, std::string &error);

/// Makes an engine for `plan` as `settings` say and runs every test on it.
/// `label` prefixes the progress line that stderr shows when it is a
/// terminal.
PlanRun runBenchTests(const BenchSettings &settings, plan::Plan plan,
                      const std::string &label);

/// Prints `error` as the tools do: as it is when it names its file
/// ("FILE: error: ..."), else after "TOOL: error: ".
void printBenchError(const std::string &tool, const std::string &error);

/// The prompt of sequence `seq` with `tokens` ids: deterministic, spread
/// over the vocabulary, and different for every sequence.
std::vector<int32_t> benchPrompt(int64_t seq, int64_t tokens, int64_t vocab);

} // namespace strata::tools

#endif // STRATA_TOOLS_COMMON_BENCHCOMMAND_H
