// The checkpoint-folder side of `strata import-hf`: which files of a
// Hugging Face checkpoint folder hold the config and the weights, and how
// the converted model file names them (models/HfConfigImporter.h).
#include "models/HfConfigImporter.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

namespace strata {

namespace {

namespace fs = std::filesystem;

/// A config.json is a few kilobytes; a larger file is something else.
constexpr size_t kMaxConfigBytes = 16u << 20;

constexpr auto failure = &HfImportResult::failure;

} // namespace

HfImportResult importHfCheckpoint(const std::string &dir,
                                  const std::string &outputPath,
                                  const std::string &dtype) {
  try {
    fs::path dirPath(dir);
    std::string configPath = (dirPath / "config.json").string();
    std::error_code ec;
    // Opening a FIFO would block until a writer appears; only regular
    // files are read.
    fs::file_status status = fs::status(configPath, ec);
    if (fs::is_directory(status))
      return failure(configPath, 0, 0, "is a directory, not a config file");
    if (fs::exists(status) && !fs::is_regular_file(status))
      return failure(configPath, 0, 0,
                     "is not a regular file (a FIFO, socket or device); "
                     "give a config.json");
    std::ifstream in(configPath, std::ios::binary);
    if (!in)
      return failure(configPath, 0, 0,
                     std::string("cannot open config file: ") +
                         std::strerror(errno));
    std::uintmax_t size = fs::file_size(configPath, ec);
    if (!ec && size > kMaxConfigBytes)
      return failure(configPath, 0, 0,
                     "config file is " + std::to_string(size) +
                         " bytes; expected a config.json of at most " +
                         std::to_string(kMaxConfigBytes) + " bytes");
    std::ostringstream buffer;
    buffer << in.rdbuf();

    HfConvertOptions options;
    options.sourceDescription = configPath;
    options.dtype = dtype;
    // "ckpt/" and "ckpt/." name the folder "ckpt".
    fs::path named = dirPath.lexically_normal();
    if (!named.has_filename() || named.filename() == ".")
      named = fs::absolute(named, ec).lexically_normal().parent_path();
    options.name = named.filename().string();
    if (options.name.empty())
      options.name = named.string();

    std::optional<fs::path> weights;
    for (const char *candidate :
         {"model.safetensors.index.json", "model.safetensors"})
      if (fs::is_regular_file(dirPath / candidate, ec)) {
        weights = dirPath / candidate;
        break;
      }
    if (weights) {
      // Relative to the model file so that the pair can be moved together,
      // as the importer resolves it.
      fs::path absWeights = fs::weakly_canonical(fs::absolute(*weights));
      fs::path rel;
      if (!outputPath.empty()) {
        fs::path outDir =
            fs::weakly_canonical(fs::absolute(outputPath)).parent_path();
        rel = absWeights.lexically_relative(outDir);
      }
      options.weightsPath =
          rel.empty() ? absWeights.string() : rel.generic_string();
    }

    HfImportResult r = convertHfConfig(buffer.str(), configPath, options);
    if (r.ok && !weights)
      return failure(dir, 0, 0,
                     "no model.safetensors.index.json or model.safetensors "
                     "in the checkpoint folder");
    return r;
  } catch (const std::exception &e) {
    return failure(dir, 0, 0,
                   std::string("cannot import checkpoint: ") + e.what());
  } catch (...) {
    return failure(dir, 0, 0, "cannot import checkpoint: unknown error");
  }
}

} // namespace strata
