#include "runtime/plan/PlanSummary.h"

#include "runtime/plan/PlanText.h"

#include <cstdio>
#include <map>
#include <optional>
#include <sstream>

namespace strata::plan {

namespace {

enum class AttentionKind { Softmax, Linear };

/// Which attention a kernel computes; none for the kernels that are not
/// attention.
std::optional<AttentionKind> attentionKind(Kernel k) {
  switch (k) {
  case Kernel::Attention:
  case Kernel::PrefillAttention:
  case Kernel::ExtendAttention:
  case Kernel::PagedDecodeAttention:
  case Kernel::TreeAttention:
    return AttentionKind::Softmax;
  case Kernel::LinearAttention:
  case Kernel::LightningPrefill:
  case Kernel::LightningDecode:
    return AttentionKind::Linear;
  case Kernel::Embedding:
  case Kernel::RmsNorm:
  case Kernel::HeadNorm:
  case Kernel::AddRmsNorm:
  case Kernel::Linear:
  case Kernel::SplitHeads:
  case Kernel::MergeHeads:
  case Kernel::HeadSlice:
  case Kernel::SiluMul:
  case Kernel::Silu:
  case Kernel::SigmoidMul:
  case Kernel::Add:
  case Kernel::Swiglu:
  case Kernel::Rope:
  case Kernel::KvAppend:
  case Kernel::RopeKvWrite:
  case Kernel::Logits:
    return std::nullopt;
  }
  return std::nullopt;
}

/// "packed x6": each name with how often it occurs, in first-seen order.
std::string countList(const std::vector<std::string> &names) {
  std::vector<std::pair<std::string, int>> counts;
  for (const std::string &n : names) {
    auto it = counts.begin();
    while (it != counts.end() && it->first != n)
      ++it;
    if (it == counts.end())
      counts.emplace_back(n, 1);
    else
      ++it->second;
  }
  std::string s;
  for (const auto &[name, count] : counts)
    s += (s.empty() ? "" : ", ") + name + " x" + std::to_string(count);
  return s;
}

struct ProgramChoices {
  std::vector<std::string> ropeKv;    ///< one rope_kv_write variant per launch
  std::vector<std::string> attention; ///< one kernel name per launch
  /// The model layer of every attention launch is its place among the
  /// program's attention launches, which are issued one per layer in layer
  /// order (a launch's own layer field counts the caches or states of its
  /// kind only).
  std::map<int64_t, AttentionKind> layerKinds;
};

ProgramChoices choicesOf(const Program &p) {
  ProgramChoices c;
  int64_t ordinal = 0;
  for (const Launch &l : p.launches) {
    if (l.kernel() == Kernel::RopeKvWrite)
      c.ropeKv.push_back(toString(l.as<RopeKvWriteParams>().variant));
    if (auto kind = attentionKind(l.kernel())) {
      c.attention.push_back(kernelName(l.kernel()));
      c.layerKinds[ordinal] = *kind;
      ++ordinal;
    }
  }
  return c;
}

std::string layerKindLine(const std::map<int64_t, AttentionKind> &kinds) {
  std::vector<int64_t> softmax, linear;
  for (const auto &[layer, kind] : kinds)
    (kind == AttentionKind::Softmax ? softmax : linear).push_back(layer);
  std::string s;
  if (!softmax.empty())
    s += "softmax on " + formatLayerList(softmax);
  if (!linear.empty())
    s += (s.empty() ? "" : "; ") + std::string("lightning (linear) on ") +
         formatLayerList(linear);
  return s.empty() ? "none" : s;
}

} // namespace

std::string formatLayerList(const std::vector<int64_t> &layers) {
  std::string s;
  for (size_t i = 0; i < layers.size();) {
    size_t j = i;
    while (j + 1 < layers.size() && layers[j + 1] == layers[j] + 1)
      ++j;
    s += (s.empty() ? "" : ",") + std::to_string(layers[i]);
    if (j > i)
      s += (j == i + 1 ? "," : "-") + std::to_string(layers[j]);
    i = j + 1;
  }
  return s;
}

std::string summarizePlan(const Plan &plan) {
  std::ostringstream os;
  const int64_t layers = plan.kvCache.layers + plan.linearState.layers;
  os << "model '" << plan.modelName << "': " << layers << " layer"
     << (layers == 1 ? "" : "s") << ", vocab " << plan.vocabSize << ", "
     << plan.weights.size() << " weight tensors, "
     << formatBytes(weightBytes(plan)) << "\n";
  os << "fusions: " << describeFusions(plan) << "\n";
  // Every program runs the same layers; the decode program (else the
  // first) names their attention kinds.
  const Program *reference =
      plan.programs.empty() ? nullptr : &plan.programs.front();
  for (const Program &p : plan.programs)
    if (p.phase == "decode")
      reference = &p;
  if (reference)
    os << "attention per layer: "
       << layerKindLine(choicesOf(*reference).layerKinds) << "\n";

  size_t phaseWidth = 7;
  for (const Program &p : plan.programs)
    phaseWidth = std::max(phaseWidth, p.phase.size());
  std::vector<std::string> ropeColumn;
  size_t ropeWidth = 13;
  for (const Program &p : plan.programs) {
    ProgramChoices c = choicesOf(p);
    ropeColumn.push_back(c.ropeKv.empty() ? "unfused" : countList(c.ropeKv));
    ropeWidth = std::max(ropeWidth, ropeColumn.back().size());
  }
  char line[512];
  std::snprintf(line, sizeof(line), "%-*s  %8s  %-*s  %s\n", int(phaseWidth),
                "program", "launches", int(ropeWidth), "rope+KV write",
                "attention kernels");
  os << line;
  for (size_t i = 0; i < plan.programs.size(); ++i) {
    const Program &p = plan.programs[i];
    ProgramChoices c = choicesOf(p);
    std::snprintf(line, sizeof(line), "%-*s  %8zu  %-*s  %s\n", int(phaseWidth),
                  p.phase.c_str(), p.launches.size(), int(ropeWidth),
                  ropeColumn[i].c_str(), countList(c.attention).c_str());
    os << line;
  }
  return os.str();
}

} // namespace strata::plan
