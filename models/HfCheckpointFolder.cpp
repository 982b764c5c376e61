// The checkpoint-folder side of `strata import-hf`: which files of a
// Hugging Face checkpoint folder hold the config and the weights, and how
// the converted model file names them (models/HfConfigImporter.h).
#include "models/HfConfigImporter.h"

#include "json/JsonTree.h"

#include <cerrno>
#include <cstdint>
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

/// `file` as the model file at `outputPath` names it: relative to the
/// model file's folder so that the two can be moved together (as the
/// importer resolves it), absolute when the model file goes to stdout.
std::string relativeToModelFile(const fs::path &file,
                                const std::string &outputPath) {
  const fs::path absolute = fs::weakly_canonical(fs::absolute(file));
  fs::path rel;
  if (!outputPath.empty()) {
    const fs::path outDir =
        fs::weakly_canonical(fs::absolute(outputPath)).parent_path();
    rel = absolute.lexically_relative(outDir);
  }
  return rel.empty() ? absolute.string() : rel.generic_string();
}

std::string readWhole(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// Fills the BOS and EOS ids from a generation_config.json or config.json
/// text; a message when they are there but not token ids.
std::string readSpecialIds(const std::string &text, HfConvertOptions &out) {
  JsonValue root;
  JsonSyntaxError syntax;
  if (!parseStrictJson(text, root, syntax))
    return syntax.message + " (line " + std::to_string(syntax.pos.line) + ")";
  auto id = [](const JsonValue &v, int64_t &value) {
    uint64_t u = 0;
    if (!v.asUint64(u) || u > uint64_t(INT32_MAX))
      return false;
    value = int64_t(u);
    return true;
  };
  if (const JsonValue *b = root.get("bos_token_id"); b && !b->isNull())
    if (!id(*b, out.bosId))
      return "bos_token_id: expected a token id, got " +
             std::string(b->kindName());
  if (const JsonValue *e = root.get("eos_token_id"); e && !e->isNull()) {
    std::vector<JsonValue> items =
        e->isArray() ? e->array : std::vector<JsonValue>{*e};
    for (const JsonValue &item : items) {
      int64_t value = 0;
      if (!id(item, value))
        return "eos_token_id: expected a token id or a list of them, got " +
               std::string(item.kindName());
      out.eosIds.push_back(value);
    }
  }
  return "";
}

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
    options.modelFilePath = outputPath;
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
    if (weights)
      options.weightsPath = relativeToModelFile(*weights, outputPath);

    // The tokenizer beside the weights, with the ids generation stops at:
    // generation_config.json's (what generation uses), else config.json's.
    const fs::path tokenizer = dirPath / "tokenizer.json";
    if (fs::is_regular_file(tokenizer, ec)) {
      options.tokenizerPath = relativeToModelFile(tokenizer, outputPath);
      const fs::path generation = dirPath / "generation_config.json";
      std::string bad, badFile;
      if (fs::is_regular_file(generation, ec)) {
        bad = readSpecialIds(readWhole(generation), options);
        badFile = generation.string();
      }
      if (bad.empty() && options.bosId < 0 && options.eosIds.empty()) {
        bad = readSpecialIds(buffer.str(), options);
        badFile = configPath;
      }
      if (!bad.empty())
        return failure(badFile, 0, 0, bad);
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
