#include "runtime/plan/PlanText.h"

#include <cstdio>
#include <sstream>

namespace strata::plan {

namespace {

std::string bufferList(const Program &p, const std::vector<int32_t> &ids) {
  std::string s;
  for (size_t k = 0; k < ids.size(); ++k)
    s += (k ? ", " : "") + p.buffers[ids[k]].name;
  return s;
}

void describeProgram(std::ostringstream &os, const Plan &plan,
                     const Program &p) {
  os << "\nprogram " << p.phase << ": " << p.launches.size() << " launches on "
     << p.numStreams << " stream" << (p.numStreams == 1 ? "" : "s") << ", "
     << p.events.size() << " event" << (p.events.size() == 1 ? "" : "s")
     << ", arena peak " << formatBytes(p.arenaBytes) << " at "
     << plan.limits.maxTokens << " tokens / " << plan.limits.maxBatch
     << " sequences\n";
  for (int32_t s = 0; s < p.numStreams; ++s) {
    os << "  stream " << s << ":\n";
    for (size_t i = 0; i < p.launches.size(); ++i) {
      const Launch &l = p.launches[i];
      if (l.stream != s)
        continue;
      for (const Event &e : p.events)
        if (e.to == static_cast<int32_t>(i))
          os << "    wait  event(" << e.from << " -> " << e.to << ")\n";
      os << "    #" << i << ' ' << launchName(l) << '('
         << bufferList(p, l.inputs) << ") -> (" << bufferList(p, l.outputs)
         << ')';
      if (std::string params = formatParams(l.params); !params.empty())
        os << " {" << params << '}';
      os << '\n';
      for (const Event &e : p.events)
        if (e.from == static_cast<int32_t>(i))
          os << "    record event(" << e.from << " -> " << e.to << ")\n";
    }
  }
  os << "  buffers:\n";
  for (const Buffer &b : p.buffers) {
    os << "    " << b.name << ": " << toString(b.kind) << ' '
       << toString(b.dtype) << formatShape(b.shape);
    if (b.kind == BufferKind::Arena)
      os << " @" << b.arenaOffset;
    if (b.viewOf >= 0)
      os << " (view of " << p.buffers[b.viewOf].name << ')';
    if (b.role != InputRole::None)
      os << " (" << toString(b.role) << ')';
    os << '\n';
  }
}

} // namespace

std::string formatBytes(uint64_t bytes) {
  char text[32];
  if (bytes >= (uint64_t(1) << 30))
    std::snprintf(text, sizeof(text), "%.2f GiB", bytes / double(1ull << 30));
  else if (bytes >= (uint64_t(1) << 20))
    std::snprintf(text, sizeof(text), "%.2f MiB", bytes / double(1ull << 20));
  else if (bytes >= 1024)
    std::snprintf(text, sizeof(text), "%.2f KiB", bytes / 1024.0);
  else
    std::snprintf(text, sizeof(text), "%llu B",
                  static_cast<unsigned long long>(bytes));
  return text;
}

uint64_t weightBytes(const Plan &plan) {
  uint64_t total = 0;
  for (const Weight &w : plan.weights) {
    uint64_t n = byteWidth(w.dtype);
    for (int64_t d : w.shape)
      n *= static_cast<uint64_t>(d);
    total += n;
  }
  return total;
}

std::string formatShape(const std::vector<Dim> &shape) {
  std::string s = "[";
  for (size_t k = 0; k < shape.size(); ++k) {
    if (k)
      s += ", ";
    s += shape[k].symbol == Symbol::Tokens  ? "tokens"
         : shape[k].symbol == Symbol::Batch ? "batch"
                                            : std::to_string(shape[k].value);
  }
  return s + "]";
}

std::string describePlan(const Plan &plan) {
  std::ostringstream os;
  os << "plan of model '" << plan.modelName << "' (format version "
     << kPlanFormatVersion << ")\n";
  os << "limits: " << plan.limits.maxTokens << " tokens, "
     << plan.limits.maxBatch << " sequences per step; vocab " << plan.vocabSize
     << ", positions up to " << plan.maxPositions << "\n";
  os << "fusions: " << describeFusions(plan) << "\n";
  if (plan.kvCache.layers > 0)
    os << "kv cache: " << plan.kvCache.layers << " layers x "
       << plan.kvCache.kvHeads << " kv heads x " << plan.kvCache.headDim
       << " head dim, blocks of " << plan.kvCache.blockSize << " tokens, "
       << toString(plan.kvCache.dtype) << "\n";
  if (plan.linearState.layers > 0)
    os << "linear state: " << plan.linearState.layers << " layers x "
       << plan.linearState.heads << " heads x " << plan.linearState.keyDim
       << " x " << plan.linearState.valueDim << " f32 per slot\n";
  os << "weights: " << plan.weights.size() << " tensors, "
     << formatBytes(weightBytes(plan));
  if (plan.checkpoint.empty())
    os << " (random: seed " << plan.weightSeed << ", std " << plan.weightInitStd
       << ")\n";
  else
    os << " (checkpoint " << plan.checkpoint << ")\n";
  const TokenizerFiles &tk = plan.tokenizer;
  if (tk.empty()) {
    os << "tokenizer: none (prompts as token ids)\n";
  } else {
    os << "tokenizer: embedded tokenizer.json, "
       << formatBytes(tk.tokenizerJson.size());
    if (!tk.tokenizerConfig.empty())
      os << ", tokenizer_config.json";
    if (!tk.generationConfig.empty())
      os << ", generation_config.json";
    if (tk.bosId >= 0)
      os << "; bos " << tk.bosId;
    if (!tk.eosIds.empty()) {
      os << "; eos";
      for (size_t i = 0; i < tk.eosIds.size(); ++i)
        os << (i ? "," : " ") << tk.eosIds[i];
    }
    os << "\n";
  }
  for (const Program &p : plan.programs)
    describeProgram(os, plan, p);
  return os.str();
}

} // namespace strata::plan
