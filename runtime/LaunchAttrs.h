// Reading a plan launch's attributes, shared by the backends.
#ifndef STRATA_RUNTIME_LAUNCHATTRS_H
#define STRATA_RUNTIME_LAUNCHATTRS_H

#include "kernels/common/RopeCosSin.h"
#include "kernels/common/RopeKvTypes.h"
#include "runtime/plan/Plan.h"

#include <string>

namespace strata {

const plan::Attr *findAttr(const plan::Launch &l, const std::string &name);
int64_t intAttr(const plan::Launch &l, const std::string &name,
                int64_t fallback = 0);
double floatAttr(const plan::Launch &l, const std::string &name,
                 double fallback = 0.0);
std::string stringAttr(const plan::Launch &l, const std::string &name);

/// The rotary table a rope or rope_kv_write launch reads (maxPos left 0).
kernels::RopeTableSpec ropeSpecOf(const plan::Launch &l);
/// Launches with equal keys read the same table.
std::string ropeTableKey(const kernels::RopeTableSpec &spec);
kernels::RopePairingKind ropePairingOf(const plan::Launch &l);

/// The activation storage type of a launch: that of the first 16-bit tensor
/// it touches, inputs first (logits are fp32, token ids i32); else f32 when
/// it touches an fp32 tensor other than the linear state or an output (an
/// f32 model); bf16 when it touches none.
kernels::ActDType activationType(const plan::Program &program,
                                 const plan::Launch &l);

/// What a program input buffer carries, from its name and type.
enum class InputRole : uint8_t {
  TokenIds,     ///< arg0, [tokens] int32
  Positions,    ///< arg1, [tokens] int32
  ParentIds,    ///< the verify program's draft tree, [tokens] int32
  SequenceMeta, ///< `!strata.seqs`: lengths, block tables, slots
};
InputRole inputRole(const plan::Buffer &b);

/// Last dimension of a buffer (1 for a scalar).
inline int64_t lastDim(const plan::Buffer &b) {
  return b.shape.empty() ? int64_t(1) : b.shape.back().value;
}

/// "decode #12 paged_decode_attention<...>": how errors name a launch.
std::string describeLaunch(const plan::Program &program, size_t index);

} // namespace strata

#endif // STRATA_RUNTIME_LAUNCHATTRS_H
