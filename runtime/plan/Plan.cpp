#include "runtime/plan/Plan.h"

namespace strata::plan {

const char *toString(DType t) {
  switch (t) {
  case DType::F32:
    return "f32";
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  case DType::I32:
    return "i32";
  }
  return "?";
}

uint64_t byteWidth(DType t) {
  switch (t) {
  case DType::F16:
  case DType::BF16:
    return 2;
  case DType::F32:
  case DType::I32:
    return 4;
  }
  return 0;
}

const char *toString(BufferKind k) {
  switch (k) {
  case BufferKind::Arena:
    return "arena";
  case BufferKind::Weight:
    return "weight";
  case BufferKind::Input:
    return "input";
  case BufferKind::Output:
    return "output";
  case BufferKind::KvCache:
    return "kv_cache";
  case BufferKind::LinearState:
    return "linear_state";
  }
  return "?";
}

bool Buffer::operator==(const Buffer &o) const {
  return name == o.name && kind == o.kind && dtype == o.dtype &&
         shape == o.shape && arenaOffset == o.arenaOffset &&
         weight == o.weight && viewOf == o.viewOf;
}

bool Launch::operator==(const Launch &o) const {
  return kernel == o.kernel && variant == o.variant && attrs == o.attrs &&
         inputs == o.inputs && outputs == o.outputs && stream == o.stream;
}

bool Program::operator==(const Program &o) const {
  return phase == o.phase && numStreams == o.numStreams &&
         arenaBytes == o.arenaBytes && buffers == o.buffers &&
         launches == o.launches && events == o.events;
}

bool Plan::operator==(const Plan &o) const {
  return modelName == o.modelName && weightSeed == o.weightSeed &&
         weightInitStd == o.weightInitStd &&
         vocabSize == o.vocabSize && limits == o.limits &&
         kvCache == o.kvCache && linearState == o.linearState &&
         weights == o.weights && programs == o.programs;
}

int64_t numElements(const std::vector<Dim> &shape, int64_t tokens,
                    int64_t batch) {
  int64_t n = 1;
  for (const Dim &d : shape)
    n *= d.symbol == Symbol::Tokens  ? tokens
         : d.symbol == Symbol::Batch ? batch
                                     : d.value;
  return n;
}

int64_t numElements(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::vector<bool> weightsRead(const Plan &plan) {
  std::vector<bool> read(plan.weights.size(), false);
  for (const Program &p : plan.programs)
    for (const Launch &l : p.launches)
      for (int32_t b : l.inputs) {
        const Buffer &buf = p.buffers[size_t(b)];
        if (buf.kind == BufferKind::Weight && buf.weight >= 0 &&
            size_t(buf.weight) < read.size())
          read[size_t(buf.weight)] = true;
      }
  return read;
}

namespace {

std::string where(const Program &p, const std::string &what) {
  return "program '" + p.phase + "': " + what;
}

std::string validateProgram(const Plan &plan, const Program &p) {
  const int32_t numBuffers = static_cast<int32_t>(p.buffers.size());
  const int32_t numLaunches = static_cast<int32_t>(p.launches.size());
  if (p.numStreams < 1)
    return where(p, "stream count " + std::to_string(p.numStreams) +
                        " is not positive");
  for (int32_t i = 0; i < numBuffers; ++i) {
    const Buffer &b = p.buffers[i];
    if (b.viewOf != -1) {
      auto elems = [&](const Buffer &x) {
        return numElements(x.shape, plan.limits.maxTokens,
                           plan.limits.maxBatch);
      };
      if (b.kind != BufferKind::Arena || b.viewOf < 0 || b.viewOf >= i ||
          p.buffers[b.viewOf].kind != BufferKind::Arena ||
          p.buffers[b.viewOf].viewOf != -1)
        return where(p, "buffer '" + b.name + "' is a view of buffer " +
                            std::to_string(b.viewOf) +
                            ", which is not an earlier arena buffer of its "
                            "own");
      const Buffer &base = p.buffers[b.viewOf];
      if (base.dtype != b.dtype || elems(base) != elems(b) ||
          base.arenaOffset != b.arenaOffset)
        return where(p, "buffer '" + b.name + "' is a view of '" +
                            base.name +
                            "' with another dtype, size or offset");
    }
    for (const Dim &d : b.shape)
      if (d.symbol == Symbol::None && d.value < 0)
        return where(p, "buffer '" + b.name + "' has a negative dimension");
    if (b.kind == BufferKind::Weight &&
        (b.weight < 0 || b.weight >= static_cast<int32_t>(plan.weights.size())))
      return where(p, "buffer '" + b.name + "' names weight " +
                          std::to_string(b.weight) + " of " +
                          std::to_string(plan.weights.size()));
    if (b.kind == BufferKind::Arena) {
      uint64_t bytes =
          static_cast<uint64_t>(numElements(b.shape, plan.limits.maxTokens,
                                            plan.limits.maxBatch)) *
          byteWidth(b.dtype);
      if (b.arenaOffset + bytes > p.arenaBytes)
        return where(p, "buffer '" + b.name + "' ends at byte " +
                            std::to_string(b.arenaOffset + bytes) +
                            ", beyond the arena of " +
                            std::to_string(p.arenaBytes));
    }
  }
  for (int32_t i = 0; i < numLaunches; ++i) {
    const Launch &l = p.launches[i];
    if (l.stream < 0 || l.stream >= p.numStreams)
      return where(p, "launch " + std::to_string(i) + " (" + l.kernel +
                          ") is on stream " + std::to_string(l.stream) +
                          " of " + std::to_string(p.numStreams));
    for (const auto *list : {&l.inputs, &l.outputs})
      for (int32_t b : *list)
        if (b < 0 || b >= numBuffers)
          return where(p, "launch " + std::to_string(i) + " (" + l.kernel +
                              ") uses buffer " + std::to_string(b) + " of " +
                              std::to_string(numBuffers));
  }
  for (const Event &e : p.events) {
    if (e.from < 0 || e.to >= numLaunches || e.from >= e.to)
      return where(p, "event " + std::to_string(e.from) + " -> " +
                          std::to_string(e.to) +
                          " does not go forward in issue order");
    if (p.launches[e.from].stream == p.launches[e.to].stream)
      return where(p, "event " + std::to_string(e.from) + " -> " +
                          std::to_string(e.to) + " joins a stream to itself");
  }
  return "";
}

std::string validateWeight(const Weight &w) {
  for (int64_t d : w.shape)
    if (d <= 0)
      return "weight '" + w.name + "' has a non-positive dimension";
  if (w.packedRows.size() != w.packedFrom.size())
    return "weight '" + w.name + "' lists " +
           std::to_string(w.packedFrom.size()) + " packed sources but " +
           std::to_string(w.packedRows.size()) + " row counts";
  if (!w.packedFrom.empty()) {
    int64_t rows = 0;
    for (int64_t r : w.packedRows)
      rows += r;
    if (w.shape.empty() || rows != w.shape[0])
      return "weight '" + w.name + "' packs " + std::to_string(rows) +
             " rows into a first dimension of " +
             (w.shape.empty() ? std::string("none")
                              : std::to_string(w.shape[0]));
  }
  return "";
}

} // namespace

std::string validatePlan(const Plan &plan) {
  if (!(plan.weightInitStd > 0.0 && plan.weightInitStd < 1e6))
    return "weight init std must be a positive number, got " +
           std::to_string(plan.weightInitStd);
  if (plan.limits.maxTokens < 1 || plan.limits.maxBatch < 1 ||
      plan.limits.maxBatch > plan.limits.maxTokens)
    return "limits must satisfy 1 <= max batch <= max tokens, got max "
           "tokens " +
           std::to_string(plan.limits.maxTokens) + ", max batch " +
           std::to_string(plan.limits.maxBatch);
  for (const Weight &w : plan.weights)
    if (std::string error = validateWeight(w); !error.empty())
      return error;
  for (const Program &p : plan.programs)
    if (std::string error = validateProgram(plan, p); !error.empty())
      return error;
  return "";
}

} // namespace strata::plan
