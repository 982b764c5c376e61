// `--kv-memory`: how much memory the serving KV pool may take, as a share
// of the memory that is free once the weights are loaded, or as a size.
#ifndef STRATA_TOOLS_SERVE_KVMEMORY_H
#define STRATA_TOOLS_SERVE_KVMEMORY_H

#include <cstdint>
#include <string>

namespace strata::serve {

struct KvMemory {
  /// A share in (0, 1] of the free memory, or a number of bytes.
  bool isFraction = false;
  double fraction = 0.0;
  uint64_t bytes = 0;
};

/// "0.9" (a share in (0, 1]), "24GiB", "512MiB", "1.5GiB". False with
/// `error` saying which forms are accepted.
bool parseKvMemory(const std::string &text, KvMemory &out, std::string &error);

/// The bytes `memory` stands for when `freeBytes` are free. False with
/// `error` when a size is more than is free (a share never is).
bool kvMemoryBytes(const KvMemory &memory, uint64_t freeBytes,
                   uint64_t &bytes, std::string &error);

} // namespace strata::serve

#endif // STRATA_TOOLS_SERVE_KVMEMORY_H
