// The Hugging Face config converter: published configs of every supported
// architecture convert to model files that import to the expected
// ModelSpec, and every class of unsupported or malformed config gives one
// diagnostic at the offending field of config.json.
#include "models/DecaySlopes.h"
#include "models/HfConfigImporter.h"

#include "TestUtil.h"

#include <cmath>
#include <filesystem>
#include <fstream>

#include <unistd.h>

using namespace strata;
using test::replaced;

namespace {

// Published configs (values as on the Hugging Face hub).
const char *kLlama32_1B = R"({
  "architectures": ["LlamaForCausalLM"],
  "attention_bias": false,
  "attention_dropout": 0.0,
  "bos_token_id": 128000,
  "eos_token_id": 128001,
  "head_dim": 64,
  "hidden_act": "silu",
  "hidden_size": 2048,
  "initializer_range": 0.02,
  "intermediate_size": 8192,
  "max_position_embeddings": 131072,
  "mlp_bias": false,
  "model_type": "llama",
  "num_attention_heads": 32,
  "num_hidden_layers": 16,
  "num_key_value_heads": 8,
  "pretraining_tp": 1,
  "rms_norm_eps": 1e-05,
  "rope_scaling": {
    "factor": 32.0,
    "high_freq_factor": 4.0,
    "low_freq_factor": 1.0,
    "original_max_position_embeddings": 8192,
    "rope_type": "llama3"
  },
  "rope_theta": 500000.0,
  "tie_word_embeddings": true,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.45.0.dev0",
  "use_cache": true,
  "vocab_size": 128256
}
)";

const char *kQwen3_06B = R"({
  "architectures": ["Qwen3ForCausalLM"],
  "attention_bias": false,
  "attention_dropout": 0.0,
  "bos_token_id": 151643,
  "eos_token_id": 151645,
  "head_dim": 128,
  "hidden_act": "silu",
  "hidden_size": 1024,
  "initializer_range": 0.02,
  "intermediate_size": 3072,
  "max_position_embeddings": 40960,
  "max_window_layers": 28,
  "model_type": "qwen3",
  "num_attention_heads": 16,
  "num_hidden_layers": 28,
  "num_key_value_heads": 8,
  "rms_norm_eps": 1e-06,
  "rope_scaling": null,
  "rope_theta": 1000000,
  "sliding_window": null,
  "tie_word_embeddings": true,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.51.0",
  "use_cache": true,
  "use_sliding_window": false,
  "vocab_size": 151936
}
)";

const char *kMistral7B = R"({
  "architectures": ["MistralForCausalLM"],
  "bos_token_id": 1,
  "eos_token_id": 2,
  "hidden_act": "silu",
  "hidden_size": 4096,
  "initializer_range": 0.02,
  "intermediate_size": 14336,
  "max_position_embeddings": 32768,
  "model_type": "mistral",
  "num_attention_heads": 32,
  "num_hidden_layers": 32,
  "num_key_value_heads": 8,
  "rms_norm_eps": 1e-05,
  "rope_theta": 10000.0,
  "sliding_window": 4096,
  "tie_word_embeddings": false,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.34.0.dev0",
  "use_cache": true,
  "vocab_size": 32000
}
)";

// A small MiniMax-Text-01-shaped config: 3 linear layers then a softmax one.
const char *kMiniMaxSmall = R"({
  "architectures": ["MiniMaxForCausalLM"],
  "attn_type_list": [0, 0, 0, 1],
  "head_dim": 32,
  "hidden_act": "silu",
  "hidden_size": 256,
  "intermediate_size": 688,
  "layernorm_full_attention_alpha": 1,
  "layernorm_full_attention_beta": 1.0,
  "layernorm_linear_attention_alpha": 1,
  "layernorm_linear_attention_beta": 1.0,
  "layernorm_mlp_alpha": 1,
  "layernorm_mlp_beta": 1.0,
  "max_position_embeddings": 4096,
  "model_type": "minimax",
  "num_attention_heads": 8,
  "num_experts_per_tok": 1,
  "num_hidden_layers": 4,
  "num_key_value_heads": 2,
  "num_local_experts": 1,
  "postnorm": true,
  "rms_norm_eps": 1e-05,
  "rope_theta": 10000000,
  "rotary_dim": 32,
  "shared_intermediate_size": 0,
  "sliding_window": null,
  "tie_word_embeddings": false,
  "torch_dtype": "bfloat16",
  "vocab_size": 512
}
)";

