// Files that are not model files at all: missing, unreadable, empty, binary,
// truncated or mangled. None may crash the importer; each gets one
// diagnostic.
#include "TestUtil.h"

#include <filesystem>
#include <fstream>
#include <random>
#include <sys/stat.h>
#include <unistd.h>

using namespace strata;
using namespace std::string_literals;
namespace fs = std::filesystem;

namespace {

/// A file in a fresh temporary folder, removed with the object.
class TempFile {
public:
  explicit TempFile(const std::string &name) {
    static int counter = 0;
    dir_ = fs::temp_directory_path() /
           ("strata-model-test-" + std::to_string(::getpid()) + "-" +
            std::to_string(counter++));
    fs::create_directories(dir_);
    path_ = dir_ / name;
  }
  ~TempFile() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string path() const { return path_.string(); }
  void write(const std::string &bytes) const {
    std::ofstream out(path_, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }

private:
  fs::path dir_;
  fs::path path_;
};

std::string randomBytes(std::mt19937 &rng, size_t n, int lo, int hi) {
  std::uniform_int_distribution<int> byte(lo, hi);
  std::string s(n, '\0');
  for (char &c : s)
    c = static_cast<char>(byte(rng));
  return s;
}

/// Not ok, and the diagnostic names the file and has a message.
void expectCleanFailure(const ImportResult &r, const std::string &file) {
  INFO(r.diag.str());
  REQUIRE_FALSE(r.ok);
  CHECK(r.diag.file == file);
  CHECK_FALSE(r.diag.message.empty());
  CHECK(r.diag.line >= 0);
  CHECK(r.diag.column >= 0);
}

std::string readModel(const std::string &name) {
  std::ifstream in(std::string(STRATA_SOURCE_DIR) + "/models/" + name,
                   std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

} // namespace

TEST_CASE("a file that does not exist", "[models][files]") {
  TempFile f("missing.yaml");
  ImportResult r = importModelFile(f.path());
  REQUIRE_FALSE(r.ok);
  CHECK(r.diag.line == 0);
  CHECK(r.diag.str() == f.path() +
                            ": error: cannot open model file: No such file "
                            "or directory");
}

TEST_CASE("a path that cannot be read as a file", "[models][files]") {
  SECTION("a directory") {
    TempFile f("x");
    fs::path dir = fs::path(f.path()).parent_path();
    ImportResult r = importModelFile(dir.string());
    REQUIRE_FALSE(r.ok);
    CHECK(r.diag.line == 0);
    CHECK(r.diag.message == "is a directory, not a model file");
  }
  SECTION("a FIFO, which would block a reader until a writer came") {
    TempFile f("x");
    fs::path fifo = fs::path(f.path()).parent_path() / "model-fifo.yaml";
    fs::remove(fifo);
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    ImportResult r = importModelFile(fifo.string());
    fs::remove(fifo);
    REQUIRE_FALSE(r.ok);
    CHECK_THAT(r.diag.message,
               Catch::Matchers::StartsWith("is not a regular file"));
  }
  SECTION("a compiled plan") {
    TempFile f("model.splan");
    f.write(std::string("STRATAPL") + std::string(24, '\0'));
    ImportResult r = importModelFile(f.path());
    REQUIRE_FALSE(r.ok);
    CHECK_THAT(r.diag.message,
               Catch::Matchers::StartsWith("is a compiled plan, not a model "
                                           "file; run it with 'strata-run"));
  }
  SECTION("no read permission") {
    if (::geteuid() == 0)
      return; // root reads everything; nothing to test
    TempFile f("secret.yaml");
    f.write(test::kBase);
    fs::permissions(f.path(), fs::perms::none);
    ImportResult r = importModelFile(f.path());
    REQUIRE_FALSE(r.ok);
    CHECK_THAT(r.diag.message,
               Catch::Matchers::Contains("cannot open model file: "
                                         "Permission denied"));
  }
}

TEST_CASE("an empty file", "[models][files]") {
  TempFile f("empty.yaml");
  f.write("");
  ImportResult r = importModelFile(f.path());
  REQUIRE_FALSE(r.ok);
  CHECK(r.diag.file == f.path());
  CHECK(r.diag.line == 1);
  CHECK(r.diag.column == 1);
  CHECK_THAT(r.diag.message, Catch::Matchers::Contains("model file is empty"));
}

TEST_CASE("binary garbage", "[models][files]") {
  std::mt19937 rng(1234);
  TempFile f("garbage.yaml");

  SECTION("NUL bytes are reported where they are") {
    f.write("format: strata-model/v1\nna\0me: x\n"s);
    ImportResult r = importModelFile(f.path());
    REQUIRE_FALSE(r.ok);
    CHECK(r.diag.line == 2);
    CHECK(r.diag.column == 3);
    CHECK_THAT(r.diag.message, Catch::Matchers::Contains("NUL byte"));
  }
  SECTION("invalid UTF-8") {
    f.write("format: strata-model/v1\nname: \xff\xfe\n");
    ImportResult r = importModelFile(f.path());
    REQUIRE_FALSE(r.ok);
    CHECK(r.diag.line == 2);
    CHECK(r.diag.column == 7);
    CHECK_THAT(r.diag.message, Catch::Matchers::Contains("invalid UTF-8"));
  }
  SECTION("random bytes including NULs") {
    for (int i = 0; i < 40; ++i) {
      f.write(randomBytes(rng, 1 + i * 37, 0, 255));
      expectCleanFailure(importModelFile(f.path()), f.path());
    }
  }
  SECTION("random printable text and YAML punctuation") {
    // Past the byte checks, into yaml-cpp's parser and the importer.
    const std::string alphabet = "ab:- \n\t[]{},#&*!|>'\"%@`?0123456789.";
    std::uniform_int_distribution<size_t> pick(0, alphabet.size() - 1);
    for (int i = 0; i < 500; ++i) {
      std::string text(1 + i % 97, ' ');
      for (char &c : text)
        c = alphabet[pick(rng)];
      ImportResult r = importModelString(text, "fuzz.yaml");
      INFO(text);
      expectCleanFailure(r, "fuzz.yaml");
    }
  }
}

TEST_CASE("deeply nested input does not exhaust the stack", "[models][files]") {
  std::string deep =
      "format: strata-model/v1\nname: " + std::string(100000, '[') + "\n";
  expectCleanFailure(importModelString(deep, "deep.yaml"), "deep.yaml");
}

TEST_CASE("truncated and mangled model files never crash", "[models][files]") {
  std::mt19937 rng(99);
  for (const char *name : {"tiny-llama.yaml", "tiny-minimax.yaml",
                           "tiny-gemma-sliding.yaml", "qwen3-0.6b.yaml"}) {
    std::string text = readModel(name);
    REQUIRE(!text.empty());
    // Every prefix: most fail (a required key is cut off), none may crash.
    for (size_t n = 0; n < text.size(); n += 3) {
      ImportResult r = importModelString(text.substr(0, n), name);
      if (!r.ok)
        expectCleanFailure(r, name);
    }
    std::uniform_int_distribution<size_t> at(0, text.size() - 1);
    std::uniform_int_distribution<int> byte(1, 127);
    for (int i = 0; i < 300; ++i) {
      std::string mangled = text;
      for (int k = 0; k < 3; ++k)
        mangled[at(rng)] = static_cast<char>(byte(rng));
      ImportResult r = importModelString(mangled, name);
      if (!r.ok)
        expectCleanFailure(r, name);
    }
  }
}
