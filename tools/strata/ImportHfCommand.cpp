// `strata import-hf DIR [-o MODEL.yaml]`: convert the config.json of a
// Hugging Face checkpoint folder into a strata model file whose weights are
// the folder's safetensors (models/HfConfigImporter.h).
#include "models/HfConfigImporter.h"
#include "tools/common/ArgParser.h"
#include "tools/strata/Commands.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

namespace strata::tools {

int runImportHf(const std::vector<std::string> &args) {
  ArgParser parser;
  parser.addOption("output", "FILE",
                   "write the model file to FILE instead of stdout");
  parser.addAlias("-o", "output");
  parser.addOption("dtype", "bf16|f16|f32",
                   "the model's dtype (default: the config's when it is "
                   "bfloat16 or float16, else bf16)");
  parser.addFlag("help", "show this help");
  parser.addAlias("-h", "help");
  if (!parser.parse(args)) {
    std::fprintf(stderr,
                 "strata import-hf: error: %s\nrun 'strata import-hf --help' "
                 "for usage\n",
                 parser.error().c_str());
    return kExitUsage;
  }
  if (parser.has("help")) {
    std::printf("usage: strata import-hf DIR [-o MODEL.yaml] [--dtype "
                "bf16|f16|f32]\n\n"
                "Writes a strata model file (format v1) for the Hugging Face "
                "checkpoint in DIR:\n"
                "the architecture from DIR/config.json, the weights from\n"
                "DIR/model.safetensors.index.json or DIR/model.safetensors.\n"
                "A config field the format cannot express is an error.\n"
                "A float32 checkpoint runs in bf16 unless --dtype says "
                "otherwise;\nthe weights are converted when loaded.\n\n"
                "options:\n%s",
                parser.helpText().c_str());
    return kExitOk;
  }
  const std::vector<std::string> &positionals = parser.positionals();
  if (positionals.size() != 1) {
    std::fprintf(stderr,
                 "strata import-hf: error: expected one checkpoint folder%s\n"
                 "run 'strata import-hf --help' for usage\n",
                 positionals.empty()
                     ? ""
                     : (", got " + std::to_string(positionals.size())).c_str());
    return kExitUsage;
  }
  if (parser.has("output") && parser.get("output").empty()) {
    std::fprintf(stderr, "strata import-hf: error: --output expects a file "
                         "name\n");
    return kExitUsage;
  }
  std::string outputPath = parser.get("output");
  std::string dtype = parser.get("dtype");
  if (parser.has("dtype") && dtype != "bf16" && dtype != "f16" &&
      dtype != "f32") {
    std::fprintf(stderr,
                 "strata import-hf: error: --dtype expects bf16, f16 or f32, "
                 "got '%s'\n",
                 dtype.c_str());
    return kExitUsage;
  }

  HfImportResult result = importHfCheckpoint(positionals[0], outputPath, dtype);
  if (!result.ok) {
    std::fprintf(stderr, "%s\n", result.diag.str().c_str());
    return kExitBadInput;
  }
  if (!result.note.empty())
    std::fprintf(stderr, "%s\n", result.note.c_str());
  if (outputPath.empty()) {
    std::fwrite(result.yaml.data(), 1, result.yaml.size(), stdout);
    return kExitOk;
  }
  std::ofstream out(outputPath, std::ios::binary);
  if (out)
    out << result.yaml;
  if (!out) {
    std::fprintf(stderr, "strata import-hf: error: cannot write '%s': %s\n",
                 outputPath.c_str(), std::strerror(errno));
    return kExitBadInput;
  }
  return kExitOk;
}

} // namespace strata::tools
