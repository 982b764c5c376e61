// Every model file in models/ imports, and the values the importer derives
// (head_dim, rotary_dim, scale, decay slopes, layer kinds) are the ones the
// format specifies.
#include "TestUtil.h"

#include "models/DecaySlopes.h"

#include <cmath>
#include <filesystem>
#include <map>

using namespace strata;
namespace fs = std::filesystem;

namespace {

std::string modelPath(const std::string &name) {
  return std::string(STRATA_SOURCE_DIR) + "/models/" + name;
}

ModelSpec load(const std::string &name) {
  ImportResult r = importModelFile(modelPath(name));
  INFO(r.diag.str());
  REQUIRE(r.ok);
  return r.spec;
}

} // namespace

TEST_CASE("every model file in models/ imports", "[models]") {
  std::vector<fs::path> files;
  for (const auto &entry :
       fs::directory_iterator(fs::path(STRATA_SOURCE_DIR) / "models"))
    if (entry.path().extension() == ".yaml")
      files.push_back(entry.path());
  // The models the project promises; a missing one is a failure too.
  CHECK(files.size() >= 10);
  for (const fs::path &file : files) {
    INFO(file.string());
    ImportResult r = importModelFile(file.string());
    INFO(r.diag.str());
    REQUIRE(r.ok);
    CHECK(r.spec.name == file.stem().string());
    CHECK(r.spec.loc.file == file.string());
    CHECK(r.spec.loc.line >= 1);
    CHECK(r.spec.numLayers() > 0);
    if (r.spec.hasSoftmaxLayers()) {
      CHECK(r.spec.rope.rotaryDim % 2 == 0);
      CHECK(r.spec.rope.rotaryDim <= r.spec.attention.headDim);
      CHECK(r.spec.attention.numHeads % r.spec.attention.numKvHeads == 0);
    }
    for (const LayerSpec &l : r.spec.layers) {
      CHECK((l.kind == LayerKind::SlidingAttention) == (l.slidingWindow > 0));
      CHECK((l.kind == LayerKind::LinearAttention) == !l.decaySlopes.empty());
    }
  }
}

TEST_CASE("tiny-llama: GQA, llama3 scaling, tied embeddings", "[models]") {
  ModelSpec s = load("tiny-llama.yaml");
  CHECK(s.dtype == DType::BF16);
  CHECK(s.vocabSize == 512);
  CHECK(s.hiddenSize == 256);
  CHECK(s.numLayers() == 4);
  CHECK(s.attention.numHeads == 8);
  CHECK(s.attention.numKvHeads == 2);
  CHECK(s.attention.headDim == 64);
  CHECK(s.attention.scale == Approx(1.0 / std::sqrt(64.0)));
  CHECK(s.rope.rotaryDim == 64);
  CHECK(s.rope.pairing == RopePairing::Neox);
  CHECK(s.rope.theta == 500000.0);
  CHECK(s.rope.scaling.type == RopeScalingType::Llama3);
  CHECK(s.rope.scaling.factor == 8.0);
  CHECK(s.rope.scaling.lowFreqFactor == 1.0);
  CHECK(s.rope.scaling.highFreqFactor == 4.0);
  CHECK(s.rope.scaling.originalMaxPositionEmbeddings == 256);
  CHECK(s.tieWordEmbeddings);
  CHECK(s.mlp.intermediateSize == 688);
  CHECK(s.weights.source == WeightSource::Random);
  CHECK(s.weights.seed == 42);
  for (const LayerSpec &l : s.layers)
    CHECK(l.kind == LayerKind::FullAttention);
  CHECK_FALSE(s.hasLinearLayers());
}

TEST_CASE("llama-3.2-1b and llama-3-8b: published shapes", "[models]") {
  ModelSpec a = load("llama-3.2-1b.yaml");
  CHECK(a.vocabSize == 128256);
  CHECK(a.attention.headDim == 64);
  CHECK(a.rope.scaling.type == RopeScalingType::Llama3);
  CHECK(a.rope.scaling.factor == 32.0);
  CHECK(a.rope.scaling.originalMaxPositionEmbeddings == 8192);
  CHECK(a.tieWordEmbeddings);

  ModelSpec b = load("llama-3-8b.yaml");
  // Derived: 4096 / 32.
  CHECK(b.attention.headDim == 128);
  CHECK(b.rope.rotaryDim == 128);
  CHECK(b.rope.scaling.type == RopeScalingType::None);
  CHECK_FALSE(b.tieWordEmbeddings);
  CHECK(b.mlp.intermediateSize == 14336);
  CHECK(b.numLayers() == 32);
}

