#include "runtime/plan/PlanFile.h"

#include "runtime/plan/InputFile.h"

#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <type_traits>

namespace strata::plan {

namespace fs = std::filesystem;

namespace {

constexpr char kMagic[8] = {'S', 'T', 'R', 'A', 'T', 'A', 'P', 'L'};

// Every count in the payload is bounded by what the remaining bytes could
// hold, so a corrupt count fails cleanly instead of allocating gigabytes.
class Writer {
public:
  void u8(uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void u32(uint32_t v) { raw(&v, 4); }
  void u64(uint64_t v) { raw(&v, 8); }
  void i32(int32_t v) { raw(&v, 4); }
  void i64(int64_t v) { raw(&v, 8); }
  void f64(double v) { raw(&v, 8); }
  void str(const std::string &s) {
    u32(static_cast<uint32_t>(s.size()));
    out_.append(s);
  }
  void count(size_t n) { u32(static_cast<uint32_t>(n)); }
  std::string &bytes() { return out_; }

private:
  // The format is little-endian, as every platform strata runs on.
  void raw(const void *p, size_t n) {
    out_.append(static_cast<const char *>(p), n);
  }
  std::string out_;
};

class Reader {
public:
  Reader(const char *data, size_t size) : data_(data), size_(size) {}

  bool failed() const { return !error_.empty(); }
  const std::string &error() const { return error_; }

