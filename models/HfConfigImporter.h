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
  /// The model file's `dtype` ("bf16", "f16" or "f32"); empty for the
  /// default: the config's dtype when it is bfloat16 or float16, bf16 when
  /// it is float32 or absent (hfDefaultDtype).
  std::string dtype;
  /// Where the model file will be written (empty: stdout): the relative
  /// paths in it are resolved from there when the result is checked.
  std::string modelFilePath;
  /// `tokenizer.path` as written into the file (like weightsPath); empty
  /// when the checkpoint has no tokenizer.json.
  std::string tokenizerPath;
  /// The checkpoint's BOS / EOS ids (generation_config.json, else
  /// config.json); -1 and empty when it names none.
  int64_t bosId = -1;
  std::vector<int64_t> eosIds;
};

/// Result of a conversion: `ok` tells which of `yaml` and `diag` is
/// meaningful.
struct HfImportResult {
  bool ok = false;
  /// The model file's text.
  std::string yaml;
  Diagnostic diag;
  /// One line for the user when the conversion chose something they may
  /// not expect (a float32 checkpoint computed in bf16), else empty:
  /// "FILE: note: ...".
  std::string note;

  /// A failed result whose diagnostic points at file:line:column (0 when
  /// unknown).
  static HfImportResult failure(const std::string &file, int line, int column,
                                const std::string &message) {
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

/// The model file's dtype for a checkpoint whose config says `configDtype`
/// ("bf16", "f16", "f32", or "" when it says nothing), as serving engines
/// load checkpoints by default: 16-bit checkpoints in their own dtype,
/// float32 ones (and those that do not say) in bf16, which halves the
/// memory and the bytes every decode step reads.
std::string hfDefaultDtype(const std::string &configDtype);

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
/// the folder's name; `dtype` is HfConvertOptions::dtype.
HfImportResult importHfCheckpoint(const std::string &dir,
                                  const std::string &outputPath,
                                  const std::string &dtype = "");

} // namespace strata

#endif // STRATA_MODELS_HFCONFIGIMPORTER_H
