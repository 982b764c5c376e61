#include "tools/common/Ablation.h"

#include "runtime/plan/PlanText.h"
#include "tools/common/BenchJson.h"
#include "tools/common/DecodeRoofline.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <cstdio>
#include <optional>

namespace strata::tools {

TokenDifference firstDifference(const PlanRun &run, const PlanRun &reference,
                                std::optional<int64_t> batch) {
  TokenDifference d;
  const size_t tests = std::max(run.tokens.size(), reference.tokens.size());
  for (size_t t = 0; t < tests; ++t) {
    if (batch) {
      const PlanRun &either = t < run.results.size() ? run : reference;
      if (t >= either.results.size() || either.results[t].batch != *batch)
        continue;
    }
    static const std::vector<std::vector<int32_t>> kNone;
    const auto &mine = t < run.tokens.size() ? run.tokens[t] : kNone;
    const auto &theirs =
        t < reference.tokens.size() ? reference.tokens[t] : kNone;
    const size_t seqs = std::max(mine.size(), theirs.size());
    for (size_t s = 0; s < seqs; ++s) {
      static const std::vector<int32_t> kEmpty;
      const auto &a = s < mine.size() ? mine[s] : kEmpty;
      const auto &b = s < theirs.size() ? theirs[s] : kEmpty;
      const size_t n = std::max(a.size(), b.size());
      for (size_t i = 0; i < n; ++i) {
        const int32_t x = i < a.size() ? a[i] : -1;
        const int32_t y = i < b.size() ? b[i] : -1;
        if (x == y && i < a.size() && i < b.size())
          continue;
        d.differs = true;
        d.result = t;
        d.sequence = s;
        d.position = i;
        d.token = x;
        d.reference = y;
        return d;
      }
    }
  }
  return d;
}

double logitGap(const std::vector<float> &logits, int32_t token) {
  float best = logits.at(size_t(token)), scale = 0;
  for (float v : logits) {
    best = std::max(best, v);
    scale = std::max(scale, std::fabs(v));
  }
  return scale > 0 ? double(best - logits[size_t(token)]) / double(scale)
                   : 0.0;
}

namespace {

/// What became of one plan.
enum class Outcome {
  Reference, ///< the first plan, which the others are held against
  Same,      ///< ran, and generated the reference's tokens
  NearTie,   ///< ran, and parted from the reference's tokens at a near-tie
  Differ,    ///< ran, and generated other tokens
  NotRun,    ///< the backend made no engine for it
};

const char *toString(Outcome o) {
  switch (o) {
  case Outcome::Reference:
    return "reference";
  case Outcome::Same:
    return "same";
  case Outcome::NearTie:
    return "near-tie";
  case Outcome::Differ:
    return "differ";
  case Outcome::NotRun:
    return "not run";
  }
  return "?";
}

/// The verdict on the tests of one batch size (or of all of them).
struct Verdict {
  Outcome outcome = Outcome::Same;
  TokenDifference difference;
};

struct PlanOutcome {
  Outcome outcome = Outcome::NotRun; ///< over every test
  PlanRun run;
  TokenDifference difference; ///< the first one over every test
  std::map<int64_t, Verdict> byBatch;
};

/// Same, NearTie or Differ for the first difference `d` of a plan's run:
/// a near-tie when the reference's logits there put this plan's token
/// within kNearTieGap of its best.
Verdict judge(const BenchSettings &s, const plan::Plan &reference,
              const PlanRun &run, TokenDifference d) {
  Verdict v;
  if (!d.differs)
    return v;
  v.outcome = Outcome::Differ;
  if (d.token >= 0 && d.reference >= 0 && d.result < run.results.size() &&
      d.result < run.tokens.size() &&
      d.sequence < run.tokens[d.result].size()) {
    // Both runs generated the same tokens before this one.
    const std::vector<int32_t> &mine = run.tokens[d.result][d.sequence];
    const std::vector<int32_t> history(
        mine.begin(), mine.begin() + std::ptrdiff_t(d.position));
    std::vector<float> logits;
    std::string error;
    if (tokenLogits(s, reference, run.results[d.result], d.sequence, history,
                    logits, error) &&
        size_t(d.token) < logits.size()) {
      d.gap = logitGap(logits, d.token);
      if (d.gap <= kNearTieGap)
        v.outcome = Outcome::NearTie;
    }
  }
  v.difference = d;
  return v;
}

std::string format(const char *fmt, double a, double b = 0) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), fmt, a, b);
  return buf;
}

