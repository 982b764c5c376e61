// Reading and writing plan files (docs/plan-format.md).
//
// The file is a fixed header (magic, format version, payload size, CRC-32
// of the payload) followed by the payload, a little-endian encoding of the
// Plan struct. Readers reject, each with its own message: a file that is not
// a plan, another format version, a truncated or overlong file, a payload
// whose checksum does not match, and a payload that decodes to an invalid
// plan (validatePlan). No exceptions: functions return false and set error.
#ifndef STRATA_RUNTIME_PLAN_PLANFILE_H
#define STRATA_RUNTIME_PLAN_PLANFILE_H

#include "runtime/plan/Plan.h"

#include <string>

namespace strata::plan {

/// Size of the fixed header in bytes.
constexpr size_t kPlanHeaderBytes = 32;

std::string serializePlan(const Plan &plan);
/// `name` prefixes error messages ("model.splan: error: ...").
bool deserializePlan(const std::string &bytes, const std::string &name,
                     Plan &plan, std::string &error);

/// One launch's kernel and parameters in the plan file's encoding (the
/// kernel code, then each field in declared order), and back. Decoding
/// checks codes and lengths only; the ranges of the values depend on the
/// launch's operands and the plan, which validatePlan checks.
std::string serializeParams(const KernelParams &params);
bool deserializeParams(const std::string &bytes, KernelParams &params,
                       std::string &error);

bool writePlanFile(const Plan &plan, const std::string &path,
                   std::string &error);
bool readPlanFile(const std::string &path, Plan &plan, std::string &error);
/// Whether `path` is a regular file that starts with the plan signature
/// (for commands that take a model file or a plan); opens nothing else.
bool hasPlanSignature(const std::string &path);

uint32_t crc32(const void *data, size_t size);

} // namespace strata::plan

#endif // STRATA_RUNTIME_PLAN_PLANFILE_H
