#include "tools/common/DecodeRoofline.h"

#include <vector>

namespace strata::tools {

namespace {

double bytesOf(const plan::Weight &w) {
  double elements = 1;
  for (int64_t d : w.shape)
    elements *= double(d);
  return elements * double(plan::byteWidth(w.dtype));
}

const plan::Program *decodeProgram(const plan::Plan &plan) {
  const plan::Program *forward = nullptr;
  for (const plan::Program &p : plan.programs) {
    if (p.phase == "decode")
      return &p;
    if (p.phase == "forward")
      forward = &p;
  }
  return forward;
}

} // namespace

double weightBytes(const plan::Plan &plan) {
  double bytes = 0;
  for (const plan::Weight &w : plan.weights)
    bytes += bytesOf(w);
  return bytes;
}

double decodeWeightBytes(const plan::Plan &plan) {
  const plan::Program *program = decodeProgram(plan);
  if (!program)
    return weightBytes(plan);
  // A weight read by several launches (tied embeddings) counts once.
  std::vector<bool> read(plan.weights.size(), false);
  for (const plan::Launch &l : program->launches)
    for (int32_t b : l.inputs) {
      // Indices are checked by validatePlan; a plan that skipped it must
      // still not be read out of bounds.
      if (b < 0 || size_t(b) >= program->buffers.size())
        continue;
      const plan::Buffer &buf = program->buffers[size_t(b)];
      if (buf.kind == plan::BufferKind::Weight && buf.weight >= 0 &&
          size_t(buf.weight) < read.size())
        read[size_t(buf.weight)] = true;
    }
  double bytes = 0;
  for (size_t i = 0; i < plan.weights.size(); ++i)
    if (read[i])
      bytes += bytesOf(plan.weights[i]);
  return bytes;
}

double decodeActivationBytes(const plan::Plan &plan, int64_t batch) {
  const plan::Program *program = decodeProgram(plan);
  if (!program)
    return 0;
  double bytes = 0;
  auto add = [&](int32_t b) {
    if (b < 0 || size_t(b) >= program->buffers.size())
      return;
    const plan::Buffer &buf = program->buffers[size_t(b)];
    switch (buf.kind) {
    case plan::BufferKind::Arena:
    case plan::BufferKind::Output:
      break;
    case plan::BufferKind::Input:
      if (buf.role == plan::InputRole::Sequences)
        return;
      break;
    case plan::BufferKind::Weight:
    case plan::BufferKind::KvCache:
    case plan::BufferKind::LinearState:
      return;
    }
    // Decode feeds one token per sequence: tokens and batch are both B.
    bytes += double(plan::numElements(buf.shape, batch, batch)) *
             double(plan::byteWidth(buf.dtype));
  };
  for (const plan::Launch &l : program->launches) {
    for (int32_t b : l.inputs)
      add(b);
    for (int32_t b : l.outputs)
      add(b);
  }
  return bytes;
}

int64_t decodeLaunches(const plan::Plan &plan) {
  const plan::Program *program = decodeProgram(plan);
  return program ? int64_t(program->launches.size()) : 0;
}

DecodeStepBytes decodeStepBytes(const plan::Plan &plan, int64_t batch,
                                double meanContext) {
  DecodeStepBytes b;
  b.weights = decodeWeightBytes(plan);
  const plan::KvCacheDesc &kv = plan.kvCache;
  // K and V: two vectors of headDim per kv head and cached token.
  b.kvCache = double(kv.layers) * 2.0 * double(kv.kvHeads) *
              double(kv.headDim) * double(plan::byteWidth(kv.dtype)) *
              meanContext * double(batch);
  const plan::LinearStateDesc &ls = plan.linearState;
  // The fp32 state is read, decayed and updated, and written back.
  b.linearState = double(ls.layers) * double(ls.heads) * double(ls.keyDim) *
                  double(ls.valueDim) * 4.0 * 2.0 * double(batch);
  return b;
}

} // namespace strata::tools