ModelSpec convertAndImport(const std::string &json) {
  HfConvertOptions options;
  options.name = "ckpt";
  HfImportResult r = convertHfConfig(json, "config.json", options);
  INFO("diagnostic: " << r.diag.str());
  REQUIRE(r.ok);
  INFO("yaml:\n" << r.yaml);
  ImportResult imported = importModelString(r.yaml, "dir/m.yaml");
  INFO("import: " << imported.diag.str());
  REQUIRE(imported.ok);
  return imported.spec;
}

void expectHfError(const std::string &json, int line, int column,
                   const std::string &message) {
  HfImportResult r = convertHfConfig(json, "config.json", HfConvertOptions());
  INFO("input:\n" << json);
  INFO("diagnostic: " << r.diag.str());
  REQUIRE_FALSE(r.ok);
  CHECK(r.diag.file == "config.json");
  CHECK(r.diag.line == line);
  CHECK(r.diag.column == column);
  CHECK_THAT(r.diag.message, Catch::Matchers::Contains(message));
}

} // namespace

TEST_CASE("Llama-3.2-1B converts with llama3 rope scaling", "[models][hf]") {
  ModelSpec s = convertAndImport(kLlama32_1B);
  CHECK(s.name == "ckpt");
  CHECK(s.family == "llama");
  CHECK(s.dtype == DType::BF16);
  CHECK(s.vocabSize == 128256);
  CHECK(s.hiddenSize == 2048);
  CHECK(s.numLayers() == 16);
  CHECK(s.maxPositionEmbeddings == 131072);
  CHECK(s.normEps == 1e-5);
  CHECK(s.tieWordEmbeddings);
  CHECK(s.attention.numHeads == 32);
  CHECK(s.attention.numKvHeads == 8);
  CHECK(s.attention.headDim == 64);
  CHECK_FALSE(s.attention.qkNorm);
  CHECK_FALSE(s.attention.qkvBias);
  CHECK(s.rope.theta == 500000.0);
  CHECK(s.rope.rotaryDim == 64);
  CHECK(s.rope.scaling.type == RopeScalingType::Llama3);
  CHECK(s.rope.scaling.factor == 32.0);
  CHECK(s.rope.scaling.lowFreqFactor == 1.0);
  CHECK(s.rope.scaling.highFreqFactor == 4.0);
  CHECK(s.rope.scaling.originalMaxPositionEmbeddings == 8192);
  CHECK(s.mlp.intermediateSize == 8192);
  for (const LayerSpec &l : s.layers)
    CHECK(l.kind == LayerKind::FullAttention);
  CHECK(s.weights.source == WeightSource::Safetensors);
  CHECK(s.weights.path == "dir/model.safetensors");
}

TEST_CASE("Qwen3-0.6B converts with QK-norm", "[models][hf]") {
  ModelSpec s = convertAndImport(kQwen3_06B);
  CHECK(s.family == "qwen3");
  CHECK(s.numLayers() == 28);
  CHECK(s.normEps == 1e-6);
  CHECK(s.attention.numHeads == 16);
  CHECK(s.attention.numKvHeads == 8);
  CHECK(s.attention.headDim == 128);
  CHECK(s.attention.qkNorm);
  CHECK(s.rope.theta == 1e6);
  CHECK(s.rope.scaling.type == RopeScalingType::None);
  CHECK(s.tieWordEmbeddings);
  for (const LayerSpec &l : s.layers)
    CHECK(l.kind == LayerKind::FullAttention);
}

