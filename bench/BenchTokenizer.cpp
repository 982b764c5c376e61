// strata-bench-tokenizer: single-thread encode speed of a tokenizer.json on
// text files.
//
//   strata-bench-tokenizer TOKENIZER.json FILE... [--repeat N] [--json OUT]
//
// Each file is encoded whole (special tokens found, none added) N times
// (default 5) after one untimed run that also fills the word cache; the
// table gives the median time, MB/s (10^6 bytes per second) and tokens.
// scripts/tokenizer-peers.py measures Hugging Face tokenizers and tiktoken
// on the same files.
#include "runtime/tokenizer/Tokenizer.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Row {
  std::string file;
  size_t bytes = 0;
  size_t tokens = 0;
  double seconds = 0;
  double mbPerSecond() const { return bytes / seconds / 1e6; }
};

int usage() {
  std::fprintf(stderr, "usage: strata-bench-tokenizer TOKENIZER.json FILE... "
                       "[--repeat N] [--json OUT]\n");
  return 2;
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> positional;
  std::string jsonPath;
  int repeat = 5;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--json" && i + 1 < argc)
      jsonPath = argv[++i];
    else if (arg == "--repeat" && i + 1 < argc)
      repeat = std::max(1, std::atoi(argv[++i]));
    else if (!arg.empty() && arg[0] == '-')
      return usage();
    else
      positional.push_back(arg);
  }
  if (positional.size() < 2)
    return usage();
  try {
    auto t0 = std::chrono::steady_clock::now();
    strata::tok::Tokenizer tokenizer =
        strata::tok::Tokenizer::fromFile(positional[0]);
    double loadSeconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
            .count();
    std::printf("tokenizer: %s (%d ids, loaded in %.2f s)\n\n",
                positional[0].c_str(), tokenizer.vocabSize(), loadSeconds);
    std::vector<Row> rows;
    for (size_t f = 1; f < positional.size(); ++f) {
      std::ifstream in(positional[f], std::ios::binary);
      if (!in) {
        std::fprintf(stderr, "error: %s: cannot open the file\n",
                     positional[f].c_str());
        return 1;
      }
      std::ostringstream text;
      text << in.rdbuf();
      std::string data = text.str();
      Row row;
      row.file = positional[f];
      row.bytes = data.size();
      row.tokens = tokenizer.encode(data, false).size();
      std::vector<double> times;
      for (int r = 0; r < repeat; ++r) {
        auto start = std::chrono::steady_clock::now();
        size_t n = tokenizer.encode(data, false).size();
        times.push_back(std::chrono::duration<double>(
                            std::chrono::steady_clock::now() - start)
                            .count());
        row.tokens = n;
      }
      std::sort(times.begin(), times.end());
      row.seconds = times[times.size() / 2];
      rows.push_back(row);
    }
    std::printf("| file | bytes | tokens | bytes/token | median s | MB/s |\n");
    std::printf("|---|---:|---:|---:|---:|---:|\n");
    for (const Row &r : rows)
      std::printf("| %s | %zu | %zu | %.2f | %.4f | %.2f |\n", r.file.c_str(),
                  r.bytes, r.tokens,
                  double(r.bytes) / std::max<size_t>(1, r.tokens), r.seconds,
                  r.mbPerSecond());
    if (!jsonPath.empty()) {
      nlohmann::json doc;
      doc["benchmark"] = "tokenizer-encode";
      doc["tokenizer"] = positional[0];
      doc["threads"] = 1;
      doc["repeat"] = repeat;
      for (const Row &r : rows)
        doc["rows"].push_back({{"file", r.file},
                               {"bytes", r.bytes},
                               {"tokens", r.tokens},
                               {"median_s", r.seconds},
                               {"mb_per_s", r.mbPerSecond()}});
      std::ofstream out(jsonPath);
      out << doc.dump(2) << "\n";
      if (!out) {
        std::fprintf(stderr, "error: %s: cannot write\n", jsonPath.c_str());
        return 1;
      }
    }
  } catch (const strata::tok::TokenizerError &e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
