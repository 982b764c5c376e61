#include "models/ModelSpec.h"

namespace strata {

// The spellings are those of the model file format (docs/model-format.md),
// so that messages and dumps can be pasted back into a model file.

const char *toString(DType t) {
  switch (t) {
  case DType::F32:
    return "f32";
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  }
  return "?";
}

const char *toString(LayerKind k) {
  switch (k) {
  case LayerKind::FullAttention:
    return "full_attention";
  case LayerKind::SlidingAttention:
    return "sliding_attention";
  case LayerKind::LinearAttention:
    return "linear_attention";
  }
  return "?";
}

const char *toString(RopePairing p) {
  switch (p) {
  case RopePairing::Neox:
    return "neox";
  case RopePairing::GptJ:
    return "gptj";
  }
  return "?";
}

const char *toString(RopeScalingType t) {
  switch (t) {
  case RopeScalingType::None:
    return "none";
  case RopeScalingType::Linear:
    return "linear";
  case RopeScalingType::Llama3:
    return "llama3";
  }
  return "?";
}

} // namespace strata
