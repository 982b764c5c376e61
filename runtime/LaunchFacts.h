// What the backends derive from a plan launch: its rotary table, its
// activation storage type and its name in messages. Parameters are read
// from the launch's typed struct (plan/KernelParams.h), never by name.
#ifndef STRATA_RUNTIME_LAUNCHFACTS_H
#define STRATA_RUNTIME_LAUNCHFACTS_H

#include "kernels/common/AttentionTypes.h"
#include "kernels/common/RopeCosSin.h"
#include "kernels/common/RopeKvTypes.h"
#include "runtime/plan/Plan.h"

#include <string>

namespace strata {

/// The rotary table a rope or rope_kv_write launch reads (maxPos left 0).
kernels::RopeTableSpec ropeSpecOf(const plan::RotaryParams &rotary);
/// Launches with equal keys read the same table.
std::string ropeTableKey(const kernels::RopeTableSpec &spec);
kernels::RopePairingKind ropePairingOf(const plan::RotaryParams &rotary);

/// The activation storage type of a launch: that of the first 16-bit tensor
/// it touches, inputs first (logits are fp32, token ids i32); else f32 when
/// it touches an fp32 tensor other than the linear state or an output (an
/// f32 model); bf16 when it touches none.
kernels::ActDType activationType(const plan::Program &program,
                                 const plan::Launch &l);

/// The dimensions of an attention launch over the plan's KV cache: heads
/// and head dim from the cache descriptor, the rest from the launch.
kernels::AttentionDims attentionDimsOf(const plan::KvCacheDesc &kv,
                                       int64_t batch, int64_t numQHeads,
                                       kernels::ActDType act, double scale,
                                       int64_t slidingWindow);

/// Last dimension of a buffer (1 for a scalar).
inline int64_t lastDim(const plan::Buffer &b) {
  return b.shape.empty() ? int64_t(1) : b.shape.back().value;
}

/// "decode #12 paged_decode_attention": how errors name a launch.
std::string describeLaunch(const plan::Program &program, size_t index);

} // namespace strata

#endif // STRATA_RUNTIME_LAUNCHFACTS_H
