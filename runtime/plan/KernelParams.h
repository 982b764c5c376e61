// The kernels a plan launches and the parameters of each, as typed data.
//
// A launch holds one parameter struct in a std::variant whose alternatives
// follow plan::Kernel in order, so the kernel of a launch is the index of its
// parameters: the two cannot disagree. Every struct lists its fields once,
// in `fields`, under the name of the op attribute they come from; the plan
// file, the plan text and the validation walk that one list. The values are
// filled by the compiler (codegen/PlanLowering.cpp), which also supplies the
// defaults of optional attributes: the runtime never assumes a value.
#ifndef STRATA_RUNTIME_PLAN_KERNELPARAMS_H
#define STRATA_RUNTIME_PLAN_KERNELPARAMS_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace strata::plan {

/// Every kernel a plan can launch. The fused kernels are chosen by the
/// passes; the generic ones (Rope, KvAppend, Attention, LinearAttention)
/// are what an unfused program runs, on the CPU reference only.
enum class Kernel : uint8_t {
  Embedding = 0,
  RmsNorm,
  HeadNorm,
  AddRmsNorm,
  Linear,
  SplitHeads,
  MergeHeads,
  HeadSlice,
  SiluMul,
  Silu,
  SigmoidMul,
  Add,
  Swiglu,
  Rope,
  KvAppend,
  Attention,       ///< the generic softmax attention: attention<softmax>
  LinearAttention, ///< the generic linear attention: attention<linear>
  RopeKvWrite,
  PrefillAttention,
  ExtendAttention,
  PagedDecodeAttention,
  TreeAttention,
  LightningPrefill,
  LightningDecode,
  Logits,
};

/// How rotary pairs are formed: (i, i + rot/2) or (2i, 2i + 1).
enum class RopePairing : uint8_t { Neox = 0, GptJ = 1 };
/// Frequency scaling of the rotary table.
enum class RopeScaling : uint8_t { None = 0, Linear = 1, Llama3 = 2 };
/// Which rope_kv_write kernel runs: the prefill's packed QKV rotated in
/// place, queries written out after a non-empty cache, or a draft tree
/// with explicit positions.
enum class RopeKvVariant : uint8_t { Packed = 0, Continuous = 1, Tree = 2 };

const char *toString(RopePairing v);
const char *toString(RopeScaling v);
const char *toString(RopeKvVariant v);

/// The largest code of each enum, for readers of untrusted bytes.
template <typename E> constexpr uint8_t maxCode();
template <> constexpr uint8_t maxCode<RopePairing>() { return 1; }
template <> constexpr uint8_t maxCode<RopeScaling>() { return 2; }
template <> constexpr uint8_t maxCode<RopeKvVariant>() { return 2; }

/// The rotary table of a rope or rope_kv_write launch.
struct RotaryParams {
  int64_t rotaryDim = 0;
  double theta = 0;
  RopePairing pairing = RopePairing::Neox;
  RopeScaling scaling = RopeScaling::None;
  double scalingFactor = 0;
  double lowFreqFactor = 0;
  double highFreqFactor = 0;
  int64_t originalMaxPositions = 0;
  template <typename S, typename F> static void fields(S &s, F &&f) {
    f("rotary_dim", s.rotaryDim);
    f("theta", s.theta);
    f("pairing", s.pairing);
    f("scaling", s.scaling);
    f("scaling_factor", s.scalingFactor);
    f("low_freq_factor", s.lowFreqFactor);
    f("high_freq_factor", s.highFreqFactor);
    f("original_max_positions", s.originalMaxPositions);
  }
};

/// A kernel without parameters: its operands say everything.
template <Kernel K> struct NoParams {
  static constexpr Kernel kKernel = K;
  template <typename S, typename F> static void fields(S &, F &&) {}
};
using EmbeddingParams = NoParams<Kernel::Embedding>;
using LinearParams = NoParams<Kernel::Linear>;
using SplitHeadsParams = NoParams<Kernel::SplitHeads>;
using MergeHeadsParams = NoParams<Kernel::MergeHeads>;
using SiluMulParams = NoParams<Kernel::SiluMul>;
using SiluParams = NoParams<Kernel::Silu>;
using SigmoidMulParams = NoParams<Kernel::SigmoidMul>;
using SwigluParams = NoParams<Kernel::Swiglu>;

