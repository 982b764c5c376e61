#include "runtime/LaunchAttrs.h"

namespace strata {

const plan::Attr *findAttr(const plan::Launch &l, const std::string &name) {
  for (const plan::Attr &a : l.attrs)
    if (a.name == name)
      return &a;
  return nullptr;
}

int64_t intAttr(const plan::Launch &l, const std::string &name,
                int64_t fallback) {
  const plan::Attr *a = findAttr(l, name);
  const int64_t *v = a ? std::get_if<int64_t>(&a->value) : nullptr;
  return v ? *v : fallback;
}

double floatAttr(const plan::Launch &l, const std::string &name,
                 double fallback) {
  const plan::Attr *a = findAttr(l, name);
  const double *v = a ? std::get_if<double>(&a->value) : nullptr;
  return v ? *v : fallback;
}

std::string stringAttr(const plan::Launch &l, const std::string &name) {
  const plan::Attr *a = findAttr(l, name);
  const std::string *v = a ? std::get_if<std::string>(&a->value) : nullptr;
  return v ? *v : std::string();
}

kernels::RopeTableSpec ropeSpecOf(const plan::Launch &l) {
  kernels::RopeTableSpec spec;
  spec.theta = floatAttr(l, "theta");
  spec.rotaryDim = static_cast<int32_t>(intAttr(l, "rotary_dim"));
  std::string scaling = stringAttr(l, "scaling");
  spec.scaling.kind = scaling == "llama3"   ? kernels::RopeScalingKind::Llama3
                      : scaling == "linear" ? kernels::RopeScalingKind::Linear
                                            : kernels::RopeScalingKind::None;
  spec.scaling.factor = floatAttr(l, "scaling_factor", 1.0);
  spec.scaling.lowFreqFactor = floatAttr(l, "low_freq_factor", 1.0);
  spec.scaling.highFreqFactor = floatAttr(l, "high_freq_factor", 4.0);
  spec.scaling.originalMaxPos = intAttr(l, "original_max_positions", 0);
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

kernels::RopePairingKind ropePairingOf(const plan::Launch &l) {
  return stringAttr(l, "pairing") == "gptj" ? kernels::RopePairingKind::GptJ
                                            : kernels::RopePairingKind::Neox;
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

InputRole inputRole(const plan::Buffer &b) {
  if (b.name == "arg0")
    return InputRole::TokenIds;
  if (b.name == "arg1")
    return InputRole::Positions;
  if (b.dtype == plan::DType::I32 && !b.shape.empty())
    return InputRole::ParentIds;
  return InputRole::SequenceMeta;
}

std::string describeLaunch(const plan::Program &program, size_t index) {
  const plan::Launch &l = program.launches[index];
  return program.phase + " #" + std::to_string(index) + " " + l.kernel +
         (l.variant.empty() ? "" : "<" + l.variant + ">");
}

} // namespace strata
