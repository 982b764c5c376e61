// Model files (docs/model-format.md) through importModelString, the entry
// point behind `strata compile/run MODEL.yaml`. Besides crashes, hangs and
// huge allocations, it checks the importer's two promises: a rejected file
// gets a diagnostic that points into the file, and an accepted one gives a
// ModelSpec whose documented invariants hold (consumers never re-validate).
#include "models/ModelImporter.h"
#include "tests/fuzz/FuzzCheck.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

using namespace strata;

namespace {

bool positiveFinite(double v) { return v > 0 && std::isfinite(v); }

void checkSpec(const ModelSpec &spec) {
  FUZZ_CHECK(spec.formatVersion == 1, "format version");
  FUZZ_CHECK(spec.vocabSize > 0 && spec.hiddenSize > 0 &&
                 spec.maxPositionEmbeddings > 0,
             "sizes are positive");
  FUZZ_CHECK(positiveFinite(spec.normEps), "norm_eps");
  FUZZ_CHECK(!spec.layers.empty(), "at least one layer");
  FUZZ_CHECK(spec.mlp.intermediateSize > 0, "intermediate_size");
  for (const ResidualScale *r :
       {&spec.attentionResidual, &spec.linearResidual, &spec.mlpResidual})
    FUZZ_CHECK(std::isfinite(r->alpha) && std::isfinite(r->beta),
               "residual scales are finite");

  if (spec.hasSoftmaxLayers()) {
    const AttentionSpec &a = spec.attention;
    FUZZ_CHECK(a.numHeads > 0 && a.numKvHeads > 0 && a.headDim > 0,
               "attention sizes are positive");
    FUZZ_CHECK(a.numHeads % a.numKvHeads == 0, "kv heads divide heads");
    FUZZ_CHECK(positiveFinite(a.scale), "attention scale");
    const RopeSpec &r = spec.rope;
    FUZZ_CHECK(positiveFinite(r.theta), "rope theta");
    FUZZ_CHECK(r.rotaryDim > 0 && r.rotaryDim % 2 == 0 &&
                   r.rotaryDim <= a.headDim,
               "rotary_dim is even and within head_dim");
    if (r.scaling.type != RopeScalingType::None)
      FUZZ_CHECK(positiveFinite(r.scaling.factor), "rope scaling factor");
    if (r.scaling.type == RopeScalingType::Llama3)
      FUZZ_CHECK(r.scaling.highFreqFactor > r.scaling.lowFreqFactor &&
                     r.scaling.originalMaxPositionEmbeddings > 0,
                 "llama3 scaling parameters");
  }
  if (spec.hasLinearLayers()) {
    const LinearAttentionSpec &l = spec.linear;
    FUZZ_CHECK(l.numHeads > 0 && l.headDim > 0 && l.chunkSize > 0,
               "linear attention sizes are positive");
    FUZZ_CHECK(positiveFinite(l.normEps), "linear norm_eps");
  }
  for (const LayerSpec &layer : spec.layers) {
    bool sliding = layer.kind == LayerKind::SlidingAttention;
    FUZZ_CHECK(sliding ? layer.slidingWindow > 0 : layer.slidingWindow == 0,
               "a window exactly on sliding layers");
    if (layer.kind != LayerKind::LinearAttention) {
      FUZZ_CHECK(layer.decaySlopes.empty(), "slopes only on linear layers");
      continue;
    }
    FUZZ_CHECK(static_cast<int64_t>(layer.decaySlopes.size()) ==
                   spec.linear.numHeads,
               "one decay slope per linear head");
    for (double s : layer.decaySlopes)
      FUZZ_CHECK(positiveFinite(s), "decay slopes are positive");
  }
  if (spec.weights.source == WeightSource::Safetensors)
    FUZZ_CHECK(!spec.weights.path.empty(), "a safetensors path");
  else
    FUZZ_CHECK(positiveFinite(spec.weights.initStd), "init_std");
}

void checkDiagnostic(const Diagnostic &d, const std::string &name,
                     const std::string &text) {
  FUZZ_CHECK(d.file == name, "the diagnostic names the file");
  FUZZ_CHECK(!d.message.empty(), "the diagnostic says something");
  // YAML also ends lines at a lone CR; counting both bounds the line count.
  int64_t lines = 1 + std::count(text.begin(), text.end(), '\n') +
                  std::count(text.begin(), text.end(), '\r');
  FUZZ_CHECK(d.line >= 0 && d.line <= lines + 1,
             "the diagnostic's line is in the file");
  FUZZ_CHECK(d.line == 0 ? d.column == 0 : d.column >= 1,
             "the diagnostic's column");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  const std::string name = "models/fuzz.yaml";
  ImportResult r = importModelString(text, name);
  if (r.ok)
    checkSpec(r.spec);
  else
    checkDiagnostic(r.diag, name, text);
  return 0;
}
