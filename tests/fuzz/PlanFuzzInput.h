// Plan fuzz inputs: a payload checksum guards a plan file, so random
// mutations would almost never reach the payload decoder. The plan targets
// therefore also read each input with its header rewritten to be valid for
// the bytes after it.
#ifndef STRATA_TESTS_FUZZ_PLANFUZZINPUT_H
#define STRATA_TESTS_FUZZ_PLANFUZZINPUT_H

#include "runtime/plan/PlanFile.h"

#include <cstdint>
#include <cstring>
#include <string>

namespace strata::fuzz {

/// `bytes` with a header that announces the rest as a valid payload.
inline std::string withValidHeader(const std::string &bytes) {
  std::string payload = bytes.size() > plan::kPlanHeaderBytes
                            ? bytes.substr(plan::kPlanHeaderBytes)
                            : std::string();
  std::string file(plan::kPlanHeaderBytes, '\0');
  std::memcpy(&file[0], "STRATAPL", 8);
  uint32_t version = plan::kPlanFormatVersion;
  uint64_t payloadBytes = payload.size();
  uint32_t crc = plan::crc32(payload.data(), payload.size());
  std::memcpy(&file[8], &version, 4);
  std::memcpy(&file[16], &payloadBytes, 8);
  std::memcpy(&file[24], &crc, 4);
  return file + payload;
}

} // namespace strata::fuzz

#endif // STRATA_TESTS_FUZZ_PLANFUZZINPUT_H