  uint8_t u8(const char *what) {
    uint8_t v = 0;
    raw(&v, 1, what);
    return v;
  }
  uint32_t u32(const char *what) {
    uint32_t v = 0;
    raw(&v, 4, what);
    return v;
  }
  uint64_t u64(const char *what) {
    uint64_t v = 0;
    raw(&v, 8, what);
    return v;
  }
  int32_t i32(const char *what) {
    int32_t v = 0;
    raw(&v, 4, what);
    return v;
  }
  int64_t i64(const char *what) {
    int64_t v = 0;
    raw(&v, 8, what);
    return v;
  }
  double f64(const char *what) {
    double v = 0;
    raw(&v, 8, what);
    return v;
  }
  std::string str(const char *what) {
    uint32_t n = count(what, 1);
    if (failed())
      return "";
    std::string s(data_ + pos_, n);
    pos_ += n;
    return s;
  }
  /// A count of items of at least `minItemBytes` each.
  uint32_t count(const char *what, size_t minItemBytes) {
    uint32_t n = u32(what);
    if (!failed() && static_cast<uint64_t>(n) * minItemBytes > size_ - pos_)
      fail(std::string("count of ") + what + " (" + std::to_string(n) +
           ") exceeds the remaining payload");
    return failed() ? 0 : n;
  }
  template <typename E> E enumValue(const char *what, uint8_t max) {
    uint8_t v = u8(what);
    if (!failed() && v > max)
      fail(std::string("invalid ") + what + " code " + std::to_string(v));
    return static_cast<E>(v);
  }
  bool atEnd() const { return pos_ == size_; }
  size_t position() const { return pos_; }
  void fail(const std::string &message) {
    if (error_.empty())
      error_ = message + " (payload byte " + std::to_string(pos_) + ")";
  }

private:
  void raw(void *p, size_t n, const char *what) {
    if (failed())
      return;
    if (size_ - pos_ < n) {
      fail(std::string("payload ends inside ") + what);
      return;
    }
    std::memcpy(p, data_ + pos_, n);
    pos_ += n;
  }
  const char *data_;
  size_t size_;
  size_t pos_ = 0;
  std::string error_;
};

void writeDims(Writer &w, const std::vector<Dim> &dims) {
  w.count(dims.size());
  for (const Dim &d : dims) {
    w.u8(static_cast<uint8_t>(d.symbol));
    w.i64(d.value);
  }
}

std::vector<Dim> readDims(Reader &r) {
  std::vector<Dim> dims(r.count("dimensions", 9));
  for (Dim &d : dims) {
    d.symbol = r.enumValue<Symbol>("dimension symbol", 2);
    d.value = r.i64("dimension");
  }
  return dims;
}

/// The fields of a launch's parameter struct, in their declared order
/// (KernelParams.h): integers and numbers as 8 bytes, flags and enums as
/// one, lists of numbers as a count and the numbers.
void writeParams(Writer &w, const KernelParams &params) {
  w.u8(static_cast<uint8_t>(params.index()));
  forEachField(params, [&](const char *, const auto &v) {
    using T = std::decay_t<decltype(v)>;
    if constexpr (std::is_same_v<T, int64_t>) {
      w.i64(v);
    } else if constexpr (std::is_same_v<T, double>) {
      w.f64(v);
    } else if constexpr (std::is_same_v<T, bool>) {
      w.u8(v ? 1 : 0);
    } else if constexpr (std::is_enum_v<T>) {
      w.u8(static_cast<uint8_t>(v));
    } else {
      static_assert(std::is_same_v<T, std::vector<double>>);
      w.count(v.size());
      for (double x : v)
        w.f64(x);
    }
  });
}

KernelParams readParams(Reader &r) {
  const uint8_t code = r.u8("kernel");
  if (r.failed())
    return {};
  if (code >= kNumKernels) {
    r.fail("invalid kernel code " + std::to_string(code));
    return {};
  }
  KernelParams params = paramsOf(static_cast<Kernel>(code));
  const std::string kernel = kernelName(static_cast<Kernel>(code));
  forEachField(params, [&](const char *name, auto &v) {
    using T = std::decay_t<decltype(v)>;
    const std::string what = kernel + " " + name;
    if constexpr (std::is_same_v<T, int64_t>) {
      v = r.i64(what.c_str());
    } else if constexpr (std::is_same_v<T, double>) {
      v = r.f64(what.c_str());
    } else if constexpr (std::is_same_v<T, bool>) {
      v = r.enumValue<uint8_t>(what.c_str(), 1) != 0;
    } else if constexpr (std::is_enum_v<T>) {
      v = r.enumValue<T>(what.c_str(), maxCode<T>());
    } else {
      static_assert(std::is_same_v<T, std::vector<double>>);
      v.resize(r.count(what.c_str(), 8));
      for (double &x : v)
        x = r.f64(what.c_str());
    }
  });
  return params;
}

void writeIndices(Writer &w, const std::vector<int32_t> &v) {
  w.count(v.size());
  for (int32_t x : v)
    w.i32(x);
}

std::vector<int32_t> readIndices(Reader &r, const char *what) {
  std::vector<int32_t> v(r.count(what, 4));
  for (int32_t &x : v)
    x = r.i32(what);
  return v;
}

void writeProgram(Writer &w, const Program &p) {
  w.str(p.phase);
  w.i32(p.numStreams);
  w.u64(p.arenaBytes);
  w.count(p.buffers.size());
  for (const Buffer &b : p.buffers) {
    w.str(b.name);
    w.u8(static_cast<uint8_t>(b.kind));
    w.u8(static_cast<uint8_t>(b.dtype));
    writeDims(w, b.shape);
    w.u64(b.arenaOffset);
    w.i32(b.weight);
    w.i32(b.viewOf);
    w.u8(static_cast<uint8_t>(b.role));
  }
  w.count(p.launches.size());
  for (const Launch &l : p.launches) {
    writeParams(w, l.params);
    writeIndices(w, l.inputs);
    writeIndices(w, l.outputs);
    w.i32(l.stream);
  }
  w.count(p.events.size());
  for (const Event &e : p.events) {
    w.i32(e.from);
    w.i32(e.to);
  }
}

Program readProgram(Reader &r) {
  Program p;
  p.phase = r.str("phase name");
  p.numStreams = r.i32("stream count");
  p.arenaBytes = r.u64("arena size");
  p.buffers.resize(r.count("buffers", 27));
  for (Buffer &b : p.buffers) {
    b.name = r.str("buffer name");
    b.kind = r.enumValue<BufferKind>("buffer kind", 5);
    b.dtype = r.enumValue<DType>("dtype", 3);
    b.shape = readDims(r);
    b.arenaOffset = r.u64("arena offset");
    b.weight = r.i32("weight index");
    b.viewOf = r.i32("view base");
    b.role = r.enumValue<InputRole>("input role", 4);
  }
  p.launches.resize(r.count("launches", 13));
  for (Launch &l : p.launches) {
    l.params = readParams(r);
    l.inputs = readIndices(r, "launch inputs");
    l.outputs = readIndices(r, "launch outputs");
    l.stream = r.i32("launch stream");
  }
  p.events.resize(r.count("events", 8));
  for (Event &e : p.events) {
    e.from = r.i32("event source");
    e.to = r.i32("event target");
  }
  return p;
}

void putU32(char *p, uint32_t v) { std::memcpy(p, &v, 4); }
void putU64(char *p, uint64_t v) { std::memcpy(p, &v, 8); }
uint32_t getU32(const char *p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
uint64_t getU64(const char *p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

} // namespace

uint32_t crc32(const void *data, size_t size) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k)
        c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  uint32_t c = 0xFFFFFFFFu;
  const auto *p = static_cast<const unsigned char *>(data);
  for (size_t i = 0; i < size; ++i)
    c = table[(c ^ p[i]) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

std::string serializeParams(const KernelParams &params) {
  Writer w;
  writeParams(w, params);
  return w.bytes();
}

bool deserializeParams(const std::string &bytes, KernelParams &params,
                       std::string &error) {
  Reader r(bytes.data(), bytes.size());
  KernelParams decoded = readParams(r);
  if (!r.failed() && !r.atEnd())
    r.fail("parameters have trailing bytes");
  if (r.failed()) {
    error = r.error();
    return false;
  }
  params = std::move(decoded);
  return true;
}

std::string serializePlan(const Plan &plan) {
  Writer w;
  w.str(plan.modelName);
  w.u64(plan.weightSeed);
  w.f64(plan.weightInitStd);
  w.str(plan.checkpoint);
  w.i64(plan.vocabSize);
  w.i64(plan.maxPositions);
  w.i64(plan.limits.maxTokens);
  w.i64(plan.limits.maxBatch);
  const KvCacheDesc &kv = plan.kvCache;
  w.i64(kv.layers);
  w.i64(kv.kvHeads);
  w.i64(kv.headDim);
  w.i64(kv.blockSize);
  w.u8(static_cast<uint8_t>(kv.dtype));
  const LinearStateDesc &ls = plan.linearState;
  w.i64(ls.layers);
  w.i64(ls.heads);
  w.i64(ls.keyDim);
  w.i64(ls.valueDim);
  w.count(plan.weights.size());
  for (const Weight &wt : plan.weights) {
    w.str(wt.name);
    w.u8(static_cast<uint8_t>(wt.dtype));
    w.count(wt.shape.size());
    for (int64_t d : wt.shape)
      w.i64(d);
    w.count(wt.packedFrom.size());
    for (const std::string &s : wt.packedFrom)
      w.str(s);
    w.count(wt.packedRows.size());
    for (int64_t r : wt.packedRows)
      w.i64(r);
  }
  w.count(plan.programs.size());
  for (const Program &p : plan.programs)
    writeProgram(w, p);
  const TokenizerFiles &tk = plan.tokenizer;
  w.str(tk.tokenizerJson);
  w.str(tk.tokenizerConfig);
  w.str(tk.generationConfig);
  w.i32(tk.bosId);
  writeIndices(w, tk.eosIds);
  w.count(plan.fusions.size());
  for (const FusionPass &f : plan.fusions) {
    w.str(f.name);
    w.u8(f.enabled ? 1 : 0);
  }

  const std::string &payload = w.bytes();
  std::string file(kPlanHeaderBytes, '\0');
  std::memcpy(&file[0], kMagic, 8);
  putU32(&file[8], kPlanFormatVersion);
  putU64(&file[16], payload.size());
  putU32(&file[24], crc32(payload.data(), payload.size()));
  return file + payload;
}

bool deserializePlan(const std::string &bytes, const std::string &name,
                     Plan &plan, std::string &error) {
  auto fail = [&](const std::string &message) {
    error = name + ": error: " + message;
    return false;
  };
  if (bytes.size() < 8 || std::memcmp(bytes.data(), kMagic, 8) != 0)
    return fail("not a strata plan (missing the STRATAPL signature)");
  if (bytes.size() < kPlanHeaderBytes)
    return fail("plan is truncated: " + std::to_string(bytes.size()) +
                " bytes, shorter than the " + std::to_string(kPlanHeaderBytes) +
                "-byte header");
  uint32_t version = getU32(&bytes[8]);
  if (version != kPlanFormatVersion)
    return fail("plan format version " + std::to_string(version) +
                " is not supported; this build reads version " +
                std::to_string(kPlanFormatVersion) +
                " (recompile the model with this strata)");
  if (getU32(&bytes[12]) != 0 || getU32(&bytes[28]) != 0)
    return fail("plan header is damaged: its reserved bytes are not zero");
  uint64_t payloadBytes = getU64(&bytes[16]);
  uint64_t actual = bytes.size() - kPlanHeaderBytes;
  if (actual < payloadBytes)
    return fail("plan is truncated: header says " +
                std::to_string(payloadBytes) + " payload bytes, file has " +
                std::to_string(actual));
  if (actual > payloadBytes)
    return fail("plan has " + std::to_string(actual - payloadBytes) +
                " unexpected bytes after its payload");
  const char *payload = bytes.data() + kPlanHeaderBytes;
  if (crc32(payload, payloadBytes) != getU32(&bytes[24]))
    return fail("plan is corrupt: payload checksum mismatch");

  Reader r(payload, payloadBytes);
  Plan p;
  p.modelName = r.str("model name");
  p.weightSeed = r.u64("weight seed");
  p.weightInitStd = r.f64("weight init std");
  p.checkpoint = r.str("checkpoint path");
  p.vocabSize = r.i64("vocab size");
  p.maxPositions = r.i64("max positions");
  p.limits.maxTokens = r.i64("max tokens");
  p.limits.maxBatch = r.i64("max batch");
  p.kvCache.layers = r.i64("KV cache layers");
  p.kvCache.kvHeads = r.i64("KV heads");
  p.kvCache.headDim = r.i64("KV head dim");
  p.kvCache.blockSize = r.i64("KV block size");
  p.kvCache.dtype = r.enumValue<DType>("KV dtype", 3);
  p.linearState.layers = r.i64("linear state layers");
  p.linearState.heads = r.i64("linear state heads");
  p.linearState.keyDim = r.i64("linear state key dim");
  p.linearState.valueDim = r.i64("linear state value dim");
  p.weights.resize(r.count("weights", 17));
  for (Weight &wt : p.weights) {
    wt.name = r.str("weight name");
    wt.dtype = r.enumValue<DType>("weight dtype", 3);
    wt.shape.resize(r.count("weight dimensions", 8));
    for (int64_t &d : wt.shape)
      d = r.i64("weight dimension");
    wt.packedFrom.resize(r.count("packed sources", 4));
    for (std::string &s : wt.packedFrom)
      s = r.str("packed source");
    wt.packedRows.resize(r.count("packed rows", 8));
    for (int64_t &rows : wt.packedRows)
      rows = r.i64("packed rows");
  }
  p.programs.resize(r.count("programs", 24));
  for (Program &prog : p.programs)
    prog = readProgram(r);
  p.tokenizer.tokenizerJson = r.str("tokenizer.json");
  p.tokenizer.tokenizerConfig = r.str("tokenizer_config.json");
  p.tokenizer.generationConfig = r.str("generation_config.json");
  p.tokenizer.bosId = r.i32("BOS id");
  p.tokenizer.eosIds = readIndices(r, "EOS ids");
  p.fusions.resize(r.count("fusion passes", 5));
  for (FusionPass &f : p.fusions) {
    f.name = r.str("fusion pass name");
    f.enabled = r.enumValue<uint8_t>("fusion pass flag", 1) != 0;
  }
  if (!r.failed() && !r.atEnd())
    r.fail("payload has trailing bytes");
  if (r.failed())
    return fail("plan is malformed: " + r.error());
  if (std::string invalid = validatePlan(p); !invalid.empty())
    return fail("plan is invalid: " + invalid);
  plan = std::move(p);
  return true;
}

bool writePlanFile(const Plan &plan, const std::string &path,
                   std::string &error) {
  // The checkpoint is stored relative to the plan's folder, so that a plan
  // and its checkpoint move together; a path on another root stays
  // absolute.
  Plan stored = plan;
  if (!plan.checkpoint.empty()) {
    std::error_code ec;
    fs::path ckpt = fs::absolute(plan.checkpoint, ec);
    fs::path dir = fs::absolute(fs::path(path), ec).parent_path();
    fs::path rel = ec ? fs::path() : ckpt.lexically_relative(dir);
    stored.checkpoint = rel.empty() ? ckpt.string() : rel.string();
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  std::string bytes = serializePlan(stored);
  if (!out || !out.write(bytes.data(), bytes.size()) || !out.flush()) {
    error =
        path + ": error: cannot write the plan file: " + std::strerror(errno);
    return false;
  }
  return true;
}

bool readPlanFile(const std::string &path, Plan &plan, std::string &error) {
  std::string bytes;
  // Plans hold no weights; the largest real one is a few megabytes.
  constexpr uint64_t kMaxPlanBytes = uint64_t(1) << 30;
  if (!readRegularFile(path, "plan file", kMaxPlanBytes, bytes, error))
    return false;
  const std::string ext = fs::path(path).extension().string();
  if ((ext == ".yaml" || ext == ".yml") &&
      (bytes.size() < 8 || std::memcmp(bytes.data(), kMagic, 8) != 0)) {
    error = path +
            ": error: is a model file, not a plan; compile it with "
            "'strata compile " +
            path + " -o MODEL.splan' or run it with 'strata run'";
    return false;
  }
  if (!deserializePlan(bytes, path, plan, error))
    return false;
  if (!plan.checkpoint.empty() && fs::path(plan.checkpoint).is_relative())
    plan.checkpoint =
        (fs::path(path).parent_path() / plan.checkpoint).lexically_normal();
  return true;
}

bool hasPlanSignature(const std::string &path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec))
    return false;
  std::ifstream in(path, std::ios::binary);
  char head[8] = {};
  return in.read(head, 8) && std::memcmp(head, kMagic, 8) == 0;
}

} // namespace strata::plan
