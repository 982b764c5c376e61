// Typed, position-aware access to a config.json tree (json/JsonTree.h)
// for the Hugging Face converter.
//
// Private to models/: like the YAML importer's YamlContext, every problem
// is thrown as one ImportError (models/YamlReader.h) that the converter's
// public entry point catches, so validation code reads as straight-line
// code.
#ifndef STRATA_MODELS_HFCONFIGREADER_H
#define STRATA_MODELS_HFCONFIGREADER_H

#include "json/JsonTree.h"

#include <cstdint>
#include <string>
#include <vector>

namespace strata::detail {

/// A value of config.json together with its name.
struct HfField {
  /// Dotted path used in messages ("rope_scaling.factor", "layer_types[2]").
  std::string path;
  const JsonValue *value = nullptr;
  /// Where the key is (the value's own position for array elements).
  JsonPos keyPos;

  JsonPos pos() const { return value ? value->pos : keyPos; }
  bool isNull() const { return !value || value->isNull(); }
};

/// Raises diagnostics for one config file.
class HfConfigContext {
public:
  explicit HfConfigContext(std::string file) : file_(std::move(file)) {}

  const std::string &file() const { return file_; }

  [[noreturn]] void fail(JsonPos pos, const std::string &message) const;
  [[noreturn]] void fail(const HfField &field,
                         const std::string &message) const {
    fail(field.pos(), message);
  }

  // Each conversion accepts only a JSON value of the right type and shape
  // and names the field and the offending value otherwise.
  int64_t integer(const HfField &f) const;
  /// 1 <= value <= max.
  int64_t positiveInt(const HfField &f, int64_t max = INT32_MAX) const;
  /// A finite double; integers are accepted. Underflow to zero or to a
  /// subnormal is out of range too: the value would not be the one written.
  double number(const HfField &f) const;
  double positiveNumber(const HfField &f) const;
  bool boolean(const HfField &f) const;
  std::string string(const HfField &f) const;
  /// The elements of an array, each with the path "key[i]".
  std::vector<HfField> sequence(const HfField &f) const;
  /// The members of an object in document order, each with the path
  /// "key.member" (just "member" at the top level).
  std::vector<HfField> members(const HfField &f) const;

  /// "the string \"abc\"", "'12.5'", "true", "an array", "an object",
  /// "null": what was found, for messages ("nothing" for no value).
  static std::string describe(const JsonValue *value);

private:
  std::string file_;
};

} // namespace strata::detail

#endif // STRATA_MODELS_HFCONFIGREADER_H
