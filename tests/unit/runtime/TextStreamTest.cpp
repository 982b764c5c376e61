// TextStream: streamed text adds up to the decoded text, and a stop string
// ends it where it begins, across token boundaries, without ever being
// shown. The tokenizer is the CLI tests' small byte-level BPE
// (tests/lit/cli/Inputs/tiny-tokenizer).
#include "runtime/TextStream.h"

#include <catch2/catch.hpp>

using namespace strata;

namespace {

const tok::Tokenizer &tiny() {
  static const tok::Tokenizer t = tok::Tokenizer::fromFile(
      std::string(STRATA_TEST_INPUTS) + "/tiny-tokenizer/tokenizer.json");
  return t;
}

/// Pushes every id; returns what was shown, finish() included.
std::string streamAll(TextStream &stream, const std::vector<int32_t> &ids) {
  std::string out;
  for (int32_t id : ids)
    out += stream.push(id);
  return out + stream.finish();
}

} // namespace

TEST_CASE("without stop strings the stream is the decoded text") {
  const std::string text = "the cat sat on the mat, naïve café 🙂";
  const std::vector<int32_t> ids = tiny().encode(text, true);
  TextStream stream(tiny(), {});
  CHECK(streamAll(stream, ids) == tiny().decode(ids, true));
  CHECK(stream.shown() == text);
  CHECK_FALSE(stream.stopped());
}

TEST_CASE("a stop string ends the text where it begins, across tokens") {
  const std::vector<int32_t> ids =
      tiny().encode("the cat sat on the mat", false);
  TextStream stream(tiny(), {"never", "t s", "on the"});
  CHECK(streamAll(stream, ids) == "the ca");
  CHECK(stream.stopped());
  CHECK(stream.stopString() == "t s");
  // Nothing comes out after the stop.
  CHECK(stream.push(ids[0]).empty());
}

TEST_CASE("text that may begin a stop string is held until it cannot") {
  const std::vector<int32_t> ids = tiny().encode("the cat sat", false);
  TextStream stream(tiny(), {"cat dog"});
  std::string shown;
  for (int32_t id : ids) {
    shown += stream.push(id);
    // "cat" could still become "cat dog": never shown before " s" comes.
    if (shown.find("cat") != std::string::npos)
      CHECK(shown.find("cat s") != std::string::npos);
  }
  shown += stream.finish();
  CHECK(shown == "the cat sat");
  CHECK_FALSE(stream.stopped());
}

TEST_CASE("special tokens add no text") {
  TextStream stream(tiny(), {});
  CHECK(stream.push(300).empty());
  const std::vector<int32_t> ids = tiny().encode("the", false);
  std::string out = streamAll(stream, ids);
  CHECK(out == "the");
}
