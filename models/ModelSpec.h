// ModelSpec: the validated, fully resolved description of a model.
//
// Produced by the YAML importer (models/ModelImporter.h), consumed by the IR
// builder and, later, by the runtime. Every field here is resolved: defaults
// of the file format have been applied, derived sizes (head_dim, rotary_dim,
// per-layer decay slopes) are computed, and the whole struct has been checked
// for consistency. Consumers never re-validate and never guess.
//
// This header is plain C++ with no dependency on yaml-cpp or MLIR so that both
// the exception-free compiler side and the runtime can include it.
#ifndef STRATA_MODELS_MODELSPEC_H
#define STRATA_MODELS_MODELSPEC_H

#include <cstdint>
#include <string>
#include <vector>

namespace strata {

/// Storage type of weights, activations and the KV cache.
enum class DType { F32, F16, BF16 };

/// How the two halves of a rotary pair are laid out within a head:
/// neox rotates element i with i + rotary_dim/2 (Llama, Qwen, Mistral);
/// gptj rotates adjacent elements 2i and 2i+1.
enum class RopePairing { Neox, GptJ };

/// Frequency scaling applied to the rotary inverse frequencies.
enum class RopeScalingType { None, Linear, Llama3 };

struct RopeScaling {
  RopeScalingType type = RopeScalingType::None;
  /// Linear and llama3: the context extension factor (> 0).
  double factor = 1.0;
  /// llama3 only.
  double lowFreqFactor = 1.0;
  double highFreqFactor = 4.0;
  int64_t originalMaxPositionEmbeddings = 0;
};

struct RopeSpec {
  double theta = 10000.0;
  /// Number of leading elements of each head that are rotated; even,
  /// 0 < rotaryDim <= headDim.
  int64_t rotaryDim = 0;
  RopePairing pairing = RopePairing::Neox;
  RopeScaling scaling;
};

/// The kind of token mixer of one decoder layer.
enum class LayerKind {
  /// Softmax attention over the whole context (paged KV cache).
  FullAttention,
  /// Softmax attention restricted to the last `slidingWindow` positions.
  SlidingAttention,
  /// Linear "lightning" attention with per-head exponential decay and an
  /// fp32 recurrent state per sequence slot.
  LinearAttention,
};

struct LayerSpec {
  LayerKind kind = LayerKind::FullAttention;
  /// SlidingAttention only: number of most recent positions (including the
  /// current one) a query may attend to; > 0.
  int64_t slidingWindow = 0;
  /// LinearAttention only: one decay rate s_h > 0 per linear-attention head;
  /// the state decays by exp(-s_h) per token.
  std::vector<double> decaySlopes;
};

/// Softmax attention geometry shared by all softmax layers.
struct AttentionSpec {
  int64_t numHeads = 0;
  int64_t numKvHeads = 0;
  int64_t headDim = 0;
  /// Softmax scale applied to q.k; 1/sqrt(headDim) unless the file says
  /// otherwise.
  double scale = 0.0;
  /// Qwen3-style per-head RMSNorm of q and k (over headDim) before RoPE.
  bool qkNorm = false;
  /// Bias vectors on the q/k/v projections (Qwen2-style).
  bool qkvBias = false;
};

/// Linear (lightning) attention geometry shared by all linear layers.
struct LinearAttentionSpec {
  int64_t numHeads = 0;
  int64_t headDim = 0;
  /// SiLU applied to q, k and v after their projections (MiniMax).
  bool qkvSilu = true;
  /// RMSNorm over the concatenated head outputs before the output gate.
  bool outputNorm = true;
  /// Output multiplied by sigmoid(x W_gate) before the output projection.
  bool outputGate = true;
  /// Chunk length of the chunked prefill algorithm.
  int64_t chunkSize = 256;
  /// Epsilon of the output RMSNorm (the model's normEps unless the file
  /// gives `linear_attention.norm_eps`).
  double normEps = 1e-5;
};

/// Gated MLP: down(act(gate(x)) * up(x)); SiLU is the only activation of v1.
struct MlpSpec {
  int64_t intermediateSize = 0;
};

/// Where the weights come from.
enum class WeightSource { Random, Safetensors };

struct WeightsSpec {
  WeightSource source = WeightSource::Random;
  /// Random: seed of the generator and standard deviation of the normal
  /// distribution used for projection and embedding matrices (norm weights
  /// are initialised to 1).
  uint64_t seed = 0;
  double initStd = 0.02;
  /// Safetensors: path of a file or of a model.safetensors.index.json,
  /// resolved relative to the model file.
  std::string path;
};

/// Where a piece of the model file came from, for messages that point back
/// into the file after import.
struct SourceLoc {
  std::string file;
  int line = 0;
  int column = 0;
};

/// The model's tokenizer: a Hugging Face tokenizer.json (its
/// tokenizer_config.json and generation_config.json are read from the same
/// folder when present) and the BOS and EOS ids, when the model file gives
/// them (else the tokenizer's own). An empty path: no tokenizer.
struct TokenizerSpec {
  /// Resolved relative to the model file.
  std::string path;
  SourceLoc pathLoc;
  int64_t bosId = -1;
  std::vector<int64_t> eosIds;
};

/// Weights of one kind of residual connection, `h = alpha * r + beta * f`,
/// where r is what `residual` names and f the block's output (MiniMax scales
/// both; every other family uses 1 and 1).
struct ResidualScale {
  double alpha = 1.0;
  double beta = 1.0;
  bool isUnit() const { return alpha == 1.0 && beta == 1.0; }
};

struct ModelSpec {
  /// Format version the file declared; 1 for this importer.
  int formatVersion = 1;
  std::string name;
  /// Informational family name ("llama", "qwen3", "mistral", "minimax").
  std::string family;
  SourceLoc loc;

  DType dtype = DType::BF16;
  int64_t vocabSize = 0;
  int64_t hiddenSize = 0;
  int64_t maxPositionEmbeddings = 0;
  double normEps = 1e-5;
  bool tieWordEmbeddings = false;
  /// What each residual connection adds the block's output to: the block's
  /// input (false: `h + f(norm(h))`, pre-norm) or the normed input (true:
  /// `norm(h) + f(norm(h))`, as MiniMax does).
  bool residualFromNorm = false;
  /// Per block kind: softmax attention, linear attention and the MLP.
  ResidualScale attentionResidual, linearResidual, mlpResidual;

  AttentionSpec attention;    // valid when any layer is softmax
  LinearAttentionSpec linear; // valid when any layer is linear
  RopeSpec rope;              // valid when any layer is softmax
  MlpSpec mlp;
  /// One entry per decoder layer, in order.
  std::vector<LayerSpec> layers;
  WeightsSpec weights;
  TokenizerSpec tokenizer;

  int64_t numLayers() const { return static_cast<int64_t>(layers.size()); }
  bool hasSoftmaxLayers() const {
    for (const LayerSpec &l : layers)
      if (l.kind != LayerKind::LinearAttention)
        return true;
    return false;
  }
  bool hasLinearLayers() const {
    for (const LayerSpec &l : layers)
      if (l.kind == LayerKind::LinearAttention)
        return true;
    return false;
  }
};

const char *toString(DType t);
const char *toString(LayerKind k);
const char *toString(RopePairing p);
const char *toString(RopeScalingType t);

} // namespace strata

#endif // STRATA_MODELS_MODELSPEC_H