TEST_CASE("Mistral-7B-v0.1 windows every layer", "[models][hf]") {
  ModelSpec s = convertAndImport(kMistral7B);
  CHECK(s.family == "mistral");
  CHECK(s.attention.headDim == 128); // derived: 4096 / 32
  CHECK(s.attention.numKvHeads == 8);
  CHECK_FALSE(s.tieWordEmbeddings);
  REQUIRE(s.numLayers() == 32);
  for (const LayerSpec &l : s.layers) {
    CHECK(l.kind == LayerKind::SlidingAttention);
    CHECK(l.slidingWindow == 4096);
  }
}

TEST_CASE("MiniMax converts attn_type_list and transformers' decay",
          "[models][hf]") {
  ModelSpec s = convertAndImport(kMiniMaxSmall);
  CHECK(s.family == "minimax");
  REQUIRE(s.numLayers() == 4);
  for (int i = 0; i < 3; ++i) {
    CHECK(s.layers[i].kind == LayerKind::LinearAttention);
    // transformers: 2^(-8(h+1)/H) * (1 - l/(L - 1 + 1e-5) + 1e-5).
    REQUIRE(s.layers[i].decaySlopes.size() == 8);
    for (int h = 0; h < 8; ++h)
      CHECK(s.layers[i].decaySlopes[h] ==
            Approx(std::exp2(-8.0 * (h + 1) / 8.0) *
                   (1.0 - i / (3.0 + 1e-5) + 1e-5))
                .epsilon(1e-15));
  }
  CHECK(s.layers[3].kind == LayerKind::FullAttention);
  CHECK(s.linear.numHeads == 8);
  CHECK(s.linear.headDim == 32);
  CHECK(s.linear.normEps == 1e-6);
  CHECK(s.normEps == 1e-5);
  CHECK(s.residualFromNorm);
  CHECK(s.attention.numKvHeads == 2);
  CHECK(s.rope.rotaryDim == 32);
  CHECK(s.rope.theta == 1e7);
  CHECK(s.attentionResidual.isUnit());
  CHECK(s.linearResidual.isUnit());
  CHECK(s.mlpResidual.isUnit());
}

TEST_CASE("MiniMax residual factors become residual_scale", "[models][hf]") {
  // MiniMax-Text-01's alpha, (2 * 80)^0.25, in the original spelling; the
  // transformers spelling of another factor.
  std::string json =
      replaced(kMiniMaxSmall, "\"layernorm_linear_attention_alpha\": 1,",
               "\"layernorm_linear_attention_alpha\": 3.5565588200778455,");
  json = replaced(json, "\"layernorm_full_attention_beta\": 1.0,",
                  "\"full_attn_beta_factor\": 0.5,");
  json = replaced(json, "\"layernorm_mlp_alpha\": 1,",
                  "\"layernorm_mlp_alpha\": 1, \"mlp_alpha_factor\": 1,");
  json = replaced(json, "\"layernorm_mlp_beta\": 1.0,",
                  "\"layernorm_mlp_beta\": 0.75,");
  ModelSpec s = convertAndImport(json);
  CHECK(s.linearResidual.alpha == 3.5565588200778455);
  CHECK(s.linearResidual.beta == 1.0);
  CHECK(s.attentionResidual.alpha == 1.0);
  CHECK(s.attentionResidual.beta == 0.5);
  CHECK(s.mlpResidual.alpha == 1.0);
  CHECK(s.mlpResidual.beta == 0.75);
}

TEST_CASE("Qwen3 sliding layers follow max_window_layers", "[models][hf]") {
  std::string json = replaced(kQwen3_06B, "\"use_sliding_window\": false",
                              "\"use_sliding_window\": true");
  json = replaced(json, "\"sliding_window\": null",
                  "\"sliding_window\": 4096");
  json = replaced(json, "\"max_window_layers\": 28",
                  "\"max_window_layers\": 20");
  ModelSpec s = convertAndImport(json);
  REQUIRE(s.numLayers() == 28);
  for (int i = 0; i < 28; ++i)
    CHECK(s.layers[i].kind == (i >= 20 ? LayerKind::SlidingAttention
                                       : LayerKind::FullAttention));
  // Without the switch the window is not used at all.
  for (const LayerSpec &l : convertAndImport(kQwen3_06B).layers)
    CHECK(l.kind == LayerKind::FullAttention);
}

