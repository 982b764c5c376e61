// Typed, position-aware access to a yaml-cpp document for the model importer.
//
// Private to models/: the importer turns every problem into one Diagnostic
// by throwing ImportError from here and catching it at the public API, so
// validation code reads as straight-line code. Nothing here escapes
// ModelImporter.cpp's catch blocks.
#ifndef STRATA_MODELS_YAMLREADER_H
#define STRATA_MODELS_YAMLREADER_H

#include "models/ModelImporter.h"

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace strata {
namespace detail {

/// The one exception type of the importer; carries the final diagnostic.
struct ImportError {
  Diagnostic diag;
};

/// "a, b or c".
std::string joinNames(const std::vector<std::string> &names);

/// A value of the document together with where it came from.
struct Field {
  /// Dotted path used in messages ("attention.num_heads", "layer_types[2]").
  std::string path;
  YAML::Node node;
  /// Mark of the key (or of the enclosing element) for values that have no
  /// position of their own: yaml-cpp gives an empty value the position of
  /// the next token, which is usually on another line.
  YAML::Mark anchor;

  YAML::Mark mark() const;
};

/// Raises diagnostics for one file.
class YamlContext {
public:
  explicit YamlContext(std::string file) : file_(std::move(file)) {}

  const std::string &file() const { return file_; }

  [[noreturn]] void fail(const YAML::Mark &mark,
                         const std::string &message) const;
  [[noreturn]] void fail(const Field &field, const std::string &message) const {
    fail(field.mark(), message);
  }

  // Scalar conversions. Each accepts only a plain (unquoted) scalar of the
  // right shape and names the key and the offending text otherwise. yaml-cpp's
  // own conversions are not used: they read "010" as octal and accept
  // trailing garbage in some cases.
  int64_t integer(const Field &f) const;
  /// 1 <= value <= max.
  int64_t positiveInt(const Field &f, int64_t max = INT32_MAX) const;
  /// A finite number; integers are accepted.
  double number(const Field &f) const;
  double positiveNumber(const Field &f) const;
  bool boolean(const Field &f) const;
  /// Any scalar, quoted or not, as written.
  std::string string(const Field &f) const;
  /// The elements of a sequence, each with the path "key[i]".
  std::vector<Field> sequence(const Field &f) const;

  /// "'abc'", "a list", "a mapping", "nothing": what was found, for messages.
  static std::string describe(const YAML::Node &node);

private:
  std::string file_;
};

/// A mapping whose keys are checked on construction: every key is a scalar,
/// appears once and is one of `allowed` (in the order given, which is also
/// the order of the "expected one of" list).
class MapReader {
public:
  /// `path` is the dotted prefix of the mapping's keys ("" at the top level).
  /// `hints` maps foreign spellings (for instance the Hugging Face config
  /// names) to the strata key they correspond to.
  MapReader(const YamlContext &ctx, const Field &map,
            std::vector<std::string> allowed,
            const std::map<std::string, std::string> &hints = {});

  const Field &self() const { return self_; }
  bool has(const std::string &key) const;
  std::optional<Field> find(const std::string &key) const;
  /// Fails at the mapping when `key` is absent.
  Field require(const std::string &key) const;
  /// Fails at the mapping, naming `key`, with `extra` appended.
  [[noreturn]] void failMissing(const std::string &key,
                                const std::string &extra = "") const;

  // Shorthands for the common optional/required scalar shapes.
  int64_t requirePositiveInt(const std::string &key) const {
    return ctx_.positiveInt(require(key));
  }
  double requirePositiveNumber(const std::string &key) const {
    return ctx_.positiveNumber(require(key));
  }
  bool optBool(const std::string &key, bool dflt) const {
    auto f = find(key);
    return f ? ctx_.boolean(*f) : dflt;
  }

private:
  const YamlContext &ctx_;
  Field self_;
  std::vector<std::pair<std::string, Field>> entries_;
};

} // namespace detail
} // namespace strata

#endif // STRATA_MODELS_YAMLREADER_H