/// rms_norm and head_norm: the epsilon under the square root.
template <Kernel K> struct NormParams {
  static constexpr Kernel kKernel = K;
  double eps = 0;
  template <typename S, typename F> static void fields(S &s, F &&f) {
    f("eps", s.eps);
  }
};
using RmsNormParams = NormParams<Kernel::RmsNorm>;
using HeadNormParams = NormParams<Kernel::HeadNorm>;

/// add_rms_norm: sum = x_scale * x + residual_scale * residual, normed.
struct AddRmsNormParams {
  static constexpr Kernel kKernel = Kernel::AddRmsNorm;
  double eps = 0;
  double xScale = 0;
  double residualScale = 0;
  template <typename S, typename F> static void fields(S &s, F &&f) {
    f("eps", s.eps);
    f("x_scale", s.xScale);
    f("residual_scale", s.residualScale);
  }
};

/// head_slice: heads [first, first + num_heads) of every token.
struct HeadSliceParams {
  static constexpr Kernel kKernel = Kernel::HeadSlice;
  int64_t first = 0;
  int64_t numHeads = 0;
  template <typename S, typename F> static void fields(S &s, F &&f) {
    f("first", s.first);
    f("num_heads", s.numHeads);
  }
};

/// add: lhs_scale * lhs + rhs_scale * rhs.
struct AddParams {
  static constexpr Kernel kKernel = Kernel::Add;
  double lhsScale = 0;
  double rhsScale = 0;
  template <typename S, typename F> static void fields(S &s, F &&f) {
    f("lhs_scale", s.lhsScale);
    f("rhs_scale", s.rhsScale);
  }
};

struct RopeParams {
  static constexpr Kernel kKernel = Kernel::Rope;
  RotaryParams rotary;
  template <typename S, typename F> static void fields(S &s, F &&f) {
    RotaryParams::fields(s.rotary, f);
  }
};

struct KvAppendParams {
  static constexpr Kernel kKernel = Kernel::KvAppend;
  int64_t layer = 0; ///< among the softmax layers
  template <typename S, typename F> static void fields(S &s, F &&f) {
    f("layer", s.layer);
  }
};

/// The generic softmax attention against the cache.
struct AttentionParams {
  static constexpr Kernel kKernel = Kernel::Attention;
  int64_t layer = 0;
  double scale = 0;
  bool causal = false;
  int64_t slidingWindow = 0; ///< 0: unlimited
  template <typename S, typename F> static void fields(S &s, F &&f) {
    f("layer", s.layer);
    f("scale", s.scale);
    f("causal", s.causal);
    f("sliding_window", s.slidingWindow);
  }
};

/// Linear attention, generic (attention<linear>) or lightning decode: a
/// per-head exponential decay rate.
template <Kernel K> struct DecayParams {
  static constexpr Kernel kKernel = K;
  int64_t layer = 0; ///< among the linear-attention layers
  std::vector<double> decaySlopes;
  template <typename S, typename F> static void fields(S &s, F &&f) {
    f("layer", s.layer);
    f("decay_slopes", s.decaySlopes);
  }
};
using LinearAttentionParams = DecayParams<Kernel::LinearAttention>;
using LightningDecodeParams = DecayParams<Kernel::LightningDecode>;

struct LightningPrefillParams {
  static constexpr Kernel kKernel = Kernel::LightningPrefill;
  int64_t layer = 0;
  std::vector<double> decaySlopes;
  int64_t chunkSize = 0;
  template <typename S, typename F> static void fields(S &s, F &&f) {
    f("layer", s.layer);
    f("decay_slopes", s.decaySlopes);
    f("chunk_size", s.chunkSize);
  }
};

struct RopeKvWriteParams {
  static constexpr Kernel kKernel = Kernel::RopeKvWrite;
  RopeKvVariant variant = RopeKvVariant::Packed;
  int64_t layer = 0;
  int64_t numQHeads = 0;
  int64_t numKvHeads = 0;
  RotaryParams rotary;
  /// The QK-norm epsilon; 0 when the launch has no QK-norm weights.
  double qkNormEps = 0;
  template <typename S, typename F> static void fields(S &s, F &&f) {
    f("variant", s.variant);
    f("layer", s.layer);
    f("num_q_heads", s.numQHeads);
    f("num_kv_heads", s.numKvHeads);
    RotaryParams::fields(s.rotary, f);
    f("qk_norm_eps", s.qkNormEps);
  }
};

