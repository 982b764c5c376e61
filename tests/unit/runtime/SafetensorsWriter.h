// A minimal safetensors writer for tests: the header is returned as text so
// that tests can damage it on purpose before packing the file.
#ifndef STRATA_TESTS_UNIT_RUNTIME_SAFETENSORSWRITER_H
#define STRATA_TESTS_UNIT_RUNTIME_SAFETENSORSWRITER_H

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

namespace strata::testing {

struct StTensor {
  std::string name;
  std::string dtype; ///< "BF16", "F16", "F32", ...
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
};

using StJson = nlohmann::ordered_json;

/// One header entry: dtype, shape and the byte range [begin, end).
inline StJson safetensorsEntry(const StTensor &t, uint64_t begin,
                               uint64_t end) {
  return {
      {"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {begin, end}}};
}

/// The JSON header of `tensors`, laid out back to back in order, compact
/// as writers make it (tests edit its text); `metadata` as __metadata__
/// unless it is null (tests give it values of the wrong kind on purpose).
inline std::string safetensorsHeader(const std::vector<StTensor> &tensors,
                                     const StJson &metadata = nullptr) {
  StJson h = StJson::object();
  if (!metadata.is_null())
    h["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (const StTensor &t : tensors) {
    h[t.name] = safetensorsEntry(t, offset, offset + t.bytes.size());
    offset += t.bytes.size();
  }
  return h.dump();
}

/// The JSON header of `tensors` with the data offsets given, in order, for
/// tests of layouts the writer above never makes.
inline std::string
safetensorsHeaderAt(const std::vector<StTensor> &tensors,
                    const std::vector<std::pair<uint64_t, uint64_t>> &offsets) {
  StJson h = StJson::object();
  for (size_t i = 0; i < tensors.size(); ++i)
    h[tensors[i].name] =
        safetensorsEntry(tensors[i], offsets[i].first, offsets[i].second);
  return h.dump();
}

/// The file: u64 header size (little-endian), `header`, then the data of
/// `tensors` back to back.
inline std::string packSafetensors(const std::string &header,
                                   const std::vector<StTensor> &tensors) {
  std::string out;
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i)
    out += char((n >> (8 * i)) & 0xFF);
  out += header;
  for (const StTensor &t : tensors)
    out.append(t.bytes.begin(), t.bytes.end());
  return out;
}

inline void writeFile(const std::string &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
}

inline void writeSafetensors(const std::string &path,
                             const std::vector<StTensor> &tensors) {
  writeFile(path, packSafetensors(safetensorsHeader(tensors), tensors));
}

/// A fresh folder under the system's temporary folder, removed with the
/// object.
class TempDir {
public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("strata-st-" + std::to_string(::getpid()) + "-" +
             std::to_string(counter++));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string file(const std::string &name) const {
    return (path_ / name).string();
  }

private:
  std::filesystem::path path_;
};

} // namespace strata::testing

#endif // STRATA_TESTS_UNIT_RUNTIME_SAFETENSORSWRITER_H
