// Reading safetensors checkpoints: one `.safetensors` file, or a sharded
// checkpoint described by `model.safetensors.index.json`.
//
// A file is a little-endian u64 header size, a JSON header (tensor name ->
// {dtype, shape, data_offsets: [begin, end]} relative to the data region,
// plus an optional "__metadata__" object of strings), then the data. Files
// are memory-mapped read-only: the loader touches each tensor once while
// converting it, so nothing is copied twice and a checkpoint larger than
// free memory still loads. Everything about the header is checked when a
// file is opened, so a tensor handed out is always inside the file and has
// exactly shape x dtype bytes.
#ifndef STRATA_RUNTIME_SAFETENSORS_H
#define STRATA_RUNTIME_SAFETENSORS_H

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace strata {

/// Element types a checkpoint may hold; others are rejected when the file
/// is opened (the error names the tensor and its dtype).
enum class SafetensorsDType : uint8_t { BF16, F16, F32 };
const char *toString(SafetensorsDType t);
uint64_t byteWidth(SafetensorsDType t);
/// "[a, b, c]", for messages about tensor shapes.
std::string shapeText(const std::vector<int64_t> &shape);

class SafetensorsFile {
public:
  struct Tensor {
    std::string name;
    SafetensorsDType dtype = SafetensorsDType::F32;
    std::vector<int64_t> shape;
    /// Byte range in the data region (after the header).
    uint64_t begin = 0;
    uint64_t end = 0;
  };

  /// Maps `path` and checks its header. Null with `error` set (naming the
  /// file, and the tensor where one is at fault) on failure.
  static std::unique_ptr<SafetensorsFile> open(const std::string &path,
                                               std::string &error);
  ~SafetensorsFile();
  SafetensorsFile(const SafetensorsFile &) = delete;
  SafetensorsFile &operator=(const SafetensorsFile &) = delete;

  const std::string &path() const { return path_; }
  /// In header order.
  const std::vector<Tensor> &tensors() const { return tensors_; }
  const Tensor *find(const std::string &name) const;
  const uint8_t *data(const Tensor &t) const { return dataStart_ + t.begin; }
  const std::map<std::string, std::string> &metadata() const {
    return metadata_;
  }

private:
  SafetensorsFile() = default;

  std::string path_;
  void *map_ = nullptr;
  uint64_t mapSize_ = 0;
  const uint8_t *dataStart_ = nullptr;
  std::vector<Tensor> tensors_;
  std::map<std::string, size_t> byName_;
  std::map<std::string, std::string> metadata_;
};

/// Every tensor of a checkpoint, whichever shard holds it.
class SafetensorsCheckpoint {
public:
  struct Entry {
    const SafetensorsFile *file = nullptr;
    const SafetensorsFile::Tensor *tensor = nullptr;
  };

  /// `path` is a `.safetensors` file or an index (a name ending in
  /// ".json") whose "weight_map" names, for each tensor, the shard holding
  /// it, relative to the index's folder.
  static std::unique_ptr<SafetensorsCheckpoint> open(const std::string &path,
                                                     std::string &error);

  const std::string &path() const { return path_; }
  /// By name, in name order.
  const std::map<std::string, Entry> &tensors() const { return tensors_; }
  const Entry *find(const std::string &name) const;
  uint64_t totalBytes() const;

private:
  std::string path_;
  std::vector<std::unique_ptr<SafetensorsFile>> files_;
  std::map<std::string, Entry> tensors_;
};

} // namespace strata

#endif // STRATA_RUNTIME_SAFETENSORS_H
