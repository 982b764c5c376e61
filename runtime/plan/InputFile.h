// Opening the files a user names (plans, checkpoints): only regular files.
// A directory fails late and obscurely in a stream read, and opening a FIFO
// blocks until some writer appears, so both are refused by name first.
#ifndef STRATA_RUNTIME_PLAN_INPUTFILE_H
#define STRATA_RUNTIME_PLAN_INPUTFILE_H

#include <cstdint>
#include <string>

namespace strata::plan {

/// Empty when `path` names a regular file (after following links), with its
/// size in `size`; else why not, as "PATH: error: ..." ("is a directory",
/// "is not a regular file (a FIFO)", "cannot open: No such file or
/// directory"). `what` names the expected file in the messages ("plan
/// file", "checkpoint").
std::string checkRegularFile(const std::string &path, const char *what,
                             uint64_t &size);

/// Reads `path`, a regular file of at most `maxBytes`, into `bytes`.
bool readRegularFile(const std::string &path, const char *what,
                     uint64_t maxBytes, std::string &bytes, std::string &error);

} // namespace strata::plan

#endif // STRATA_RUNTIME_PLAN_INPUTFILE_H
