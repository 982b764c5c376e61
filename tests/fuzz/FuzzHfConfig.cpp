// Hugging Face config.json files through convertHfConfig, the entry point
// behind `strata import-hf`. A conversion that succeeds promises a model
// file that imports; one that fails promises one diagnostic naming the
// config.
#include "models/HfConfigImporter.h"
#include "tests/fuzz/FuzzCheck.h"

#include <cstddef>
#include <cstdint>
#include <string>

using namespace strata;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string json(reinterpret_cast<const char *>(data), size);
  HfConvertOptions options;
  options.name = "fuzz";
  HfImportResult r = convertHfConfig(json, "config.json", options);
  if (!r.ok) {
    FUZZ_CHECK(r.diag.file == "config.json", "the diagnostic names the file");
    FUZZ_CHECK(!r.diag.message.empty(), "the diagnostic says something");
    return 0;
  }
  ImportResult imported = importModelString(r.yaml, "fuzz.yaml");
  FUZZ_CHECK(imported.ok, "a converted config is a valid model file");
  return 0;
}