TEST_CASE("other accepted spellings", "[models][hf]") {
  SECTION("rope_parameters with the base inside and a linear scaling") {
    std::string json = replaced(
        kQwen3_06B, "\"rope_scaling\": null,",
        "\"rope_parameters\": {\"rope_type\": \"linear\", \"factor\": 2.0, "
        "\"rope_theta\": 5000},");
    json = replaced(json, "  \"rope_theta\": 1000000,\n", "");
    ModelSpec s = convertAndImport(json);
    CHECK(s.rope.theta == 5000.0);
    CHECK(s.rope.scaling.type == RopeScalingType::Linear);
    CHECK(s.rope.scaling.factor == 2.0);
  }
  SECTION("legacy 'type', 'default' scaling, partial rotary, dtype") {
    std::string json = replaced(kMistral7B, "\"sliding_window\": 4096,",
                                "\"sliding_window\": null, \"rope_scaling\": "
                                "{\"type\": \"default\"}, "
                                "\"partial_rotary_factor\": 0.5,");
    json = replaced(json, "\"torch_dtype\": \"bfloat16\"",
                    "\"dtype\": \"float16\"");
    ModelSpec s = convertAndImport(json);
    CHECK(s.rope.scaling.type == RopeScalingType::None);
    CHECK(s.rope.rotaryDim == 64);
    CHECK(s.dtype == DType::F16);
    for (const LayerSpec &l : s.layers)
      CHECK(l.kind == LayerKind::FullAttention);
  }
  SECTION("layer_types") {
    std::string json =
        replaced(kMiniMaxSmall, "\"attn_type_list\": [0, 0, 0, 1],",
                 "\"layer_types\": [\"linear_attention\", \"full_attention\", "
                 "\"linear_attention\", \"full_attention\"],");
    ModelSpec s = convertAndImport(json);
    CHECK(s.layers[1].kind == LayerKind::FullAttention);
    CHECK(s.layers[2].kind == LayerKind::LinearAttention);
  }
}

TEST_CASE("the model's dtype: 16-bit as the config says, float32 as bf16",
          "[models][hf]") {
  auto convert = [](const std::string &configDtype,
                    const std::string &requested) {
    std::string json = kMistral7B;
    if (configDtype.empty())
      json = replaced(json, "  \"torch_dtype\": \"bfloat16\",\n", "");
    else
      json = replaced(json, "\"bfloat16\"", "\"" + configDtype + "\"");
    HfConvertOptions options;
    options.dtype = requested;
    HfImportResult r = convertHfConfig(json, "ckpt/config.json", options);
    INFO("diagnostic: " << r.diag.str());
    REQUIRE(r.ok);
    ImportResult imported = importModelString(r.yaml, "m.yaml");
    REQUIRE(imported.ok);
    return std::make_pair(imported.spec.dtype, r.note);
  };
  CHECK(convert("bfloat16", "") == std::make_pair(DType::BF16, std::string()));
  CHECK(convert("float16", "") == std::make_pair(DType::F16, std::string()));
  CHECK(convert("", "") == std::make_pair(DType::BF16, std::string()));
  // The one default that converts says so.
  auto [dtype, note] = convert("float32", "");
  CHECK(dtype == DType::BF16);
  CHECK(note == "ckpt/config.json: note: the checkpoint's dtype is float32; "
                "the model file says bf16, and the weights are converted to "
                "it when loaded (--dtype f32 keeps them as they are)");
  // What the user asks for is what they get, without a note.
  CHECK(convert("float32", "f32") ==
        std::make_pair(DType::F32, std::string()));
  CHECK(convert("bfloat16", "f16") ==
        std::make_pair(DType::F16, std::string()));
  CHECK(convert("", "f32") == std::make_pair(DType::F32, std::string()));
  HfConvertOptions bad;
  bad.dtype = "fp8";
  HfImportResult r = convertHfConfig(kMistral7B, "config.json", bad);
  CHECK_FALSE(r.ok);
  CHECK(r.diag.message ==
        "unsupported dtype 'fp8' requested; supported: bf16, f16, f32");
}

