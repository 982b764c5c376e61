// Import of the YAML model format v1 (docs/model-format.md) into a ModelSpec.
//
// The importer never throws and never aborts: every problem with the input is
// reported as one Diagnostic that names the file, line and column (1-based)
// and, where there is one, the expected value. Callers print
// `diag.str()` and exit non-zero.
#ifndef STRATA_MODELS_MODELIMPORTER_H
#define STRATA_MODELS_MODELIMPORTER_H

#include "models/ModelSpec.h"

#include <string>

namespace strata {

struct Diagnostic {
  std::string file;
  /// 1-based; 0 when the problem concerns the file as a whole (unreadable).
  int line = 0;
  int column = 0;
  std::string message;

  /// "file:line:col: error: message" (or "file: error: message" without a
  /// position).
  std::string str() const;
};

/// Result of an import: `ok` tells which of `spec` and `diag` is meaningful.
struct ImportResult {
  bool ok = false;
  ModelSpec spec;
  Diagnostic diag;
};

/// Reads and validates the model file at `path`.
ImportResult importModelFile(const std::string &path);

/// Validates a model given as text; `displayName` is used in diagnostics.
ImportResult importModelString(const std::string &text,
                               const std::string &displayName);

} // namespace strata

#endif // STRATA_MODELS_MODELIMPORTER_H
