#include "runtime/plan/Plan.h"

#include <type_traits>
#include <variant>

namespace strata::plan {

const char *toString(DType t) {
  switch (t) {
  case DType::F32:
    return "f32";
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  case DType::I32:
    return "i32";
  }
  return "?";
}

uint64_t byteWidth(DType t) {
  switch (t) {
  case DType::F16:
  case DType::BF16:
    return 2;
  case DType::F32:
  case DType::I32:
    return 4;
  }
  return 0;
}

const char *toString(BufferKind k) {
  switch (k) {
  case BufferKind::Arena:
    return "arena";
  case BufferKind::Weight:
    return "weight";
  case BufferKind::Input:
    return "input";
  case BufferKind::Output:
    return "output";
  case BufferKind::KvCache:
    return "kv_cache";
  case BufferKind::LinearState:
    return "linear_state";
  }
  return "?";
}

const char *toString(InputRole r) {
  switch (r) {
  case InputRole::None:
    return "none";
  case InputRole::TokenIds:
    return "token_ids";
  case InputRole::Positions:
    return "positions";
  case InputRole::ParentIds:
    return "parent_ids";
  case InputRole::Sequences:
    return "sequences";
  }
  return "?";
}

bool Buffer::operator==(const Buffer &o) const {
  return name == o.name && kind == o.kind && dtype == o.dtype &&
         shape == o.shape && arenaOffset == o.arenaOffset &&
         weight == o.weight && viewOf == o.viewOf && role == o.role;
}

bool Launch::operator==(const Launch &o) const {
  return paramsEqual(params, o.params) && inputs == o.inputs &&
         outputs == o.outputs && stream == o.stream;
}

std::string launchName(const Launch &l) {
  std::string name = kernelName(l.kernel());
  if (l.kernel() == Kernel::RopeKvWrite)
    name +=
        std::string("<") + toString(l.as<RopeKvWriteParams>().variant) + ">";
  return name;
}

namespace {
template <typename P, typename = void> struct HasLayer : std::false_type {};
template <typename P>
struct HasLayer<P, std::void_t<decltype(P::layer)>> : std::true_type {};
} // namespace

std::optional<int64_t> launchLayer(const Launch &l) {
  // The parameter structs with a layer field are the launches of one layer.
  return std::visit(
      [](const auto &p) -> std::optional<int64_t> {
        if constexpr (HasLayer<std::decay_t<decltype(p)>>::value)
          return p.layer;
        else
          return std::nullopt;
      },
      l.params);
}

bool Program::operator==(const Program &o) const {
  return phase == o.phase && numStreams == o.numStreams &&
         arenaBytes == o.arenaBytes && buffers == o.buffers &&
         launches == o.launches && events == o.events;
}

bool Plan::operator==(const Plan &o) const {
  return modelName == o.modelName && weightSeed == o.weightSeed &&
         weightInitStd == o.weightInitStd && vocabSize == o.vocabSize &&
         limits == o.limits && kvCache == o.kvCache &&
         linearState == o.linearState && weights == o.weights &&
         checkpoint == o.checkpoint && maxPositions == o.maxPositions &&
         programs == o.programs && tokenizer == o.tokenizer &&
         fusions == o.fusions;
}

std::vector<std::string> fusionsOn(const Plan &plan) {
  std::vector<std::string> names;
  for (const FusionPass &f : plan.fusions)
    if (f.enabled)
      names.push_back(f.name);
  return names;
}

std::vector<std::string> fusionsOff(const Plan &plan) {
  std::vector<std::string> names;
  for (const FusionPass &f : plan.fusions)
    if (!f.enabled)
      names.push_back(f.name);
  return names;
}

namespace {
std::string joined(const std::vector<std::string> &names) {
  std::string s;
  for (const std::string &n : names)
    s += (s.empty() ? "" : ", ") + n;
  return s;
}
} // namespace

std::string describeFusions(const Plan &plan) {
  if (plan.fusions.empty()) {
    for (const Program &p : plan.programs)
      if (p.phase == "forward")
        return "none (the generic forward, unfused)";
    return "none (the phase programs before the fusion passes)";
  }
  std::vector<std::string> on = fusionsOn(plan), off = fusionsOff(plan);
  if (off.empty())
    return joined(on) + " (all " + std::to_string(on.size()) + ")";
  return (on.empty() ? std::string("none") : joined(on)) +
         "; left out: " + joined(off);
}

int64_t numElements(const std::vector<Dim> &shape, int64_t tokens,
                    int64_t batch) {
  int64_t n = 1;
  for (const Dim &d : shape)
    n *= d.symbol == Symbol::Tokens  ? tokens
         : d.symbol == Symbol::Batch ? batch
                                     : d.value;
  return n;
}

int64_t numElements(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::vector<bool> weightsRead(const Plan &plan) {
  std::vector<bool> read(plan.weights.size(), false);
  for (const Program &p : plan.programs)
    for (const Launch &l : p.launches)
      for (int32_t b : l.inputs) {
        const Buffer &buf = p.buffers[size_t(b)];
        if (buf.kind == BufferKind::Weight && buf.weight >= 0 &&
            size_t(buf.weight) < read.size())
          read[size_t(buf.weight)] = true;
      }
  return read;
}

} // namespace strata::plan
