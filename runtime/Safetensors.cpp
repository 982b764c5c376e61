#include "runtime/Safetensors.h"

#include "runtime/plan/InputFile.h"
#include "json/JsonTree.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace strata {

const char *toString(SafetensorsDType t) {
  switch (t) {
  case SafetensorsDType::BF16:
    return "BF16";
  case SafetensorsDType::F16:
    return "F16";
  case SafetensorsDType::F32:
    return "F32";
  }
  return "?";
}

uint64_t byteWidth(SafetensorsDType t) {
  return t == SafetensorsDType::F32 ? 4 : 2;
}

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

namespace {

/// The reference implementation refuses larger headers; real ones are a
/// few hundred kilobytes at most.
constexpr uint64_t kMaxHeaderBytes = 100000000;

std::string byteText(uint8_t b) {
  char buf[16];
  if (b >= 0x20 && b < 0x7F)
    std::snprintf(buf, sizeof buf, "'%c'", char(b));
  else
    std::snprintf(buf, sizeof buf, "0x%02X", unsigned(b));
  return buf;
}

bool parseDType(const std::string &s, SafetensorsDType &out) {
  if (s == "BF16")
    out = SafetensorsDType::BF16;
  else if (s == "F16")
    out = SafetensorsDType::F16;
  else if (s == "F32")
    out = SafetensorsDType::F32;
  else
    return false;
  return true;
}

/// One header entry, checked against the data region of `dataSize` bytes.
bool readTensor(const std::string &file, const std::string &name,
                const JsonValue &v, uint64_t dataSize,
                SafetensorsFile::Tensor &t, std::string &error) {
  auto bad = [&](const std::string &what) {
    error = file + ": error: tensor '" + name + "': " + what;
    return false;
  };
  if (!v.isObject())
    return bad(std::string("expected an object, got ") + v.kindName());
  for (const JsonMember &m : v.object)
    if (m.key != "dtype" && m.key != "shape" && m.key != "data_offsets")
      return bad("unknown field '" + m.key + "'");
  const JsonValue *dtype = v.get("dtype");
  const JsonValue *shape = v.get("shape");
  const JsonValue *offsets = v.get("data_offsets");
  if (!dtype || !shape || !offsets)
    return bad("expected the fields dtype, shape and data_offsets");
  if (!dtype->isString())
    return bad("dtype is not a string");
  if (!parseDType(dtype->text, t.dtype))
    return bad("unsupported dtype " + dtype->text +
               " (supported: BF16, F16, F32)");
  if (!shape->isArray())
    return bad("shape is not an array");
  // A product that overflowed would let a bogus shape pass the size check.
  uint64_t elements = 1;
  for (size_t i = 0; i < shape->array.size(); ++i) {
    const JsonValue &d = shape->array[i];
    uint64_t n = 0;
    bool digits = d.isNumber() &&
                  d.text.find_first_not_of("0123456789") == std::string::npos;
    if (!digits)
      return bad("shape entry " + std::to_string(i) + " is " +
                 (d.isNumber() ? d.text : d.kindName()) +
                 ", expected a non-negative integer");
    if (!d.asUint64(n) || n > uint64_t(INT64_MAX))
      return bad("shape entry " + std::to_string(i) + " (" + d.text +
                 ") is too large");
    t.shape.push_back(int64_t(n));
    if (n && elements > UINT64_MAX / n / byteWidth(t.dtype))
      return bad("shape " + shapeText(t.shape) +
                 " is too large: its size in bytes overflows 64 bits");
    elements *= n;
  }
  if (!offsets->isArray() || offsets->array.size() != 2 ||
      !offsets->array[0].asUint64(t.begin) ||
      !offsets->array[1].asUint64(t.end))
    return bad("data_offsets is not a pair of non-negative integers");
  if (t.begin > t.end || t.end > dataSize)
    return bad("data_offsets [" + std::to_string(t.begin) + ", " +
               std::to_string(t.end) + "] are outside the data region of " +
               std::to_string(dataSize) + " bytes");
  uint64_t expected = elements * byteWidth(t.dtype);
  if (t.end - t.begin != expected)
    return bad("data_offsets [" + std::to_string(t.begin) + ", " +
               std::to_string(t.end) + "] hold " +
               std::to_string(t.end - t.begin) + " bytes, but shape " +
               shapeText(t.shape) + " of " + toString(t.dtype) + " needs " +
               std::to_string(expected));
  return true;
}

std::string rangeText(const SafetensorsFile::Tensor &t) {
  return "[" + std::to_string(t.begin) + ", " + std::to_string(t.end) + ")";
}

/// The tensors must tile the data region: in offset order, each starts
/// where the previous one ended, the first at 0, the last at the end. As in
/// the reference implementation, there are neither gaps nor overlaps (a
/// writer aligns the data by padding the header with spaces instead), so
/// every byte belongs to exactly one tensor: overlapping tensors would
/// alias each other's values, and unused bytes could hide anything.
bool checkLayout(const std::string &path,
                 const std::vector<SafetensorsFile::Tensor> &tensors,
                 uint64_t dataSize, std::string &error) {
  std::vector<const SafetensorsFile::Tensor *> byOffset;
  for (const SafetensorsFile::Tensor &t : tensors)
    byOffset.push_back(&t);
  std::sort(
      byOffset.begin(), byOffset.end(),
      [](const SafetensorsFile::Tensor *a, const SafetensorsFile::Tensor *b) {
        return std::make_pair(a->begin, a->end) <
               std::make_pair(b->begin, b->end);
      });
  const SafetensorsFile::Tensor *previous = nullptr;
  uint64_t covered = 0;
  for (const SafetensorsFile::Tensor *t : byOffset) {
    if (t->begin < covered) {
      error = path + ": error: tensor '" + t->name + "' (data_offsets " +
              rangeText(*t) + ") overlaps tensor '" + previous->name + "' " +
              rangeText(*previous) +
              "; every byte of the data region belongs to one tensor";
      return false;
    }
    if (t->begin > covered) {
      error = path + ": error: bytes [" + std::to_string(covered) + ", " +
              std::to_string(t->begin) + ") of the data region, " +
              (previous ? "between tensor '" + previous->name + "' and "
                        : std::string("before ")) +
              "tensor '" + t->name +
              "', belong to no tensor; the format has no gaps between "
              "tensors";
      return false;
    }
    covered = t->end;
    previous = t;
  }
  if (covered != dataSize) {
    error = path + ": error: the data region holds " +
            std::to_string(dataSize) + " bytes, but " +
            (previous ? "the last tensor '" + previous->name + "' ends at " +
                            std::to_string(covered)
                      : std::string("the header lists no tensor")) +
            ": the file is longer than its header describes";
    return false;
  }
  return true;
}

} // namespace

