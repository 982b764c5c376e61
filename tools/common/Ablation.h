// The fusion ablation of `strata bench MODEL.yaml --ablate-passes` and
// `strata-bench --ablate-passes PLAN...`: the benchmark's tests run on
// several plans of one model, each built with another set of fusion
// passes, one after another in one process, and one table says what each
// fusion is worth (launches and bytes of a decode step, prefill and decode
// tokens/s against the reference plan) and whether the program still
// computes the same thing without it (every test's greedy tokens against
// the reference's).
#ifndef STRATA_TOOLS_COMMON_ABLATION_H
#define STRATA_TOOLS_COMMON_ABLATION_H

#include "runtime/plan/Plan.h"
#include "tools/common/BenchCommand.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace strata::tools {

struct AblationPlan {
  /// The table's first column: the fusion the plan leaves out.
  std::string label;
  /// Where it came from, for the report ("file M.splan", "compiled from
  /// M.yaml without strata-fuse-qkv").
  std::string source;
  plan::Plan plan;
};

/// Where a plan's greedy tokens first differ from the reference's.
struct TokenDifference {
  bool differs = false;
  size_t result = 0;   ///< index into the runs' results (test and batch)
  size_t sequence = 0; ///< within the test's batch
  size_t position = 0; ///< generated token, from 0
  /// The two tokens there; -1 where one list has ended (a sequence that
  /// stopped earlier, or a test one run lacks).
  int32_t token = -1;
  int32_t reference = -1;
  /// How far below the reference's best logit this plan's token is there,
  /// over the largest logit magnitude (logitGap); negative when not
  /// measured (a sequence that ended, or the reference's logits could not
  /// be had).
  double gap = -1;
};

/// The token choices of two plans part at a near-tie when this plan's
/// token is within this fraction of the logit range of the reference's
/// best: what rounding differences between fused and unfused kernels can
/// move a logit by (the GPU engine tests' tolerance), so such a difference
/// says nothing about the fusion's correctness.
constexpr double kNearTieGap = 0.03;

/// (max(logits) - logits[token]) / max |logits|: 0 for the best token.
/// Needs a token inside `logits` and a non-zero row.
double logitGap(const std::vector<float> &logits, int32_t token);

/// Compares `run`'s tokens with `reference`'s test by test, sequence by
/// sequence and token by token: both ran the same tests with the same
/// prompts, so they must agree everywhere. With `batch`, only the tests at
/// that batch size are compared.
TokenDifference firstDifference(const PlanRun &run, const PlanRun &reference,
                                std::optional<int64_t> batch = std::nullopt);

/// Runs the tests of `settings` on each plan in turn, the first being the
/// reference, compares each plan's greedy tokens with the reference's and
/// prints the report on stdout: a markdown table (one row per plan and
/// batch size) or, with settings.json, a JSON document. A plan for which
/// the backend makes no engine (a kernel it lacks, memory) is reported as
/// not run; the others must generate the reference's tokens.
///
/// Where a plan's tokens first differ, the reference plan's logits for
/// that token are computed from the prompt and the tokens both generated
/// before it (tokenLogits): a plan whose token there is within kNearTieGap
/// of the reference's best is reported as parting at a near-tie, which is
/// not a failure; every other difference is.
///
/// Returns 0 when every plan that ran generated the reference's tokens, up
/// to near-ties; 1 when a plan's tokens differ (said on stderr too), when the reference
/// cannot run, or when a run fails; 2 when a batch exceeds a plan's
/// sequences per step.
int runAblation(const BenchSettings &settings, const BenchSource &source,
                std::vector<AblationPlan> plans);

} // namespace strata::tools

#endif // STRATA_TOOLS_COMMON_ABLATION_H
