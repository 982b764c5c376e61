// The one error type of the tokenizer library. Every failure (a damaged or
// unsupported tokenizer.json, text that is not UTF-8) throws it, with a
// message that names the file and, for JSON, the place in it:
//   tokenizer.json:3:18: /pre_tokenizer/type: unsupported pre-tokenizer ...
#ifndef STRATA_RUNTIME_TOKENIZER_TOKENIZERERROR_H
#define STRATA_RUNTIME_TOKENIZER_TOKENIZERERROR_H

#include <stdexcept>
#include <string>

namespace strata::tok {

class TokenizerError : public std::runtime_error {
public:
  explicit TokenizerError(const std::string &message)
      : std::runtime_error(message) {}
};

} // namespace strata::tok

#endif // STRATA_RUNTIME_TOKENIZER_TOKENIZERERROR_H
