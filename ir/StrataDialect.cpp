//===- StrataDialect.cpp - the strata dialect -----------------------------===//

#include "ir/StrataDialect.h"
#include "ir/StrataOps.h"
#include "ir/StrataTypes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace strata;

#include "ir/StrataDialect.cpp.inc"

#include "ir/StrataEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "ir/StrataAttrs.cpp.inc"

void StrataDialect::initialize() {
  registerTypes();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "ir/StrataAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "ir/StrataOps.cpp.inc"
      ,
#define GET_OP_LIST
#include "ir/StrataFusedOps.cpp.inc"
      >();
}

void strata::registerStrataDialect(DialectRegistry &registry) {
  registry.insert<StrataDialect, func::FuncDialect, arith::ArithDialect>();
}
