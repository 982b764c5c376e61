// The runtime's strict JSON reader (runtime/JsonLite.h), which parses every
// safetensors header and sharding index before anything else looks at them.
// Beyond crashes and stack exhaustion, it checks what the header promises:
// bounded nesting, unique keys, exact integers, offsets relative to the
// base offset.
#include "runtime/JsonLite.h"
#include "tests/fuzz/FuzzCheck.h"

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>

using namespace strata;

namespace {

void checkValue(const json::Value &v, size_t textSize, size_t base, int depth) {
  FUZZ_CHECK(depth <= json::kMaxDepth, "nesting is bounded");
  FUZZ_CHECK(v.offset >= base && v.offset < base + textSize,
             "a value's offset is inside the text");
  uint64_t n = 0;
  if (v.asUint64(n))
    FUZZ_CHECK(std::to_string(n) == v.text,
               "asUint64 reads exactly the integer written");
  if (v.isArray())
    for (const json::Value &e : v.array)
      checkValue(e, textSize, base, depth + 1);
  if (v.isObject()) {
    std::set<std::string> keys;
    for (const auto &[key, member] : v.object) {
      FUZZ_CHECK(keys.insert(key).second, "object keys are unique");
      FUZZ_CHECK(v.find(key) == &member, "find returns the member");
      checkValue(member, textSize, base, depth + 1);
    }
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  // A safetensors header starts at byte 8 of its file; errors and offsets
  // count from there.
  constexpr size_t kBase = 8;
  json::Value root;
  std::string error;
  bool ok = json::parse(text, root, error, kBase);
  if (ok) {
    FUZZ_CHECK(error.empty(), "no error on success");
    checkValue(root, size, kBase, 0);
  } else {
    FUZZ_CHECK(error.rfind("at byte ", 0) == 0, "errors name a byte offset");
    size_t at = std::stoull(error.substr(8));
    FUZZ_CHECK(at >= kBase && at <= kBase + size,
               "the error's offset is inside the text or at its end");
  }
  return 0;
}
