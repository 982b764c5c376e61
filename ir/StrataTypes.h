//===- StrataTypes.h - strata types and enum attributes ---------*- C++ -*-===//

#ifndef STRATA_IR_STRATATYPES_H
#define STRATA_IR_STRATATYPES_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/Types.h"

#include "ir/StrataEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "ir/StrataAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "ir/StrataTypes.h.inc"

#endif // STRATA_IR_STRATATYPES_H