TEST_CASE("the generated file names its source and weights", "[models][hf]") {
  HfConvertOptions options;
  options.name = "Llama-3.2-1B";
  options.weightsPath = "ckpt/model.safetensors.index.json";
  options.sourceDescription = "ckpt/config.json";
  HfImportResult r = convertHfConfig(kLlama32_1B, "config.json", options);
  REQUIRE(r.ok);
  CHECK_THAT(r.yaml, Catch::Matchers::StartsWith(
                         "# Generated by 'strata import-hf' from "
                         "ckpt/config.json.\nformat: strata-model/v1\n"));
  CHECK_THAT(r.yaml, Catch::Matchers::Contains("name: \"Llama-3.2-1B\""));
  CHECK_THAT(r.yaml, Catch::Matchers::Contains(
                         "path: \"ckpt/model.safetensors.index.json\""));
}

TEST_CASE("unsupported architectures list the supported ones",
          "[models][hf][errors]") {
  expectHfError(replaced(kMistral7B, "MistralForCausalLM", "GPT2LMHeadModel"),
                2, 21,
                "unsupported architecture 'GPT2LMHeadModel'; supported: "
                "LlamaForCausalLM, Qwen3ForCausalLM, MistralForCausalLM or "
                "MiniMaxForCausalLM");
}

TEST_CASE("unknown fields are listed", "[models][hf][errors]") {
  expectHfError(replaced(kMistral7B, "\"use_cache\": true,",
                         "\"use_cache\": true, \"foo\": 1, \"bar\": 2,"),
                20, 22,
                "unsupported fields 'foo', 'bar' for MistralForCausalLM");
  // A MiniMax-only field in a Llama config is unknown there.
  expectHfError(replaced(kLlama32_1B, "\"use_cache\": true,",
                         "\"use_cache\": true, \"attn_type_list\": [1],"),
                31, 22, "unsupported field 'attn_type_list'");
}

TEST_CASE("unsupported rope scaling names the key", "[models][hf][errors]") {
  expectHfError(replaced(kLlama32_1B, "\"rope_type\": \"llama3\"",
                         "\"rope_type\": \"yarn\""),
                25, 18,
                "unsupported rope scaling type 'yarn' in "
                "'rope_scaling.rope_type'; supported: default, linear, llama3");
  expectHfError(replaced(kLlama32_1B, "    \"low_freq_factor\": 1.0,\n", ""),
                20, 19,
                "missing 'low_freq_factor' in 'rope_scaling' (required by "
                "rope type 'llama3')");
}

TEST_CASE("partial rotary factors must give an even size",
          "[models][hf][errors]") {
  expectHfError(replaced(kMistral7B, "\"rope_theta\": 10000.0,",
                         "\"rope_theta\": 10000.0, "
                         "\"partial_rotary_factor\": 0.3,"),
                15, 51, "is not an even number of rotated elements");
}

TEST_CASE("MiniMax features beyond v1", "[models][hf][errors]") {
  // Both spellings of one factor must agree.
  expectHfError(replaced(kMiniMaxSmall, "\"layernorm_mlp_alpha\": 1,",
                         "\"layernorm_mlp_alpha\": 1, \"mlp_alpha_factor\": "
                         "2,"),
                12, 49,
                "'mlp_alpha_factor' is 2 but 'layernorm_mlp_alpha' is 1; they "
                "name the same factor");
  expectHfError(replaced(kMiniMaxSmall, "\"num_local_experts\": 1,",
                         "\"num_local_experts\": 32,"),
                20, 24, "mixture-of-experts MLPs are not supported");
  expectHfError(replaced(kMiniMaxSmall, "  \"num_local_experts\": 1,\n", ""),
                1, 1, "missing required field 'num_local_experts'");
  expectHfError(replaced(kMiniMaxSmall, "\"num_experts_per_tok\": 1,",
                         "\"num_experts_per_tok\": 2,"),
                17, 26,
                "'num_experts_per_tok' is 2; with a single expert it must "
                "be 1");
  expectHfError(replaced(kMiniMaxSmall, "\"postnorm\": true,",
                         "\"postnorm\": false,"),
                21, 15, "'postnorm' false is not supported");
  expectHfError(replaced(kMiniMaxSmall, "\"rotary_dim\": 32,",
                         "\"rotary_dim\": 16,"),
                24, 17,
                "'rotary_dim' 16 differs from head_dim 32: MiniMaxForCausalLM "
                "rotates the whole head");
  expectHfError(replaced(kMiniMaxSmall, "\"attn_type_list\": [0, 0, 0, 1],",
                         "\"attn_type_list\": [0, 2, 0, 1],"),
                3, 25, "expected 0 (linear attention) or 1 (softmax");
}

