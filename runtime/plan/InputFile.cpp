#include "runtime/plan/InputFile.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sys/stat.h>

namespace strata::plan {

std::string checkRegularFile(const std::string &path, const char *what,
                             uint64_t &size) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return path + ": error: cannot open " + what + ": " + std::strerror(errno);
  if (S_ISDIR(st.st_mode))
    return path + ": error: is a directory, not a " + what;
  if (!S_ISREG(st.st_mode)) {
    const char *kind = S_ISFIFO(st.st_mode)   ? "a FIFO"
                       : S_ISSOCK(st.st_mode) ? "a socket"
                       : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)
                           ? "a device"
                           : "a special file";
    return path + ": error: is " + kind + ", not a regular file; give a " +
           what;
  }
  size = uint64_t(st.st_size);
  return "";
}

bool readRegularFile(const std::string &path, const char *what,
                     uint64_t maxBytes, std::string &bytes,
                     std::string &error) {
  uint64_t size = 0;
  error = checkRegularFile(path, what, size);
  if (!error.empty())
    return false;
  if (size > maxBytes) {
    error = path + ": error: is " + std::to_string(size) +
            " bytes, more than any " + what + " (" + std::to_string(maxBytes) +
            ")";
    return false;
  }
  FILE *f = std::fopen(path.c_str(), "rb");
  if (!f) {
    error = path + ": error: cannot open " + what + ": " + std::strerror(errno);
    return false;
  }
  bytes.assign(size_t(size), '\0');
  size_t got = size ? std::fread(&bytes[0], 1, bytes.size(), f) : 0;
  bool readError = std::ferror(f) != 0;
  std::fclose(f);
  if (readError || got != bytes.size()) {
    error = path + ": error: cannot read " + what +
            (readError ? std::string(": ") + std::strerror(errno)
                       : std::string(": it changed while being read"));
    return false;
  }
  return true;
}

} // namespace strata::plan
