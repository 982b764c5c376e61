//===- StrataOps.h - strata generic and fused ops ---------------*- C++ -*-===//

#ifndef STRATA_IR_STRATAOPS_H
#define STRATA_IR_STRATAOPS_H

#include "ir/StrataDialect.h"
#include "ir/StrataTypes.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "ir/StrataOps.h.inc"

#define GET_OP_CLASSES
#include "ir/StrataFusedOps.h.inc"

#endif // STRATA_IR_STRATAOPS_H
