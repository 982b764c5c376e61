// Safetensors files through SafetensorsFile::open, the entry point every
// checkpoint load goes through. open() takes a path and maps the file, so
// each input is written to an in-memory file (memfd) opened by its
// /proc/self/fd path: the real code path, no disk traffic, nothing to clean
// up. An accepted file must keep the header's promise: every tensor lies in
// the data region and holds exactly shape x dtype bytes; the check is made
// against the input bytes, independently of the mapping.
#include "runtime/Safetensors.h"
#include "tests/fuzz/FuzzCheck.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include <sys/mman.h>
#include <unistd.h>

using namespace strata;

namespace {

int memFile() {
  static int fd = [] {
    int f = memfd_create("strata-fuzz.safetensors", MFD_CLOEXEC);
    FUZZ_CHECK(f >= 0, "memfd_create");
    return f;
  }();
  return fd;
}

void writeInput(int fd, const uint8_t *data, size_t size) {
  FUZZ_CHECK(ftruncate(fd, 0) == 0, "ftruncate");
  size_t done = 0;
  while (done < size) {
    ssize_t n = pwrite(fd, data + done, size - done, off_t(done));
    FUZZ_CHECK(n > 0, "pwrite");
    done += size_t(n);
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int fd = memFile();
  writeInput(fd, data, size);
  std::string path = "/proc/self/fd/" + std::to_string(fd);
  std::string error;
  auto file = SafetensorsFile::open(path, error);
  if (!file) {
    FUZZ_CHECK(error.rfind(path + ": error: ", 0) == 0,
               "the error names the file");
    return 0;
  }
  FUZZ_CHECK(size >= 8, "a file shorter than its header size is rejected");
  uint64_t headerSize = 0;
  std::memcpy(&headerSize, data, 8);
  FUZZ_CHECK(headerSize <= size - 8, "the header is inside the file");
  uint64_t dataStart = 8 + headerSize;
  for (const SafetensorsFile::Tensor &t : file->tensors()) {
    FUZZ_CHECK(t.begin <= t.end && t.end <= size - dataStart,
               "a tensor lies in the data region");
    uint64_t elements = 1;
    for (int64_t d : t.shape) {
      FUZZ_CHECK(d >= 0, "dimensions are non-negative");
      elements *= uint64_t(d);
    }
    FUZZ_CHECK(t.end - t.begin == elements * byteWidth(t.dtype),
               "a tensor holds shape x dtype bytes");
    FUZZ_CHECK(file->find(t.name) == &t, "find returns the tensor");
    FUZZ_CHECK(std::memcmp(file->data(t), data + dataStart + t.begin,
                           t.end - t.begin) == 0,
               "a tensor's bytes are the file's bytes at its offsets");
  }
  return 0;
}