std::unique_ptr<SafetensorsFile> SafetensorsFile::open(const std::string &path,
                                                       std::string &error) {
  // Named before it is opened: opening a FIFO would block.
  uint64_t size = 0;
  error = plan::checkRegularFile(path, "safetensors file", size);
  if (!error.empty())
    return nullptr;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    error = path + ": error: cannot open: " + std::strerror(errno);
    return nullptr;
  }
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    error = path + ": error: not a regular file";
    ::close(fd);
    return nullptr;
  }
  std::unique_ptr<SafetensorsFile> file(new SafetensorsFile());
  file->path_ = path;
  file->mapSize_ = uint64_t(st.st_size);
  if (file->mapSize_ < 8) {
    error = path + ": error: truncated: " + std::to_string(file->mapSize_) +
            " bytes, a safetensors file starts with an 8-byte header size";
    ::close(fd);
    return nullptr;
  }
  void *map = ::mmap(nullptr, file->mapSize_, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd); // the mapping keeps the file alive
  if (map == MAP_FAILED) {
    error = path + ": error: cannot map: " + std::strerror(errno);
    return nullptr;
  }
  file->map_ = map;
  // Each tensor is read once, front to back: let the kernel read ahead.
  ::madvise(map, file->mapSize_, MADV_SEQUENTIAL);
  const uint8_t *bytes = static_cast<const uint8_t *>(map);
  // The format is little-endian; so are the hosts the runtime supports.
  uint64_t headerSize = 0;
  for (int i = 7; i >= 0; --i)
    headerSize = (headerSize << 8) | bytes[i];
  if (headerSize > file->mapSize_ - 8) {
    error = path + ": error: header size " + std::to_string(headerSize) +
            " is beyond the end of the file (" +
            std::to_string(file->mapSize_) +
            " bytes): truncated or not a "
            "safetensors file";
    return nullptr;
  }
  if (headerSize > kMaxHeaderBytes) {
    error = path + ": error: header size " + std::to_string(headerSize) +
            " is larger than the format's limit of " +
            std::to_string(kMaxHeaderBytes) + " bytes";
    return nullptr;
  }
  std::string_view header(reinterpret_cast<const char *>(bytes + 8),
                          headerSize);
  // The format requires it; anything else is not a safetensors header.
  if (header.empty() || header[0] != '{') {
    error = path + ": error: the header does not start with '{' (byte 8 " +
            (header.empty() ? std::string("is the end of the file")
                            : "is " + byteText(uint8_t(header[0]))) +
            "): not a safetensors file";
    return nullptr;
  }
  JsonValue root;
  JsonSyntaxError jsonError;
  // The header is one line of a binary file: its messages name byte
  // offsets, counted from the start of the file.
  JsonParseOptions where;
  where.baseOffset = 8;
  where.byteOffsets = true;
  if (!parseStrictJson(header, root, jsonError, where)) {
    error = path + ": error: bad JSON header at byte " +
            std::to_string(jsonError.pos.offset) + ": " + jsonError.message;
    return nullptr;
  }
  if (!root.isObject()) {
    error = path + ": error: the header is " + root.kindName() +
            ", expected an object of tensors";
    return nullptr;
  }
  file->dataStart_ = bytes + 8 + headerSize;
  uint64_t dataSize = file->mapSize_ - 8 - headerSize;
  for (const JsonMember &member : root.object) {
    const std::string &name = member.key;
    const JsonValue &value = member.value;
    if (name == "__metadata__") {
      if (!value.isObject()) {
        error = path + ": error: __metadata__ is " + value.kindName() +
                ", expected an object of strings";
        return nullptr;
      }
      for (const JsonMember &entry : value.object) {
        if (!entry.value.isString()) {
          error = path + ": error: __metadata__ entry '" + entry.key + "' is " +
                  entry.value.kindName() + ", expected a string";
          return nullptr;
        }
        file->metadata_[entry.key] = entry.value.text;
      }
      continue;
    }
    Tensor t;
    t.name = name;
    if (!readTensor(path, name, value, dataSize, t, error))
      return nullptr;
    file->byName_[name] = file->tensors_.size();
    file->tensors_.push_back(std::move(t));
  }
  if (!checkLayout(path, file->tensors_, dataSize, error))
    return nullptr;
  return file;
}