TEST_CASE("per-layer lists have one entry per layer", "[models][hf][errors]") {
  // Shorter than num_hidden_layers (4): the decay slopes of every layer
  // used to be read past the end of the list.
  expectHfError(replaced(kMiniMaxSmall, "\"attn_type_list\": [0, 0, 0, 1],",
                         "\"attn_type_list\": [0, 1],"),
                3, 21,
                "'attn_type_list' has 2 entries but 'num_hidden_layers' is "
                "4; expected one entry per layer");
  std::string layerTypes = replaced(
      kMiniMaxSmall, "\"attn_type_list\": [0, 0, 0, 1],",
      "\"layer_types\": [\"linear_attention\", \"full_attention\"],");
  expectHfError(layerTypes, 3, 18,
                "'layer_types' has 2 entries but 'num_hidden_layers' is 4");
  // Longer is as wrong as shorter.
  expectHfError(replaced(kMiniMaxSmall, "\"attn_type_list\": [0, 0, 0, 1],",
                         "\"attn_type_list\": [0, 0, 0, 1, 1],"),
                3, 21,
                "'attn_type_list' has 5 entries but 'num_hidden_layers' is 4");
  // With both lists, the wrong length is reported rather than a
  // disagreement.
  expectHfError(replaced(kMiniMaxSmall, "\"attn_type_list\": [0, 0, 0, 1],",
                         "\"attn_type_list\": [0, 0, 0], \"layer_types\": "
                         "[\"linear_attention\", \"linear_attention\", "
                         "\"linear_attention\", \"full_attention\"],"),
                3, 21,
                "'attn_type_list' has 3 entries but 'num_hidden_layers' is 4");
  // Every architecture's layer_types.
  expectHfError(replaced(kLlama32_1B, "\"use_cache\": true,",
                         "\"use_cache\": true, \"layer_types\": "
                         "[\"full_attention\"],"),
                31, 37,
                "'layer_types' has 1 entries but 'num_hidden_layers' is 16");
}

TEST_CASE("counts that size the model file are bounded",
          "[models][hf][errors]") {
  expectHfError(replaced(kMiniMaxSmall, "\"num_hidden_layers\": 4,",
                         "\"num_hidden_layers\": 2000000000,"),
                18, 24,
                "value 2000000000 for 'num_hidden_layers' is too large; the "
                "largest supported value is 1024");
  expectHfError(replaced(kMiniMaxSmall, "\"num_attention_heads\": 8,",
                         "\"num_attention_heads\": 1048576,"),
                16, 26,
                "value 1048576 for 'num_attention_heads' is too large; the "
                "largest supported value is 1024");
}

TEST_CASE("activations, biases and dtypes", "[models][hf][errors]") {
  expectHfError(replaced(kMistral7B, "\"silu\"", "\"gelu\""), 5, 17,
                "unsupported activation 'gelu' in 'hidden_act'; supported: "
                "silu");
  expectHfError(replaced(kLlama32_1B, "\"attention_bias\": false",
                         "\"attention_bias\": true"),
                3, 21, "'attention_bias' true is not supported");
  expectHfError(replaced(kMistral7B, "\"bfloat16\"", "\"float8_e4m3fn\""), 18,
                18,
                "unsupported dtype 'float8_e4m3fn' in 'torch_dtype'; "
                "supported: bfloat16, float16, float32");
}