TEST_CASE("qwen3: explicit head_dim and QK-norm", "[models]") {
  ModelSpec s = load("qwen3-0.6b.yaml");
  CHECK(s.attention.headDim == 128); // not 1024 / 16
  CHECK(s.attention.scale == Approx(1.0 / std::sqrt(128.0)));
  CHECK(s.attention.qkNorm);
  CHECK(s.normEps == 1e-6);
  CHECK(s.rope.theta == 1e6);
  CHECK(s.numLayers() == 28);
  CHECK(s.tieWordEmbeddings);

  ModelSpec t = load("tiny-qwen3.yaml");
  CHECK(t.attention.headDim != t.hiddenSize / t.attention.numHeads);
  CHECK(t.attention.qkNorm);
}

TEST_CASE("sliding-window models: every layer and 5:1 pattern", "[models]") {
  ModelSpec m = load("mistral-7b.yaml");
  REQUIRE(m.numLayers() == 32);
  for (const LayerSpec &l : m.layers) {
    CHECK(l.kind == LayerKind::SlidingAttention);
    CHECK(l.slidingWindow == 4096);
  }
  ModelSpec t = load("tiny-mistral.yaml");
  for (const LayerSpec &l : t.layers)
    CHECK(l.slidingWindow == 16);

  ModelSpec g = load("tiny-gemma-sliding.yaml");
  REQUIRE(g.numLayers() == 12);
  for (int64_t i = 0; i < g.numLayers(); ++i) {
    INFO("layer " << i);
    bool full = i % 6 == 5;
    CHECK(g.layers[i].kind ==
          (full ? LayerKind::FullAttention : LayerKind::SlidingAttention));
    CHECK(g.layers[i].slidingWindow == (full ? 0 : 16));
  }
}

TEST_CASE("minimax hybrids: layer kinds and decay slopes", "[models]") {
  ModelSpec t = load("tiny-minimax.yaml");
  REQUIRE(t.numLayers() == 4);
  CHECK(t.rope.rotaryDim == 32);
  CHECK(t.attention.headDim == 64);
  for (int64_t l = 0; l < 4; ++l) {
    INFO("layer " << l);
    if (l == 3) {
      CHECK(t.layers[l].kind == LayerKind::FullAttention);
      CHECK(t.layers[l].decaySlopes.empty());
      continue;
    }
    REQUIRE(t.layers[l].kind == LayerKind::LinearAttention);
    REQUIRE(t.layers[l].decaySlopes.size() == 8);
    // slope(h, l) = 2^(-8(h+1)/H) * (1 - l/(L-1) + 1e-5), H = 8, L = 4.
    for (int h = 0; h < 8; ++h)
      CHECK(t.layers[l].decaySlopes[h] ==
            Approx(std::pow(2.0, -8.0 * (h + 1) / 8.0) * (1.0 - l / 3.0 + 1e-5))
                .epsilon(1e-12));
  }
  CHECK(t.linear.chunkSize == 64);
  CHECK(t.linear.qkvSilu);

  ModelSpec m = load("minimax-hybrid.yaml");
  REQUIRE(m.numLayers() == 80);
  CHECK(m.hiddenSize == 6144);
  CHECK(m.vocabSize == 200064);
  CHECK(m.attention.numHeads == 64);
  CHECK(m.attention.numKvHeads == 8);
  CHECK(m.attention.headDim == 128);
  CHECK(m.rope.rotaryDim == 64);
  CHECK(m.rope.theta == 1e7);
  CHECK(m.linear.numHeads == 64);
  CHECK(m.linear.headDim == 128);
  for (int64_t l = 0; l < 80; ++l) {
    INFO("layer " << l);
    bool softmax = l % 8 == 7;
    CHECK(m.layers[l].kind ==
          (softmax ? LayerKind::FullAttention : LayerKind::LinearAttention));
  }
  // The last linear layer (78): factor 1 - 78/79 + 1e-5.
  REQUIRE(m.layers[78].decaySlopes.size() == 64);
  CHECK(m.layers[78].decaySlopes[0] ==
        Approx(std::pow(2.0, -8.0 / 64.0) * (1.0 - 78.0 / 79.0 + 1e-5))
            .epsilon(1e-12));
  CHECK(m.layers[0].decaySlopes[63] ==
        Approx(std::pow(2.0, -8.0) * (1.0 + 1e-5)).epsilon(1e-12));
}

TEST_CASE("ALiBi slopes for head counts that are not powers of two",
          "[models]") {
  // The ALiBi reference: the 8 slopes of H = 8, then every other slope of
  // H = 16 (2^(-0.5), 2^(-1.5), ...).
  std::vector<double> s = alibiSlopes(12);
  REQUIRE(s.size() == 12);
  for (int i = 0; i < 8; ++i)
    CHECK(s[i] == Approx(std::pow(2.0, -(i + 1.0))));
  for (int j = 0; j < 4; ++j)
    CHECK(s[8 + j] == Approx(std::pow(2.0, -0.5 * (2 * j + 1))));
  // A one-layer model scales by 1 + 1e-5 (no division by L - 1 = 0).
  CHECK(minimaxDecaySlopes(2, 0, 1)[0] == Approx(0.0625 * (1 + 1e-5)));
}

