//===- StrataDialect.h - the strata dialect ---------------------*- C++ -*-===//
//
// The dialect class and its registration. Include ir/StrataOps.h for the ops
// and ir/StrataTypes.h for the types and enum attributes.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_IR_STRATADIALECT_H
#define STRATA_IR_STRATADIALECT_H

#include "mlir/IR/Dialect.h"
#include "mlir/IR/DialectRegistry.h"

#include "ir/StrataDialect.h.inc"

namespace strata {

/// Registers the strata dialect and the upstream dialects its programs use
/// (func for the forward functions, arith for constants).
void registerStrataDialect(mlir::DialectRegistry &registry);

} // namespace strata

#endif // STRATA_IR_STRATADIALECT_H
