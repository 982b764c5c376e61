// The semantic half of the importer: a parsed YAML document to a validated,
// fully resolved ModelSpec. Private to models/; throws detail::ImportError.
#ifndef STRATA_MODELS_SPECREADER_H
#define STRATA_MODELS_SPECREADER_H

#include "models/ModelSpec.h"
#include "models/YamlReader.h"

namespace strata {
namespace detail {

/// The value of the required top-level `format` key.
inline constexpr const char *kFormatV1 = "strata-model/v1";

/// `root` is the document's only node; `displayName` is the file name used
/// for the default model name and to resolve relative weight paths.
ModelSpec readModelSpec(const YamlContext &ctx, const YAML::Node &root,
                        const std::string &displayName);

} // namespace detail
} // namespace strata

#endif // STRATA_MODELS_SPECREADER_H