TEST_CASE("resolved defaults", "[models]") {
  ImportResult r = importModelString(test::kBase, "dir/sub/base.yaml");
  INFO(r.diag.str());
  REQUIRE(r.ok);
  const ModelSpec &s = r.spec;
  CHECK(s.formatVersion == 1);
  CHECK(s.name == "t");
  CHECK(s.family.empty());
  CHECK(s.dtype == DType::BF16);
  CHECK_FALSE(s.tieWordEmbeddings);
  CHECK(s.attention.headDim == 32);
  CHECK(s.attention.numKvHeads == 2);
  CHECK(s.attention.scale == Approx(1.0 / std::sqrt(32.0)));
  CHECK_FALSE(s.attention.qkNorm);
  CHECK_FALSE(s.attention.qkvBias);
  CHECK(s.rope.rotaryDim == 32);
  CHECK(s.rope.scaling.type == RopeScalingType::None);
  CHECK(s.weights.source == WeightSource::Random);
  CHECK(s.weights.seed == 0);
  CHECK(s.weights.initStd == 0.02);
  CHECK(s.loc.line == 1);
  CHECK(s.loc.column == 1);

  SECTION("num_kv_heads defaults to num_heads") {
    ImportResult m = importModelString(
        test::replaced(test::kBase, "  num_kv_heads: 2\n", ""), "t.yaml");
    REQUIRE(m.ok);
    CHECK(m.spec.attention.numKvHeads == 8);
  }
  SECTION("name defaults to the file's stem") {
    ImportResult m = importModelString(
        test::replaced(test::kBase, "name: t\n", ""), "dir/my-model.yaml");
    REQUIRE(m.ok);
    CHECK(m.spec.name == "my-model");
  }
  SECTION("explicit scale, gptj pairing, linear scaling, f16") {
    std::string text = test::replaced(test::kBase, "    theta: 10000\n",
                                      "    theta: 10000\n"
                                      "    pairing: gptj\n"
                                      "    rotary_dim: 16\n"
                                      "    scaling: {type: linear, factor: 2}\n"
                                      "  scale: 0.5\n");
    text = test::replaced(text, "name: t\n", "name: t\ndtype: f16\n");
    ImportResult m = importModelString(text, "t.yaml");
    INFO(m.diag.str());
    REQUIRE(m.ok);
    CHECK(m.spec.dtype == DType::F16);
    CHECK(m.spec.attention.scale == 0.5);
    CHECK(m.spec.rope.pairing == RopePairing::GptJ);
    CHECK(m.spec.rope.rotaryDim == 16);
    CHECK(m.spec.rope.scaling.type == RopeScalingType::Linear);
    CHECK(m.spec.rope.scaling.factor == 2.0);
  }
  SECTION("safetensors paths resolve against the model file's folder") {
    std::string text = std::string(test::kBase) +
                       "weights:\n  source: safetensors\n"
                       "  path: ../ckpt/model.safetensors\n";
    ImportResult m = importModelString(text, "dir/sub/model.yaml");
    INFO(m.diag.str());
    REQUIRE(m.ok);
    CHECK(m.spec.weights.source == WeightSource::Safetensors);
    CHECK(m.spec.weights.path == "dir/ckpt/model.safetensors");
    ImportResult abs = importModelString(
        test::replaced(text, "../ckpt", "/abs/ckpt"), "dir/sub/model.yaml");
    REQUIRE(abs.ok);
    CHECK(abs.spec.weights.path == "/abs/ckpt/model.safetensors");
  }
  SECTION("explicit decay slopes: one shared list or one per layer") {
    std::string shared =
        test::replaced(test::kHybrid, "minimax", "[0.5, 0.25, 0.125, 0.0625]");
    ImportResult m = importModelString(shared, "t.yaml");
    INFO(m.diag.str());
    REQUIRE(m.ok);
    CHECK(m.spec.layers[2].decaySlopes ==
          std::vector<double>{0.5, 0.25, 0.125, 0.0625});
    std::string perLayer =
        test::replaced(test::kHybrid, "minimax",
                       "[[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]]");
    ImportResult p = importModelString(perLayer, "t.yaml");
    INFO(p.diag.str());
    REQUIRE(p.ok);
    CHECK(p.spec.layers[1].decaySlopes == std::vector<double>{5, 6, 7, 8});
    CHECK(p.spec.layers[3].decaySlopes.empty());
  }
}