/// The result of test `decode` at `batch`, when the run has it.
const BenchResult *resultOf(const PlanRun &run, bool decode, int64_t batch) {
  for (const BenchResult &r : run.results)
    if (r.decode == decode && r.batch == batch)
      return &r;
  return nullptr;
}

double meanTokensPerSecond(const BenchResult &r) {
  return meanAndStddev(r.tokensPerSecond()).mean;
}

/// "pp -3.1%, tg +0.4%": each test's mean tokens/s against the reference's.
std::string changeCell(const PlanRun &run, const PlanRun &reference,
                       int64_t batch) {
  std::string cell;
  for (bool decode : {false, true}) {
    const BenchResult *r = resultOf(run, decode, batch);
    const BenchResult *ref = resultOf(reference, decode, batch);
    if (!r || !ref || meanTokensPerSecond(*ref) <= 0)
      continue;
    const double change =
        100.0 * (meanTokensPerSecond(*r) / meanTokensPerSecond(*ref) - 1.0);
    cell += (cell.empty() ? "" : ", ") + std::string(decode ? "tg " : "pp ") +
            format("%+.1f%%", change);
  }
  return cell.empty() ? "-" : cell;
}

std::string tokensPerSecondCell(const PlanOutcome &o, bool decode,
                                int64_t batch, int64_t tokens) {
  if (tokens == 0)
    return "-";
  if (o.outcome == Outcome::NotRun)
    return "not run";
  const BenchResult *r = resultOf(o.run, decode, batch);
  if (!r)
    return "-";
  Stats s = meanAndStddev(r->tokensPerSecond());
  return format("%.2f ± %.2f", s.mean, s.stddev);
}

/// The mean cached context of the tg test (BenchCommand.cpp).
std::optional<double> meanContext(const BenchSettings &s) {
  if (s.genTokens == 0)
    return std::nullopt;
  return s.decodeMeanContext();
}

/// Bytes of a decode step of `batch`: what the roofline counts (weights,
/// KV cache, linear state) plus the activations the launches move.
std::string bytesCell(const plan::Plan &plan, const BenchSettings &s,
                      int64_t batch) {
  std::optional<double> context = meanContext(s);
  if (!context)
    return "-";
  const double bytes = decodeStepBytes(plan, batch, *context).total() +
                       decodeActivationBytes(plan, batch);
  return plan::formatBytes(uint64_t(bytes));
}

std::string describeDifference(const PlanRun &run, const TokenDifference &d) {
  std::string where = "a test the reference did not run";
  if (d.result < run.results.size()) {
    const BenchResult &r = run.results[d.result];
    where = r.test + " batch " + std::to_string(r.batch);
  }
  auto token = [](int32_t t) {
    return t < 0 ? std::string("none (ended)") : std::to_string(t);
  };
  std::string text = where + ", sequence " + std::to_string(d.sequence) +
                     ", token " + std::to_string(d.position) + ": " +
                     token(d.token) + " where the reference has " +
                     token(d.reference);
  if (d.gap >= 0)
    text += " (its logit " + format("%.2f", 100.0 * d.gap) +
            "% of the logit range below the reference's best)";
  return text;
}

