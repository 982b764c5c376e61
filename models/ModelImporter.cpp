// The public, non-throwing entry points of the importer: reading the file,
// rejecting what is not YAML text before yaml-cpp sees it, parsing, and
// turning every exception into the one Diagnostic of the result.
#include "models/ModelImporter.h"

#include "models/SpecReader.h"
#include "models/YamlReader.h"

#include <yaml-cpp/depthguard.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace strata {

using detail::ImportError;
using detail::YamlContext;

std::string Diagnostic::str() const {
  std::ostringstream os;
  os << file;
  if (line > 0)
    os << ":" << line << ":" << column;
  os << ": error: " << message;
  return os.str();
}

namespace {

/// Model files are a few kilobytes; anything this large is another kind of
/// file given by mistake (a checkpoint), and reading it whole would be slow.
constexpr size_t kMaxModelFileBytes = 16u << 20;

ImportResult failure(Diagnostic diag) {
  ImportResult r;
  r.ok = false;
  r.diag = std::move(diag);
  return r;
}

ImportResult failure(const std::string &file, int line, int column,
                     const std::string &message) {
  Diagnostic d;
  d.file = file;
  d.line = line;
  d.column = column;
  d.message = message;
  return failure(std::move(d));
}

/// Length of the UTF-8 sequence starting at `p` (at most `n` bytes
/// available), or 0 when it is not well-formed.
size_t utf8SequenceLength(const unsigned char *p, size_t n) {
  unsigned char c = p[0];
  size_t len;
  uint32_t min;
  if (c < 0x80)
    return 1;
  if ((c & 0xE0) == 0xC0) {
    len = 2;
    min = 0x80;
  } else if ((c & 0xF0) == 0xE0) {
    len = 3;
    min = 0x800;
  } else if ((c & 0xF8) == 0xF0) {
    len = 4;
    min = 0x10000;
  } else {
    return 0;
  }
  if (len > n)
    return 0;
  uint32_t cp = c & (0x7F >> len);
  for (size_t i = 1; i < len; ++i) {
    if ((p[i] & 0xC0) != 0x80)
      return 0;
    cp = (cp << 6) | (p[i] & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
    return 0;
  return len;
}

/// yaml-cpp guesses UTF-16/32 from NUL bytes and silently drops what it
/// cannot decode, so binary input could come out as an empty document.
/// Reject it here, at the first offending byte.
void checkText(const std::string &text, const YamlContext &ctx) {
  const auto *bytes = reinterpret_cast<const unsigned char *>(text.data());
  int line = 0, column = 0;
  for (size_t i = 0; i < text.size();) {
    YAML::Mark mark;
    mark.line = line;
    mark.column = column;
    if (bytes[i] == 0)
      ctx.fail(mark, "unexpected NUL byte; a model file is UTF-8 YAML text");
    size_t len = utf8SequenceLength(bytes + i, text.size() - i);
    if (len == 0)
      ctx.fail(mark, "invalid UTF-8 byte sequence; a model file is UTF-8 "
                     "YAML text");
    if (bytes[i] == '\n') {
      ++line;
      column = 0;
    } else {
      ++column;
    }
    i += len;
  }
}

/// A model file is one YAML document. Document markers ("---", "...") are
/// only recognised at the start of a line and never occur inside a scalar
/// there, so a line scan finds a second document without parsing it.
void checkSingleDocument(const std::string &text, const YamlContext &ctx) {
  std::istringstream in(text);
  std::string line;
  bool seenContent = false, ended = false;
  for (int lineNo = 0; std::getline(in, line); ++lineNo) {
    auto isMarker = [&](const char *m) {
      return line.compare(0, 3, m) == 0 &&
             (line.size() == 3 || line[3] == ' ' || line[3] == '\t' ||
              line[3] == '\r');
    };
    size_t first = line.find_first_not_of(" \t\r");
    bool blank = first == std::string::npos || line[first] == '#';
    YAML::Mark mark;
    mark.line = lineNo;
    if (isMarker("---")) {
      if (seenContent || ended)
        ctx.fail(mark, "a model file holds one YAML document; found a "
                       "second one here");
      size_t rest = line.find_first_not_of(" \t\r", 3);
      seenContent = rest != std::string::npos && line[rest] != '#';
    } else if (isMarker("...")) {
      ended = true;
    } else if (!blank && line[0] != '%') {
      if (ended)
        ctx.fail(mark, "a model file holds one YAML document; found a "
                       "second one here");
      seenContent = true;
    }
  }
}

bool isBlank(const std::string &text) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    size_t first = line.find_first_not_of(" \t\r");
    if (first != std::string::npos && line[first] != '#')
      return false;
  }
  return true;
}

ModelSpec parse(const std::string &text, const std::string &displayName,
                const YamlContext &ctx) {
  if (text.size() > kMaxModelFileBytes)
    ctx.fail(YAML::Mark::null_mark(),
             "model file is " + std::to_string(text.size()) +
                 " bytes; expected a YAML model description of at most " +
                 std::to_string(kMaxModelFileBytes) + " bytes");
  checkText(text, ctx);
  if (isBlank(text))
    ctx.fail(YAML::Mark(), "model file is empty; expected a mapping starting "
                           "with 'format: " +
                               std::string(detail::kFormatV1) + "'");
  checkSingleDocument(text, ctx);
  // YAML::Load, not LoadAll: LoadAll can loop forever on malformed input
  // after the first document (yaml-cpp 0.7), which checkSingleDocument has
  // already ruled out anyway.
  YAML::Node root = YAML::Load(text);
  return detail::readModelSpec(ctx, root, displayName);
}

} // namespace

