#include "runtime/plan/Plan.h"

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
    name += std::string("<") + toString(l.as<RopeKvWriteParams>().variant) +
            ">";
  return name;
}

std::optional<int64_t> launchLayer(const Launch &l) {
  switch (l.kernel()) {
  case Kernel::KvAppend:
    return l.as<KvAppendParams>().layer;
  case Kernel::Attention:
    return l.as<AttentionParams>().layer;
  case Kernel::LinearAttention:
    return l.as<LinearAttentionParams>().layer;
  case Kernel::RopeKvWrite:
    return l.as<RopeKvWriteParams>().layer;
  case Kernel::ExtendAttention:
    return l.as<ExtendAttentionParams>().layer;
  case Kernel::PagedDecodeAttention:
    return l.as<PagedDecodeAttentionParams>().layer;
  case Kernel::TreeAttention:
    return l.as<TreeAttentionParams>().layer;
  case Kernel::LightningPrefill:
    return l.as<LightningPrefillParams>().layer;
  case Kernel::LightningDecode:
    return l.as<LightningDecodeParams>().layer;
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
  case Kernel::PrefillAttention:
  case Kernel::Logits:
    return std::nullopt;
  }
  return std::nullopt;
}

bool Program::operator==(const Program &o) const {
  return phase == o.phase && numStreams == o.numStreams &&
         arenaBytes == o.arenaBytes && buffers == o.buffers &&
         launches == o.launches && events == o.events;
}

bool Plan::operator==(const Plan &o) const {
  return modelName == o.modelName && weightSeed == o.weightSeed &&
         weightInitStd == o.weightInitStd &&
         vocabSize == o.vocabSize && limits == o.limits &&
         kvCache == o.kvCache && linearState == o.linearState &&
         weights == o.weights && programs == o.programs;
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