void printMarkdownReport(const BenchSettings &s, const BenchMetadata &meta,
                         const std::vector<AblationPlan> &plans,
                         const std::vector<PlanOutcome> &outcomes) {
  printMarkdownHeader(stdout, meta);
  const bool batchColumn = s.batches.size() > 1;
  const std::string pp = "pp" + std::to_string(s.promptTokens);
  const std::string tg = s.decodeTestName();
  std::vector<std::string> header{"fusion left out"};
  if (batchColumn)
    header.push_back("batch");
  for (const char *h : {"launches per decode step", "bytes per decode step",
                        "of which activations"})
    header.push_back(h);
  header.push_back(pp + " tokens/s");
  header.push_back(tg + " tokens/s");
  // What the reference is: all fusions on unless it says otherwise.
  const plan::Plan &reference = plans.front().plan;
  header.push_back(!reference.fusions.empty() &&
                           plan::fusionsOff(reference).empty()
                       ? "change vs all fusions on"
                       : "change vs " + plans.front().label);
  header.push_back("greedy tokens");
  std::vector<std::vector<std::string>> rows{header};
  for (size_t i = 0; i < plans.size(); ++i) {
    const PlanOutcome &o = outcomes[i];
    for (int64_t batch : s.batches) {
      std::vector<std::string> row{plans[i].label};
      if (batchColumn)
        row.push_back(std::to_string(batch));
      row.push_back(std::to_string(decodeLaunches(plans[i].plan)));
      row.push_back(bytesCell(plans[i].plan, s, batch));
      row.push_back(plan::formatBytes(
          uint64_t(decodeActivationBytes(plans[i].plan, batch))));
      row.push_back(tokensPerSecondCell(o, false, batch, s.promptTokens));
      row.push_back(tokensPerSecondCell(o, true, batch, s.genTokens));
      row.push_back(o.outcome == Outcome::Reference ||
                            o.outcome == Outcome::NotRun
                        ? "-"
                        : changeCell(o.run, outcomes.front().run, batch));
      // The verdict of this batch size's tests.
      Outcome verdict = o.outcome;
      if (auto it = o.byBatch.find(batch); it != o.byBatch.end())
        verdict = it->second.outcome;
      row.push_back(toString(verdict));
      rows.push_back(std::move(row));
    }
  }
  printMarkdownTable(stdout, rows);

  std::printf("\n");
  size_t ran = 0, differ = 0;
  for (size_t i = 1; i < plans.size(); ++i) {
    const PlanOutcome &o = outcomes[i];
    ran += o.outcome != Outcome::NotRun;
    for (const auto &[batch, v] : o.byBatch) {
      if (v.outcome != Outcome::Differ && v.outcome != Outcome::NearTie)
        continue;
      differ += v.outcome == Outcome::Differ;
      std::printf("%s: '%s' first at %s\n",
                  v.outcome == Outcome::Differ
                      ? "greedy tokens differ"
                      : "greedy tokens part at a near-tie",
                  plans[i].label.c_str(),
                  describeDifference(o.run, v.difference).c_str());
    }
    if (o.outcome == Outcome::NotRun)
      std::printf("not run: '%s': %s\n", plans[i].label.c_str(),
                  o.run.error.c_str());
  }
  if (differ == 0)
    std::printf("greedy tokens: the %zu plan%s that ran generated the "
                "reference's tokens in every test, every sequence%s\n",
                ran, ran == 1 ? "" : "s",
                std::any_of(outcomes.begin(), outcomes.end(),
                            [](const PlanOutcome &o) {
                              return o.outcome == Outcome::NearTie;
                            })
                    ? ", up to near-ties (a token within 3% of the logit "
                      "range of the reference's best, where rounding "
                      "decides; the sequences part there)"
                    : "");
}

void printJsonReport(const BenchMetadata &meta,
                     const std::vector<AblationPlan> &plans,
                     const std::vector<PlanOutcome> &outcomes,
                     const BenchSettings &s) {
  BenchJson doc = benchHeaderJson(meta);
  BenchJson ablation;
  ablation["reference"] = plans.front().label;
  bool identical = true, agree = true;
  BenchJson &list = ablation["plans"] = BenchJson::array();
  for (size_t i = 0; i < plans.size(); ++i) {
    const PlanOutcome &o = outcomes[i];
    const plan::Plan &p = plans[i].plan;
    identical &= o.outcome != Outcome::Differ && o.outcome != Outcome::NearTie;
    agree &= o.outcome != Outcome::Differ;
    BenchJson entry = {
        {"label", plans[i].label},
        {"source", plans[i].source},
        {"fusions",
         {{"on", plan::fusionsOn(p)}, {"left_out", plan::fusionsOff(p)}}},
        {"launches_per_decode_step", decodeLaunches(p)},
        {"greedy_tokens", toString(o.outcome)}};
    if (o.outcome == Outcome::NotRun)
      entry["error"] = o.run.error;
    if (o.outcome == Outcome::Differ || o.outcome == Outcome::NearTie) {
      const TokenDifference &d = o.difference;
      entry["first_difference"] = {
                                   {"logit_gap", d.gap >= 0 ? BenchJson(d.gap)
                                                            : BenchJson()},{"test", d.result < o.run.results.size()
                                                ? o.run.results[d.result].test
                                                : std::string()},
                                   {"batch", d.result < o.run.results.size()
                                                 ? o.run.results[d.result].batch
                                                 : int64_t(0)},
                                   {"sequence", d.sequence},
                                   {"position", d.position},
                                   {"token", d.token},
                                   {"reference_token", d.reference}};
    }
    BenchJson results = BenchJson::array();
    for (const BenchResult &r : o.run.results) {
      BenchJson row = benchResultJson(r, meta.bandwidthGBs);
      if (o.outcome != Outcome::Reference)
        if (const BenchResult *ref =
                resultOf(outcomes.front().run, r.decode, r.batch);
            ref && meanTokensPerSecond(*ref) > 0)
          row["change_vs_reference"] =
              meanTokensPerSecond(r) / meanTokensPerSecond(*ref) - 1.0;
      results.push_back(std::move(row));
    }
    // The plan's decode step at each batch, also for a plan that did not
    // run (it comes from the plan alone).
    BenchJson steps = BenchJson::array();
    for (int64_t batch : s.batches) {
      BenchJson step = {{"batch", batch},
                        {"activation_bytes", decodeActivationBytes(p, batch)}};
      if (std::optional<double> context = meanContext(s))
        step["roofline_bytes"] = decodeStepBytes(p, batch, *context).total();
      steps.push_back(std::move(step));
    }
    entry["decode_step"] = std::move(steps);
    entry["results"] = std::move(results);
    list.push_back(std::move(entry));
  }
  ablation["greedy_tokens_identical"] = identical;
  ablation["greedy_tokens_agree_up_to_near_ties"] = agree;
  doc["ablation"] = std::move(ablation);
  printJsonDocument(stdout, doc);
}

} // namespace

