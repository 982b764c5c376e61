// `strata compile MODEL.yaml --emit=ir`: import, build and verify the generic
// forward of a model, then print it.
#include "ir/ModelBuilder.h"
#include "ir/StrataDialect.h"
#include "models/ModelImporter.h"
#include "tools/common/ArgParser.h"
#include "tools/strata/Commands.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstdlib>

namespace strata::tools {

namespace {

const char *kCompileUsage =
    "usage: strata compile MODEL.yaml [options]\n\n"
    "Imports the model file, builds its IR and prints the requested stage.\n\n"
    "options:\n";

ArgParser makeCompileParser() {
  ArgParser parser;
  parser.addOption("emit", "STAGE",
                   "what to print: ir (the generic forward; default)");
  parser.addOption("output", "FILE", "write to FILE instead of stdout");
  parser.addAlias("-o", "output");
  parser.addOption("block-size", "N",
                   "tokens per paged KV-cache block (power of two; "
                   "default 16)");
  parser.addFlag("help", "show this help");
  parser.addAlias("-h", "help");
  return parser;
}

bool parsePositiveInt(const std::string &text, int64_t &out) {
  if (text.empty() || text.size() > 9)
    return false;
  for (char c : text)
    if (c < '0' || c > '9')
      return false;
  out = std::strtoll(text.c_str(), nullptr, 10);
  return out > 0;
}

int usageError(const std::string &message) {
  std::fprintf(stderr,
               "strata compile: error: %s\nrun 'strata compile --help' for "
               "usage\n",
               message.c_str());
  return kExitUsage;
}

} // namespace

int runCompile(const std::vector<std::string> &args) {
  ArgParser parser = makeCompileParser();
  if (!parser.parse(args))
    return usageError(parser.error());
  if (parser.has("help")) {
    std::printf("%s%s", kCompileUsage, parser.helpText().c_str());
    return kExitOk;
  }
  if (parser.positionals().size() != 1)
    return usageError(parser.positionals().empty()
                          ? "expected one model file"
                          : "expected one model file, got " +
                                std::to_string(parser.positionals().size()));
  std::string emit = parser.get("emit", "ir");
  if (emit != "ir")
    return usageError("unknown --emit value '" + emit +
                      "'; expected one of: ir");
  BuildOptions options;
  if (parser.has("block-size")) {
    int64_t blockSize = 0;
    if (!parsePositiveInt(parser.get("block-size"), blockSize) ||
        (blockSize & (blockSize - 1)) != 0)
      return usageError("--block-size expects a power of two, got '" +
                        parser.get("block-size") + "'");
    options.kvBlockSize = blockSize;
  }

  const std::string &modelPath = parser.positionals().front();
  ImportResult imported = importModelFile(modelPath);
  if (!imported.ok) {
    std::fprintf(stderr, "%s\n", imported.diag.str().c_str());
    return kExitBadInput;
  }

  mlir::MLIRContext context;
  mlir::DialectRegistry registry;
  registerStrataDialect(registry);
  context.appendDialectRegistry(registry);
  context.loadAllAvailableDialects();

  auto module = buildForwardModule(context, imported.spec, options);
  if (mlir::failed(module)) {
    // The builder has reported through the context's diagnostic handler.
    std::fprintf(stderr, "%s: error: could not build the model's IR\n",
                 modelPath.c_str());
    return kExitBadInput;
  }
  if (mlir::failed(mlir::verify(**module))) {
    std::fprintf(stderr, "%s: error: the built IR does not verify\n",
                 modelPath.c_str());
    return kExitBadInput;
  }

  std::string outputPath = parser.get("output", "-");
  std::error_code ec;
  llvm::raw_fd_ostream out(outputPath, ec, llvm::sys::fs::OF_Text);
  if (ec) {
    std::fprintf(stderr, "strata compile: error: cannot write '%s': %s\n",
                 outputPath.c_str(), ec.message().c_str());
    return kExitBadInput;
  }
  (*module)->print(out);
  out << "\n";
  return kExitOk;
}

} // namespace strata::tools
