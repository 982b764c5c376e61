#include "runtime/LaunchFacts.h"

namespace strata {

kernels::RopeTableSpec ropeSpecOf(const plan::RotaryParams &rotary) {
  kernels::RopeTableSpec spec;
  spec.theta = rotary.theta;
  spec.rotaryDim = static_cast<int32_t>(rotary.rotaryDim);
  switch (rotary.scaling) {
  case plan::RopeScaling::None:
    spec.scaling.kind = kernels::RopeScalingKind::None;
    break;
  case plan::RopeScaling::Linear:
    spec.scaling.kind = kernels::RopeScalingKind::Linear;
    break;
  case plan::RopeScaling::Llama3:
    spec.scaling.kind = kernels::RopeScalingKind::Llama3;
    break;
  }
  spec.scaling.factor = rotary.scalingFactor;
  spec.scaling.lowFreqFactor = rotary.lowFreqFactor;
  spec.scaling.highFreqFactor = rotary.highFreqFactor;
  spec.scaling.originalMaxPos = rotary.originalMaxPositions;
  return spec;
}

std::string ropeTableKey(const kernels::RopeTableSpec &spec) {
  return std::to_string(spec.theta) + "/" + std::to_string(spec.rotaryDim) +
         "/" + std::to_string(int(spec.scaling.kind)) + "/" +
         std::to_string(spec.scaling.factor) + "/" +
         std::to_string(spec.scaling.lowFreqFactor) + "/" +
         std::to_string(spec.scaling.highFreqFactor) + "/" +
         std::to_string(spec.scaling.originalMaxPos);
}

kernels::RopePairingKind ropePairingOf(const plan::RotaryParams &rotary) {
  switch (rotary.pairing) {
  case plan::RopePairing::Neox:
    return kernels::RopePairingKind::Neox;
  case plan::RopePairing::GptJ:
    return kernels::RopePairingKind::GptJ;
  }
  return kernels::RopePairingKind::Neox;
}

kernels::ActDType activationType(const plan::Program &program,
                                 const plan::Launch &l) {
  for (const auto *list : {&l.inputs, &l.outputs})
    for (int32_t b : *list) {
      plan::DType t = program.buffers[size_t(b)].dtype;
      if (t == plan::DType::F16)
        return kernels::ActDType::F16;
      if (t == plan::DType::BF16)
        return kernels::ActDType::BF16;
    }
  // An f32 model's launches touch no 16-bit tensor. The fp32 linear state
  // and logits do not decide: 16-bit models have them too.
  for (const auto *list : {&l.inputs, &l.outputs})
    for (int32_t b : *list) {
      const plan::Buffer &buffer = program.buffers[size_t(b)];
      if (buffer.dtype == plan::DType::F32 &&
          buffer.kind != plan::BufferKind::LinearState &&
          buffer.kind != plan::BufferKind::Output)
        return kernels::ActDType::F32;
    }
  return kernels::ActDType::BF16;
}

std::string describeLaunch(const plan::Program &program, size_t index) {
  return program.phase + " #" + std::to_string(index) + " " +
         plan::launchName(program.launches[index]);
}

kernels::AttentionDims attentionDimsOf(const plan::KvCacheDesc &kv,
                                       int64_t batch, int64_t numQHeads,
                                       kernels::ActDType act, double scale,
                                       int64_t slidingWindow) {
  kernels::AttentionDims d;
  d.batch = batch;
  d.numQHeads = int32_t(numQHeads);
  d.numKvHeads = int32_t(kv.kvHeads);
  d.headDim = int32_t(kv.headDim);
  d.dtype = act;
  d.scale = float(scale);
  d.slidingWindow = slidingWindow;
  return d;
}

} // namespace strata