ImportResult importModelString(const std::string &text,
                               const std::string &displayName) {
  YamlContext ctx(displayName);
  try {
    ImportResult r;
    r.spec = parse(text, displayName, ctx);
    r.ok = true;
    return r;
  } catch (const ImportError &e) {
    return failure(e.diag);
  } catch (const YAML::DeepRecursion &e) {
    // yaml-cpp's own message for this is "bad file".
    return failure(displayName, e.mark.line + 1, e.mark.column + 1,
                   "invalid YAML: nesting reaches " +
                       std::to_string(e.depth()) +
                       " levels, more than the reader follows; a model file "
                       "nests a few levels");
  } catch (const YAML::Exception &e) {
    // Syntax errors (ParserException) carry yaml-cpp's 0-based position;
    // its message without the position prefix.
    if (e.mark.is_null())
      return failure(displayName, 0, 0, "invalid YAML: " + e.msg);
    return failure(displayName, e.mark.line + 1, e.mark.column + 1,
                   "invalid YAML: " + e.msg);
  } catch (const std::exception &e) {
    return failure(displayName, 0, 0,
                   std::string("cannot import model: ") + e.what());
  } catch (...) {
    return failure(displayName, 0, 0, "cannot import model: unknown error");
  }
}

ImportResult importModelFile(const std::string &path) {
  try {
    std::error_code ec;
    // Opening a FIFO would block until a writer appears; only regular
    // files are read.
    std::filesystem::file_status status = std::filesystem::status(path, ec);
    if (std::filesystem::is_directory(status))
      return failure(path, 0, 0, "is a directory, not a model file");
    if (std::filesystem::exists(status) &&
        !std::filesystem::is_regular_file(status))
      return failure(path, 0, 0,
                     "is not a regular file (a FIFO, socket or device); give "
                     "a model file");
    std::ifstream in(path, std::ios::binary);
    if (!in)
      return failure(path, 0, 0,
                     std::string("cannot open model file: ") +
                         std::strerror(errno));
    std::uintmax_t size = std::filesystem::file_size(path, ec);
    if (!ec && size > kMaxModelFileBytes)
      return failure(path, 0, 0,
                     "model file is " + std::to_string(size) +
                         " bytes; expected a YAML model description of at "
                         "most " +
                         std::to_string(kMaxModelFileBytes) + " bytes");
    std::ostringstream buffer;
    buffer << in.rdbuf();
    if (in.bad())
      return failure(path, 0, 0,
                     std::string("cannot read model file: ") +
                         std::strerror(errno));
    // A compiled plan given where a model is expected: say what to do with
    // it rather than reporting its first binary byte.
    if (buffer.str().compare(0, 8, "STRATAPL") == 0)
      return failure(path, 0, 0,
                     "is a compiled plan, not a model file; run it with "
                     "'strata-run " +
                         path + "' or print it with 'strata inspect " + path +
                         "'");
    return importModelString(buffer.str(), path);
  } catch (const std::exception &e) {
    return failure(path, 0, 0,
                   std::string("cannot read model file: ") + e.what());
  } catch (...) {
    return failure(path, 0, 0, "cannot read model file: unknown error");
  }
}

} // namespace strata