TEST_CASE("missing fields and wrong types", "[models][hf][errors]") {
  expectHfError(replaced(kMistral7B, "  \"hidden_size\": 4096,\n", ""), 1, 1,
                "missing required field 'hidden_size'");
  expectHfError(replaced(kMistral7B, "\"hidden_size\": 4096",
                         "\"hidden_size\": \"4096\""),
                6, 18,
                "expected an integer for 'hidden_size', got the string "
                "\"4096\"");
  expectHfError(replaced(kMistral7B, "\"num_hidden_layers\": 32",
                         "\"num_hidden_layers\": 32.5"),
                12, 24, "expected an integer for 'num_hidden_layers'");
}

TEST_CASE("errors of the converted model point at the config field",
          "[models][hf][errors]") {
  expectHfError(replaced(kMistral7B, "\"num_key_value_heads\": 8",
                         "\"num_key_value_heads\": 3"),
                13, 26, "num_kv_heads (3) does not divide num_heads (32)");
}

TEST_CASE("invalid JSON", "[models][hf][errors]") {
  expectHfError("{\n  \"vocab_size\": 5,\n  \"a\": [1, 2\n}\n", 4, 1,
                "invalid JSON: ");
  expectHfError("\n  [1, 2]\n", 2, 3,
                "invalid JSON: expected '{' at the start of config.json");
  expectHfError(replaced(kMistral7B, "\"use_cache\": true,",
                         "\"use_cache\": true, \"vocab_size\": 5,"),
                21, 3, "duplicate key 'vocab_size' (first given at line 20)");
  HfImportResult empty = convertHfConfig(" \n", "config.json", {});
  CHECK_FALSE(empty.ok);
  CHECK(empty.diag.str() == "config.json: error: config file is empty");
}

TEST_CASE("config.json is strict JSON", "[models][hf][errors]") {
  // What a YAML reader took for JSON: trailing commas, comments, single
  // quotes, bare words, NaN and Infinity.
  expectHfError(replaced(kMistral7B, "\"vocab_size\": 32000\n",
                         "\"vocab_size\": 32000,\n"),
                21, 22, "invalid JSON: trailing comma before '}'");
  expectHfError(replaced(kMistral7B, "[\"MistralForCausalLM\"]",
                         "[\"MistralForCausalLM\",]"),
                2, 41, "invalid JSON: trailing comma before ']'");
  expectHfError(replaced(kMistral7B, "\"bos_token_id\": 1,",
                         "\"bos_token_id\": 1, // <s>"),
                3, 22, "invalid JSON: comments are not allowed in JSON");
  expectHfError(replaced(kMistral7B, "\"silu\"", "'silu'"), 5, 17,
                "invalid JSON: single quotes are not allowed in JSON");
  expectHfError(replaced(kMistral7B, "\"silu\"", "silu"), 5, 17,
                "invalid JSON: invalid literal 'silu'");
  expectHfError(replaced(kMistral7B, "\"tie_word_embeddings\": false",
                         "\"tie_word_embeddings\": False"),
                17, 26, "invalid JSON: invalid literal 'False'");
  expectHfError(replaced(kMistral7B, "\"rope_theta\": 10000.0",
                         "\"rope_theta\": NaN"),
                15, 17, "invalid JSON: 'NaN' is not a JSON number");
  // Also in a field the converter ignores.
  expectHfError(replaced(kMistral7B, "\"initializer_range\": 0.02",
                         "\"initializer_range\": -Infinity"),
                7, 24, "invalid JSON: '-Infinity' is not a JSON number");
  expectHfError(replaced(kMistral7B, "\"initializer_range\": 0.02",
                         "\"initializer_range\": 1e400"),
                7, 24, "invalid JSON: number 1e400 is out of range for a "
                       "double");
  expectHfError(replaced(kMistral7B, "\"model_type\": \"mistral\"",
                         "\"model_type\": \"mistr\xff" "al\""),
                10, 23, "invalid JSON: invalid string: ill-formed UTF-8 byte");
  // Duplicate keys anywhere, not only at the top level.
  expectHfError(replaced(kLlama32_1B, "\"factor\": 32.0,",
                         "\"factor\": 32.0, \"factor\": 8.0,"),
                21, 21,
                "duplicate key 'rope_scaling.factor' (first given at line 21)");
  expectHfError(replaced(kMistral7B, "\"use_cache\": true,",
                         "\"use_cache\": true, \"auto_map\": {\"a\": \"x\", "
                         "\"a\": \"y\"},"),
                20, 45, "duplicate key 'auto_map.a' (first given at line 20)");
  expectHfError(replaced(kMistral7B, "\"use_cache\": true,",
                         "\"use_cache\": true, \"auto_map\": " +
                             std::string(100, '[') + std::string(100, ']') +
                             ","),
                20, 97, "nesting deeper than 64 levels");
}