/// prefill_attention reads K and V from the packed QKV, not the cache.
struct PrefillAttentionParams {
  static constexpr Kernel kKernel = Kernel::PrefillAttention;
  int64_t numQHeads = 0;
  int64_t numKvHeads = 0;
  double scale = 0;
  int64_t slidingWindow = 0;
  template <typename S, typename F> static void fields(S &s, F &&f) {
    f("num_q_heads", s.numQHeads);
    f("num_kv_heads", s.numKvHeads);
    f("scale", s.scale);
    f("sliding_window", s.slidingWindow);
  }
};

/// extend_attention and tree_attention: queries against the paged cache.
template <Kernel K> struct CachedAttentionParams {
  static constexpr Kernel kKernel = K;
  int64_t layer = 0;
  double scale = 0;
  int64_t slidingWindow = 0;
  template <typename S, typename F> static void fields(S &s, F &&f) {
    f("layer", s.layer);
    f("scale", s.scale);
    f("sliding_window", s.slidingWindow);
  }
};
using ExtendAttentionParams = CachedAttentionParams<Kernel::ExtendAttention>;
using TreeAttentionParams = CachedAttentionParams<Kernel::TreeAttention>;

struct PagedDecodeAttentionParams {
  static constexpr Kernel kKernel = Kernel::PagedDecodeAttention;
  int64_t layer = 0;
  double scale = 0;
  int64_t slidingWindow = 0;
  int64_t maxSplits = 0;
  template <typename S, typename F> static void fields(S &s, F &&f) {
    f("layer", s.layer);
    f("scale", s.scale);
    f("sliding_window", s.slidingWindow);
    f("max_splits", s.maxSplits);
  }
};

struct LogitsParams {
  static constexpr Kernel kKernel = Kernel::Logits;
  bool allTokens = false; ///< a row per token instead of per sequence
  template <typename S, typename F> static void fields(S &s, F &&f) {
    f("all_tokens", s.allTokens);
  }
};

/// In the order of plan::Kernel.
using KernelParams = std::variant<
    EmbeddingParams, RmsNormParams, HeadNormParams, AddRmsNormParams,
    LinearParams, SplitHeadsParams, MergeHeadsParams, HeadSliceParams,
    SiluMulParams, SiluParams, SigmoidMulParams, AddParams, SwigluParams,
    RopeParams, KvAppendParams, AttentionParams, LinearAttentionParams,
    RopeKvWriteParams, PrefillAttentionParams, ExtendAttentionParams,
    PagedDecodeAttentionParams, TreeAttentionParams, LightningPrefillParams,
    LightningDecodeParams, LogitsParams>;

constexpr size_t kNumKernels = std::variant_size_v<KernelParams>;

namespace detail {
template <size_t I = 0> constexpr bool paramsFollowKernels() {
  if constexpr (I == kNumKernels)
    return true;
  else
    return std::variant_alternative_t<I, KernelParams>::kKernel ==
               static_cast<Kernel>(I) &&
           paramsFollowKernels<I + 1>();
}
} // namespace detail
static_assert(detail::paramsFollowKernels(),
              "KernelParams must list one struct per Kernel, in its order");
static_assert(static_cast<size_t>(Kernel::Logits) + 1 == kNumKernels,
              "every Kernel has its parameter struct");

/// The parameters of a launch of kernel `k`, all fields zero.
KernelParams paramsOf(Kernel k);

/// "rms_norm", "paged_decode_attention", "attention<softmax>", ...
const char *kernelName(Kernel k);

/// Calls f(name, field) for each field of `params`, in file order.
template <typename Params, typename F>
void forEachField(Params &params, F &&f) {
  std::visit(
      [&](auto &p) {
        using P = std::remove_const_t<std::remove_reference_t<decltype(p)>>;
        P::fields(p, f);
      },
      params);
}

/// "layer = 0, scale = 0.125, sliding_window = 0": the fields as the plan
/// text shows them (empty for a kernel without parameters).
std::string formatParams(const KernelParams &params);

bool paramsEqual(const KernelParams &a, const KernelParams &b);

} // namespace strata::plan

#endif // STRATA_RUNTIME_PLAN_KERNELPARAMS_H
