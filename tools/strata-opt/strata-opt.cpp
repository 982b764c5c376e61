// strata-opt: mlir-opt with the strata dialect, every strata pass and the
// strata-fusion-pipeline registered. Used by the lit tests and by anyone
// experimenting with passes on .mlir files.
#include "ir/StrataDialect.h"
#include "passes/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  strata::registerStrataDialect(registry);
  strata::registerStrataPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "strata optimizer driver\n", registry));
}
