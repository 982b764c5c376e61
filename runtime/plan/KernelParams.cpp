#include "runtime/plan/KernelParams.h"

#include <sstream>
#include <type_traits>

namespace strata::plan {

const char *toString(RopePairing v) {
  switch (v) {
  case RopePairing::Neox:
    return "neox";
  case RopePairing::GptJ:
    return "gptj";
  }
  return "?";
}

const char *toString(RopeScaling v) {
  switch (v) {
  case RopeScaling::None:
    return "none";
  case RopeScaling::Linear:
    return "linear";
  case RopeScaling::Llama3:
    return "llama3";
  }
  return "?";
}

const char *toString(RopeKvVariant v) {
  switch (v) {
  case RopeKvVariant::Packed:
    return "packed";
  case RopeKvVariant::Continuous:
    return "continuous";
  case RopeKvVariant::Tree:
    return "tree";
  }
  return "?";
}

namespace {

template <size_t I = 0> KernelParams paramsAt(size_t index) {
  if constexpr (I + 1 == kNumKernels)
    return std::variant_alternative_t<I, KernelParams>();
  else
    return index == I
               ? KernelParams(std::variant_alternative_t<I, KernelParams>())
               : paramsAt<I + 1>(index);
}

} // namespace

KernelParams paramsOf(Kernel k) { return paramsAt(static_cast<size_t>(k)); }

const char *kernelName(Kernel k) {
  switch (k) {
  case Kernel::Embedding:
    return "embedding";
  case Kernel::RmsNorm:
    return "rms_norm";
  case Kernel::HeadNorm:
    return "head_norm";
  case Kernel::AddRmsNorm:
    return "add_rms_norm";
  case Kernel::Linear:
    return "linear";
  case Kernel::SplitHeads:
    return "split_heads";
  case Kernel::MergeHeads:
    return "merge_heads";
  case Kernel::HeadSlice:
    return "head_slice";
  case Kernel::SiluMul:
    return "silu_mul";
  case Kernel::Silu:
    return "silu";
  case Kernel::SigmoidMul:
    return "sigmoid_mul";
  case Kernel::Add:
    return "add";
  case Kernel::Swiglu:
    return "swiglu";
  case Kernel::Rope:
    return "rope";
  case Kernel::KvAppend:
    return "kv_append";
  case Kernel::Attention:
    return "attention<softmax>";
  case Kernel::LinearAttention:
    return "attention<linear>";
  case Kernel::RopeKvWrite:
    return "rope_kv_write";
  case Kernel::PrefillAttention:
    return "prefill_attention";
  case Kernel::ExtendAttention:
    return "extend_attention";
  case Kernel::PagedDecodeAttention:
    return "paged_decode_attention";
  case Kernel::TreeAttention:
    return "tree_attention";
  case Kernel::LightningPrefill:
    return "lightning_prefill";
  case Kernel::LightningDecode:
    return "lightning_decode";
  case Kernel::Logits:
    return "logits";
  }
  return "?";
}

std::string formatParams(const KernelParams &params) {
  std::ostringstream os;
  bool first = true;
  forEachField(params, [&](const char *name, const auto &v) {
    using T = std::decay_t<decltype(v)>;
    // The variant is part of the launch's name: rope_kv_write<packed>.
    if constexpr (std::is_same_v<T, RopeKvVariant>)
      return;
    os << (first ? "" : ", ") << name << " = ";
    first = false;
    if constexpr (std::is_same_v<T, std::vector<double>>) {
      os << '[';
      for (size_t k = 0; k < v.size(); ++k)
        os << (k ? ", " : "") << v[k];
      os << ']';
    } else if constexpr (std::is_same_v<T, bool>) {
      os << (v ? "true" : "false");
    } else if constexpr (std::is_enum_v<T>) {
      os << toString(v);
    } else {
      os << v;
    }
  });
  return os.str();
}

bool paramsEqual(const KernelParams &a, const KernelParams &b) {
  if (a.index() != b.index())
    return false;
  // Both hold the same struct: compare its fields in order.
  using Value = std::variant<int64_t, double, bool, RopePairing, RopeScaling,
                             RopeKvVariant, std::vector<double>>;
  std::vector<Value> left, right;
  forEachField(a, [&](const char *, const auto &v) { left.push_back(v); });
  forEachField(b, [&](const char *, const auto &v) { right.push_back(v); });
  return left == right;
}

} // namespace strata::plan
