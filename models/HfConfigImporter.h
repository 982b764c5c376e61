// Conversion of a Hugging Face checkpoint's config.json into a strata model
// file (format v1, docs/model-format.md, "Importing Hugging Face configs").
//
// The conversion is strict: every field of the config is either mapped,
// known to be harmless (token ids, training-only settings), or rejected with
// a message naming it, because a field that silently changes the math would
// give a model that compiles and runs but computes something else. The
// produced text is imported with importModelString before it is returned, so
// a successful conversion always yields a valid model file.
//
// Like the YAML importer, nothing here throws: problems come back as one
// Diagnostic, with the line and column inside config.json where one exists.
#ifndef STRATA_MODELS_HFCONFIGIMPORTER_H
#define STRATA_MODELS_HFCONFIGIMPORTER_H

#include "models/ModelImporter.h"

#include <string>
#include <vector>

namespace strata {

/// What the converted file says beyond the config itself.
struct HfConvertOptions {
  /// The model's `name`.
  std::string name;
  /// `weights.path` as written into the file (a safetensors file or index,
  /// relative to the model file's directory or absolute).
  std::string weightsPath = "model.safetensors";
  /// Where the config came from, for the header comment.
  std::string sourceDescription = "config.json";
};

/// Result of a conversion: `ok` tells which of `yaml` and `diag` is
/// meaningful.
struct HfImportResult {
  bool ok = false;
  /// The model file's text.
  std::string yaml;
  Diagnostic diag;

  /// A failed result whose diagnostic points at file:line:column (0 when
  /// unknown).
  static HfImportResult failure(const std::string &file, int line,
                                int column, const std::string &message) {
    HfImportResult r;
    r.diag.file = file;
    r.diag.line = line;
    r.diag.column = column;
    r.diag.message = message;
    return r;
  }
};

/// The architectures (`architectures[0]`) the converter understands.
const std::vector<std::string> &supportedHfArchitectures();

/// Converts the text of a config.json; `displayName` names it in
/// diagnostics.
HfImportResult convertHfConfig(const std::string &json,
                               const std::string &displayName,
                               const HfConvertOptions &options);

/// Converts `dir`/config.json of a checkpoint folder into the text of a
/// model file that will be written to `outputPath` ("" when it goes to
/// standard output). The weights are `dir`/model.safetensors.index.json or,
/// failing that, `dir`/model.safetensors; their path is made relative to
/// the output file's directory (absolute for standard output). The name is
/// the folder's name.
HfImportResult importHfCheckpoint(const std::string &dir,
                                  const std::string &outputPath);

} // namespace strata

#endif // STRATA_MODELS_HFCONFIGIMPORTER_H