TEST_CASE("config.json numbers must fit the field", "[models][hf][errors]") {
  // 2^63 does not fit an int64; 1e-400 is not the value written.
  expectHfError(replaced(kMistral7B, "\"hidden_size\": 4096",
                         "\"hidden_size\": 9223372036854775808"),
                6, 18,
                "integer 9223372036854775808 for 'hidden_size' is out of "
                "range");
  expectHfError(replaced(kMistral7B, "\"rms_norm_eps\": 1e-05",
                         "\"rms_norm_eps\": 1e-400"),
                14, 19,
                "number 1e-400 for 'rms_norm_eps' is out of the range of a "
                "double");
  expectHfError(replaced(kMistral7B, "\"hidden_act\": \"silu\"",
                         "\"hidden_act\": 5"),
                5, 17, "expected a string for 'hidden_act', got '5'");
  expectHfError(replaced(kMistral7B, "\"tie_word_embeddings\": false",
                         "\"tie_word_embeddings\": \"false\""),
                17, 26,
                "expected true or false for 'tie_word_embeddings', got the "
                "string \"false\"");
}

TEST_CASE("valid JSON that a YAML reader refused converts", "[models][hf]") {
  // Python's json module escapes characters beyond the BMP as surrogate
  // pairs; keys may be longer than YAML's 1024-character limit.
  std::string json = replaced(kMistral7B, "\"use_cache\": true,",
                              "\"use_cache\": true, \"_name_or_path\": "
                              "\"model \\ud83d\\ude00\",");
  convertAndImport(json);
  std::string longKey(2000, 'k');
  expectHfError(replaced(kMistral7B, "\"use_cache\": true,",
                         "\"use_cache\": true, \"" + longKey + "\": 1,"),
                20, 22, "unsupported field '" + longKey + "'");
}

TEST_CASE("checkpoint folders", "[models][hf]") {
  namespace fs = std::filesystem;
  fs::path root =
      fs::temp_directory_path() / ("strata-hf-" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "ckpt");
  fs::create_directories(root / "out");
  std::string dir = (root / "ckpt").string();

  SECTION("an unreadable config has no position") {
    HfImportResult r = importHfCheckpoint(dir, "");
    REQUIRE_FALSE(r.ok);
    CHECK(r.diag.str() == (root / "ckpt" / "config.json").string() +
                              ": error: cannot open config file: No such "
                              "file or directory");
  }
  std::ofstream(root / "ckpt" / "config.json") << kMistral7B;
  SECTION("a folder without weights") {
    HfImportResult r = importHfCheckpoint(dir, "");
    REQUIRE_FALSE(r.ok);
    CHECK_THAT(r.diag.message,
               Catch::Matchers::Contains("no model.safetensors.index.json "
                                         "or model.safetensors"));
  }
  SECTION("the weights path is relative to the output") {
    std::ofstream(root / "ckpt" / "model.safetensors") << "";
    HfImportResult r =
        importHfCheckpoint(dir, (root / "out" / "m.yaml").string());
    REQUIRE(r.ok);
    CHECK_THAT(r.yaml, Catch::Matchers::Contains(
                           "path: \"../ckpt/model.safetensors\""));
    CHECK_THAT(r.yaml, Catch::Matchers::Contains("name: \"ckpt\""));
  }
  fs::remove_all(root);
}