int runAblation(const BenchSettings &s, const BenchSource &source,
                std::vector<AblationPlan> plans) {
  const std::string &tool = source.tool;
  if (plans.empty()) {
    std::fprintf(stderr, "%s: error: no plan to compare\n", tool.c_str());
    return 2;
  }
  for (const AblationPlan &p : plans)
    if (int code = checkBenchPlan(s, tool, p.plan))
      return code;
  BenchMetadata meta = benchMetadata(s, source, plans.front().plan);
  meta.fusions = "reference " + meta.fusions +
                 "; each other plan leaves out what its row names";
  if (s.json)
    std::fprintf(stderr, "%s: device %s (%s; %s)\n", tool.c_str(),
                 meta.device.c_str(), meta.deviceName.c_str(),
                 meta.deviceWhy.c_str());

  std::vector<PlanOutcome> outcomes(plans.size());
  for (size_t i = 0; i < plans.size(); ++i) {
    PlanOutcome &o = outcomes[i];
    const std::string label = std::to_string(i + 1) + "/" +
                              std::to_string(plans.size()) + " " +
                              plans[i].label;
    o.run = runBenchTests(s, plans[i].plan, label);
    if (i == 0) {
      // Without the reference there is nothing to hold the others against.
      if (!o.run.error.empty()) {
        printBenchError(tool, "the reference plan (" + plans[0].label +
                                  "): " + o.run.error);
        return 1;
      }
      o.outcome = Outcome::Reference;
      continue;
    }
    if (o.run.engineFailed) {
      o.outcome = Outcome::NotRun;
      continue;
    }
    if (!o.run.error.empty()) {
      printBenchError(tool, "the plan " + plans[i].label + ": " + o.run.error);
      return 1;
    }
    // Each batch size's first difference, judged; the plan's verdict is
    // the worst of them (a difference that is no near-tie over one that
    // is), its difference the first of that verdict.
    o.outcome = Outcome::Same;
    for (int64_t batch : s.batches) {
      Verdict v = judge(s, plans[0].plan, o.run,
                        firstDifference(o.run, outcomes[0].run, batch));
      if (v.outcome != Outcome::Same &&
          (o.outcome == Outcome::Same ||
           (o.outcome == Outcome::NearTie && v.outcome == Outcome::Differ))) {
        o.outcome = v.outcome;
        o.difference = v.difference;
      }
      o.byBatch[batch] = v;
    }
  }

  if (s.json)
    printJsonReport(meta, plans, outcomes, s);
  else
    printMarkdownReport(s, meta, plans, outcomes);

  std::string differing;
  for (size_t i = 1; i < plans.size(); ++i)
    if (outcomes[i].outcome == Outcome::Differ)
      differing += (differing.empty() ? "'" : ", '") + plans[i].label + "'";
  if (differing.empty())
    return 0;
  // After the report, also where both streams go to one place.
  std::fflush(stdout);
  std::fprintf(stderr,
               "%s: error: the greedy tokens of %s differ from the reference "
               "plan's (%s)\n",
               tool.c_str(), differing.c_str(), plans.front().label.c_str());
  return 1;
}

} // namespace strata::tools
