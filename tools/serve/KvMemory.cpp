#include "tools/serve/KvMemory.h"

#include "runtime/MemoryBudget.h"

#include <cmath>
#include <cstdlib>

namespace strata::serve {

namespace {

/// A finite decimal number that is the whole of `text` (no sign, no
/// exponent, no hex: what a person writes for a share or a size).
bool parseDecimal(const std::string &text, double &out) {
  if (text.empty() || text.size() > 32)
    return false;
  bool digits = false, dot = false;
  for (char c : text) {
    if (c >= '0' && c <= '9')
      digits = true;
    else if (c == '.' && !dot)
      dot = true;
    else
      return false;
  }
  if (!digits)
    return false;
  out = std::strtod(text.c_str(), nullptr);
  return std::isfinite(out);
}

bool endsWith(const std::string &text, const std::string &suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

} // namespace

bool parseKvMemory(const std::string &text, KvMemory &out,
                   std::string &error) {
  error = "--kv-memory expects a share of the free memory in (0, 1] (0.9) "
          "or a size in GiB or MiB (24GiB, 512MiB), got '" +
          text + "'";
  double value = 0.0;
  for (const auto &[unit, scale] :
       {std::pair<const char *, double>{"GiB", 1024.0 * 1024.0 * 1024.0},
        {"MiB", 1024.0 * 1024.0}}) {
    if (!endsWith(text, unit))
      continue;
    if (!parseDecimal(text.substr(0, text.size() - 3), value) ||
        value * scale < 1.0 || value * scale > 0x1p62)
      return false;
    out = KvMemory{};
    out.bytes = uint64_t(value * scale);
    error.clear();
    return true;
  }
  if (!parseDecimal(text, value) || value <= 0.0 || value > 1.0)
    return false;
  out = KvMemory{};
  out.isFraction = true;
  out.fraction = value;
  error.clear();
  return true;
}

bool kvMemoryBytes(const KvMemory &memory, uint64_t freeBytes,
                   uint64_t &bytes, std::string &error) {
  if (memory.isFraction) {
    if (freeBytes == UINT64_MAX) {
      error = "--kv-memory: the free memory cannot be read here, so a share "
              "of it cannot be taken; give a size (24GiB)";
      return false;
    }
    bytes = uint64_t(std::floor(double(freeBytes) * memory.fraction));
    return true;
  }
  if (memory.bytes > freeBytes) {
    error = "--kv-memory " + formatBytes(memory.bytes) + " is more than the " +
            formatBytes(freeBytes) + " free";
    return false;
  }
  bytes = memory.bytes;
  return true;
}

} // namespace strata::serve
