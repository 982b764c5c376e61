#include "models/ParseInteger.h"

namespace strata {

IntegerParse parseDecimalInteger(std::string_view text, int64_t &out) {
  size_t i = 0;
  bool negative = false;
  if (!text.empty() && (text[0] == '+' || text[0] == '-')) {
    negative = text[0] == '-';
    i = 1;
  }
  if (i == text.size())
    return IntegerParse::Malformed;
  // The magnitude is gathered unsigned so that INT64_MIN, whose magnitude
  // is one more than INT64_MAX, is read without overflow.
  const uint64_t limit =
      negative ? uint64_t(INT64_MAX) + 1 : uint64_t(INT64_MAX);
  uint64_t magnitude = 0;
  bool tooLarge = false;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (c < '0' || c > '9')
      return IntegerParse::Malformed;
    unsigned digit = unsigned(c - '0');
    // Every digit is still checked after an overflow: "99999999999999999999x"
    // is malformed, not out of range.
    if (tooLarge || magnitude > (limit - digit) / 10)
      tooLarge = true;
    else
      magnitude = magnitude * 10 + digit;
  }
  if (tooLarge)
    return IntegerParse::OutOfRange;
  out = negative ? int64_t(0 - magnitude) : int64_t(magnitude);
  return IntegerParse::Ok;
}

} // namespace strata
