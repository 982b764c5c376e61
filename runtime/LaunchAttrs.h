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

/// "decode #12 paged_decode_attention<...>": how errors name a launch.
std::string describeLaunch(const plan::Program &program, size_t index);

} // namespace strata

#endif // STRATA_RUNTIME_LAUNCHATTRS_H