SafetensorsFile::~SafetensorsFile() {
  if (map_)
    ::munmap(map_, mapSize_);
}

const SafetensorsFile::Tensor *
SafetensorsFile::find(const std::string &name) const {
  auto it = byName_.find(name);
  return it == byName_.end() ? nullptr : &tensors_[it->second];
}

namespace {

bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

} // namespace

std::unique_ptr<SafetensorsCheckpoint>
SafetensorsCheckpoint::open(const std::string &path, std::string &error) {
  std::unique_ptr<SafetensorsCheckpoint> ckpt(new SafetensorsCheckpoint());
  ckpt->path_ = path;
  if (!endsWith(path, ".json")) {
    auto file = SafetensorsFile::open(path, error);
    if (!file)
      return nullptr;
    for (const SafetensorsFile::Tensor &t : file->tensors())
      ckpt->tensors_[t.name] = Entry{file.get(), &t};
    ckpt->files_.push_back(std::move(file));
    return ckpt;
  }

  // An index lists tensor names and shard files: megabytes at most.
  std::string text;
  if (!plan::readRegularFile(path, "checkpoint index", uint64_t(1) << 28, text,
                             error))
    return nullptr;
  // A text file: messages name line and column, as for config.json.
  JsonValue root;
  JsonSyntaxError jsonError;
  if (!parseStrictJson(text, root, jsonError)) {
    error = path + ":" + std::to_string(jsonError.pos.line) + ":" +
            std::to_string(jsonError.pos.column) +
            ": error: " + jsonError.message;
    return nullptr;
  }
  const JsonValue *map = root.get("weight_map");
  if (!map || !map->isObject()) {
    error = path + ": error: expected an object with a \"weight_map\" object "
                   "(tensor name -> shard file)";
    return nullptr;
  }
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  std::map<std::string, SafetensorsFile *> shards;
  for (const JsonMember &entry : map->object) {
    const std::string &name = entry.key;
    const JsonValue &shard = entry.value;
    if (!shard.isString() || shard.text.empty()) {
      error =
          path + ": error: weight_map entry '" + name + "' is not a file name";
      return nullptr;
    }
    // Shards lie beside the index (or below it): an index cannot make the
    // loader open files elsewhere.
    std::filesystem::path shardName(shard.text);
    bool inside = shardName.is_relative();
    for (const std::filesystem::path &part : shardName)
      inside = inside && part != "..";
    if (!inside) {
      error = path + ": error: weight_map puts tensor '" + name + "' in '" +
              shard.text +
              "', outside the index's folder; shards are named relative to "
              "it, without '..'";
      return nullptr;
    }
    auto it = shards.find(shard.text);
    if (it == shards.end()) {
      std::string shardPath = (dir / shard.text).lexically_normal().string();
      std::string shardError;
      auto file = SafetensorsFile::open(shardPath, shardError);
      if (!file) {
        error = shardError + " (the shard of tensor '" + name + "' in " + path +
                ")";
        return nullptr;
      }
      it = shards.emplace(shard.text, file.get()).first;
      ckpt->files_.push_back(std::move(file));
    }
    const SafetensorsFile::Tensor *t = it->second->find(name);
    if (!t) {
      error = path + ": error: weight_map puts tensor '" + name + "' in " +
              it->second->path() + ", which has no such tensor";
      return nullptr;
    }
    ckpt->tensors_[name] = Entry{it->second, t};
  }
  // A shard tensor the index does not list would silently be ignored.
  for (const auto &file : ckpt->files_)
    for (const SafetensorsFile::Tensor &t : file->tensors()) {
      const Entry *e = ckpt->find(t.name);
      if (!e || e->file != file.get()) {
        error = file->path() + ": error: tensor '" + t.name +
                "' is not listed for this file in " + path;
        return nullptr;
      }
    }
  return ckpt;
}

const SafetensorsCheckpoint::Entry *
SafetensorsCheckpoint::find(const std::string &name) const {
  auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : &it->second;
}

uint64_t SafetensorsCheckpoint::totalBytes() const {
  uint64_t n = 0;
  for (const auto &[name, e] : tensors_)
    n += e.tensor->end - e.tensor->begin;
  return n;
}

} // namespace strata
