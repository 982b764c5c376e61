// tokenizer.json files through Tokenizer::fromJson, then text through
// encode, decode and the streaming decoder. The input is the JSON, a NUL
// byte, and the text to encode. Loading succeeds or throws one
// TokenizerError naming the file; a loaded tokenizer encodes valid UTF-8
// (and refuses the rest with a TokenizerError), decodes any ids, and its
// streaming decode adds up to decode.
#include "runtime/tokenizer/StreamDecoder.h"
#include "runtime/tokenizer/Tokenizer.h"
#include "tests/fuzz/FuzzCheck.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

using namespace strata::tok;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view input(reinterpret_cast<const char *>(data), size);
  size_t nul = input.find('\0');
  std::string_view json = input.substr(0, nul);
  std::string_view text = nul == std::string_view::npos ? std::string_view()
                                                        : input.substr(nul + 1);
  std::optional<Tokenizer> tokenizer;
  try {
    tokenizer.emplace(Tokenizer::fromJson(json, "tokenizer.json"));
  } catch (const TokenizerError &e) {
    FUZZ_CHECK(std::string_view(e.what()).substr(0, 14) == "tokenizer.json",
               "a load error names the file");
    return 0;
  }
  std::vector<int32_t> ids;
  try {
    ids = tokenizer->encode(text, true);
  } catch (const TokenizerError &) {
    return 0; // text that is not UTF-8
  }
  for (int32_t id : ids)
    FUZZ_CHECK(id >= 0 && id < tokenizer->vocabSize(), "ids are in range");
  std::string whole = tokenizer->decode(ids, false);
  StreamDecoder stream(*tokenizer);
  std::string streamed;
  for (int32_t id : ids)
    streamed += stream.step(id);
  streamed += stream.finish();
  FUZZ_CHECK(streamed == whole, "streaming decode adds up to decode");
  // Any ids decode, unknown ones included.
  std::vector<int32_t> raw;
  for (size_t i = 0; i + 4 <= text.size() && raw.size() < 64; i += 4)
    raw.push_back(static_cast<int32_t>(static_cast<uint8_t>(text[i]) |
                                       static_cast<uint8_t>(text[i + 1]) << 8));
  (void)tokenizer->decode(raw, true);
  return 0;
}
