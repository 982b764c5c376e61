// The one reader of decimal integers typed by users: option values on a
// command line, integer scalars in a model file, environment variables of
// the tests. Stricter than strtoll, which skips leading blanks, stops at
// the first stray character and reports overflow only through errno.
//
// Kept in models/ beside NearestName.h, for the same reason: the importers
// and everything above them can share it.
#ifndef STRATA_MODELS_PARSEINTEGER_H
#define STRATA_MODELS_PARSEINTEGER_H

#include <cstdint>
#include <string_view>

namespace strata {

enum class IntegerParse {
  Ok,
  /// Not an optional '+' or '-' followed by one or more digits 0-9 and
  /// nothing else (empty text, blanks, a second sign, "0x10", "1e3", "5.0").
  Malformed,
  /// Well formed, but outside [INT64_MIN, INT64_MAX].
  OutOfRange,
};

/// Reads `text` as a whole decimal integer; `out` is set only on Ok.
IntegerParse parseDecimalInteger(std::string_view text, int64_t &out);

} // namespace strata

#endif // STRATA_MODELS_PARSEINTEGER_H
