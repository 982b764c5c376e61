// One test case per class of mistake in a model file: each must give exactly
// one diagnostic at the offending node (1-based line:column) whose message
// names what was expected. Inputs are the bases of TestUtil.h with one edit.
#include "TestUtil.h"

using namespace strata;
using test::expectError;
using test::kBase;
using test::kHybrid;
using test::replaced;

TEST_CASE("unknown keys suggest the nearest valid key", "[models][errors]") {
  SECTION("typo, nearest by edit distance") {
    expectError(replaced(kBase, "num_kv_heads:", "num_kv_head:"), 10, 3,
                "unknown key 'num_kv_head'; did you mean 'num_kv_heads'?");
  }
  SECTION("Hugging Face spelling of a top-level key") {
    expectError(replaced(kBase, "num_layers:", "num_hidden_layers:"), 5, 1,
                "unknown key 'num_hidden_layers'; did you mean 'num_layers'?");
  }
  SECTION("Hugging Face key that lives in a section here") {
    expectError(
        replaced(kBase, "norm_eps: 1.0e-5\n",
                 "norm_eps: 1.0e-5\nrope_theta: 5\n"),
        8, 1, "unknown key 'rope_theta'; did you mean 'attention.rope.theta'?");
  }
  SECTION("nothing close: the valid keys are listed") {
    expectError(
        replaced(kBase, "    theta: 10000\n", "    theta: 10000\n    zzz: 1\n"),
        13, 5,
        "unknown key 'zzz'; expected one of: theta, rotary_dim, "
        "pairing or scaling");
  }
}

TEST_CASE("a key of megabytes gets a one-line message, quickly",
          "[models][errors]") {
  // An explicit key ("? KEY") may be as long as the file. The message quotes
  // its start; the search for a near key skips what cannot be a typo
  // (comparing every candidate with it cost length x length steps, and
  // memory for each: 700 MB and half a minute here under the sanitizers).
  std::string key(1 << 20, 'x');
  expectError(std::string(kBase) + "? " + key + "\n: 1\n", 15, 3,
              "unknown key '" + std::string(37, 'x') +
                  "...'; expected one of: format, name, family, dtype, "
                  "vocab_size, hidden_size, num_layers, "
                  "max_position_embeddings, norm_eps, tie_word_embeddings, "
                  "residual, residual_scale, layer_types, layer_pattern, "
                  "attention, linear_attention, mlp, weights or tokenizer");
}

TEST_CASE("missing required keys point at the enclosing mapping",
          "[models][errors]") {
  SECTION("top level") {
    expectError(replaced(kBase, "hidden_size: 256\n", ""), 1, 1,
                "missing required key 'hidden_size'");
  }
  SECTION("in a section") {
    expectError(replaced(kBase, "  num_heads: 8\n", ""), 9, 3,
                "missing required key 'num_heads' in 'attention'");
  }
  SECTION("a required section") {
    expectError(replaced(kBase, "mlp:\n  intermediate_size: 688\n", ""), 1, 1,
                "missing required key 'mlp'");
  }
  SECTION("format") {
    expectError(replaced(kBase, "format: strata-model/v1\n", ""), 1, 1,
                "missing required key 'format' (expected 'format: "
                "strata-model/v1'");
  }
}

TEST_CASE("format versions other than v1 are rejected", "[models][errors]") {
  expectError(replaced(kBase, "strata-model/v1", "strata-model/v2"), 1, 9,
              "unsupported format 'strata-model/v2'; expected "
              "'strata-model/v1'");
}

TEST_CASE("values of the wrong type", "[models][errors]") {
  SECTION("not an integer") {
    expectError(replaced(kBase, "hidden_size: 256", "hidden_size: abc"), 4, 14,
                "expected an integer for 'hidden_size', got 'abc'");
  }
  SECTION("a fraction for an integer") {
    expectError(replaced(kBase, "num_heads: 8", "num_heads: 8.5"), 9, 14,
                "expected an integer for 'attention.num_heads', got '8.5'");
  }
  SECTION("a quoted number") {
    expectError(replaced(kBase, "hidden_size: 256", "hidden_size: \"256\""), 4,
                14,
                "expected an integer for 'hidden_size', got the string "
                "\"256\"");
  }
  SECTION("zero size") {
    expectError(replaced(kBase, "vocab_size: 512", "vocab_size: 0"), 3, 13,
                "expected a positive integer for 'vocab_size', got 0");
  }
  SECTION("negative size") {
    expectError(
        replaced(kBase, "intermediate_size: 688", "intermediate_size: -688"),
        14, 22,
        "expected a positive integer for 'mlp.intermediate_size', "
        "got -688");
  }
  SECTION("not a number") {
    expectError(replaced(kBase, "theta: 10000", "theta: .inf"), 12, 12,
                "expected a number for 'attention.rope.theta', got '.inf'");
  }
  SECTION("not a boolean") {
    expectError(std::string(kBase) + "tie_word_embeddings: yes\n", 15, 22,
                "expected true or false for 'tie_word_embeddings', got 'yes'");
  }
  SECTION("a list for a scalar") {
    expectError(replaced(kBase, "norm_eps: 1.0e-5", "norm_eps: [1]"), 7, 11,
                "expected a number for 'norm_eps', got a list");
  }
  SECTION("an empty value points at its key") {
    expectError(replaced(kBase, "num_layers: 4", "num_layers:"), 5, 1,
                "expected an integer for 'num_layers', got nothing");
  }
  SECTION("a scalar for a section") {
    expectError(replaced(kBase, "mlp:\n  intermediate_size: 688", "mlp: 688"),
                13, 6, "expected a mapping for 'mlp', got '688'");
  }
  SECTION("too large") {
    expectError(replaced(kBase, "vocab_size: 512", "vocab_size: 4294967296"), 3,
                13, "is too large; the largest supported value is");
  }
}

TEST_CASE("inconsistent sizes", "[models][errors]") {
  SECTION("num_heads does not divide hidden_size") {
    expectError(replaced(kBase, "num_heads: 8", "num_heads: 7"), 9, 14,
                "'attention.num_heads' (7) does not divide hidden_size (256); "
                "give 'head_dim' explicitly");
  }
  SECTION("num_kv_heads does not divide num_heads") {
    expectError(replaced(kBase, "num_kv_heads: 2", "num_kv_heads: 3"), 10, 17,
                "num_kv_heads (3) does not divide num_heads (8)");
  }
  SECTION("odd rotary_dim") {
    expectError(replaced(kBase, "theta: 10000",
                         "theta: 10000\n    "
                         "rotary_dim: 15"),
                13, 17, "rotary_dim (15) must be even");
  }
  SECTION("rotary_dim larger than head_dim") {
    expectError(replaced(kBase, "theta: 10000",
                         "theta: 10000\n    "
                         "rotary_dim: 64"),
                13, 17, "rotary_dim (64) is larger than head_dim (32)");
  }
  SECTION("odd head_dim with the default rotary_dim") {
    expectError(
        replaced(kBase, "num_kv_heads: 2", "num_kv_heads: 2\n  head_dim: 33"),
        13, 5,
        "rotary_dim defaults to head_dim (33), which is odd; give an "
        "even 'rotary_dim'");
  }
  SECTION("sliding window <= 0") {
    std::string text =
        replaced(kBase, "attention:\n",
                 "layer_pattern: [sliding_attention]\nattention:\n"
                 "  sliding_window: 0\n");
    expectError(text, 10, 19,
                "expected a positive integer for 'attention.sliding_window', "
                "got 0");
  }
  SECTION("sliding layers without a window") {
    expectError(replaced(kBase, "attention:\n",
                         "layer_pattern: [sliding_attention]\nattention:\n"),
                10, 3,
                "missing required key 'sliding_window' in 'attention' "
                "(layer 0 is sliding_attention)");
  }
  SECTION("a window but no sliding layer") {
    expectError(replaced(kBase, "num_kv_heads: 2",
                         "num_kv_heads: 2\n  sliding_window: 16"),
                11, 3,
                "'attention.sliding_window' is set but no layer is "
                "sliding_attention");
  }
  SECTION("llama3 high_freq_factor not above low_freq_factor") {
    expectError(replaced(kBase, "theta: 10000",
                         "theta: 10000\n    scaling: {type: llama3, factor: "
                         "8, low_freq_factor: 4, high_freq_factor: 4, "
                         "original_max_position_embeddings: 8192}"),
                13, 78, "high_freq_factor (4) must be greater than");
  }
  SECTION("llama3 parameters are required") {
    expectError(replaced(kBase, "theta: 10000",
                         "theta: 10000\n    scaling:\n      type: llama3\n"
                         "      factor: 8"),
                14, 7,
                "missing required key 'low_freq_factor' in "
                "'attention.rope.scaling'");
  }
}

TEST_CASE("unknown layer kinds suggest the nearest kind", "[models][errors]") {
  SECTION("typo") {
    expectError(replaced(kHybrid, "full_attention]", "ful_attention]"), 8, 71,
                "unknown layer kind 'ful_attention'; did you mean "
                "'full_attention'?");
  }
  SECTION("abbreviation") {
    expectError(replaced(kHybrid, "full_attention]", "sliding]"), 8, 71,
                "unknown layer kind 'sliding'; did you mean "
                "'sliding_attention'?");
  }
  SECTION("nothing close") {
    expectError(replaced(kHybrid, "full_attention]", "mamba]"), 8, 71,
                "unknown layer kind 'mamba'; expected full_attention, "
                "sliding_attention or linear_attention");
  }
}

TEST_CASE("unsupported rope scaling types", "[models][errors]") {
  expectError(replaced(kBase, "theta: 10000",
                       "theta: 10000\n    scaling:\n      type: yarn\n"
                       "      factor: 4"),
              14, 13,
              "unsupported rope scaling type 'yarn'; supported: linear, "
              "llama3");
}

TEST_CASE("unsupported dtypes", "[models][errors]") {
  expectError(replaced(kBase, "name: t\n", "name: t\ndtype: fp8\n"), 3, 8,
              "unsupported dtype 'fp8'; supported: f32, f16, bf16");
}

TEST_CASE("decay slopes: count, sign and scheme", "[models][errors]") {
  SECTION("wrong count in a shared list") {
    expectError(replaced(kHybrid, "minimax", "[0.5, 0.25, 0.125]"), 17, 17,
                "expected 4 decay slopes in 'linear_attention.decay_slopes' "
                "(one per linear_attention head), got 3");
  }
  SECTION("wrong number of per-layer lists") {
    expectError(replaced(kHybrid, "minimax", "[[1, 2, 3, 4], [1, 2, 3, 4]]"),
                17, 17,
                "expected 3 lists in 'linear_attention.decay_slopes' (one per "
                "linear_attention layer), got 2");
  }
  SECTION("wrong count in one layer's list") {
    expectError(
        replaced(kHybrid, "minimax", "[[1, 2, 3, 4], [1, 2, 3], [1, 2, 3, 4]]"),
        17, 32,
        "expected 4 decay slopes in "
        "'linear_attention.decay_slopes[1]'");
  }
  SECTION("non-positive slope") {
    expectError(replaced(kHybrid, "minimax", "[0.5, 0.25, 0, 0.0625]"), 17, 29,
                "expected a positive number for "
                "'linear_attention.decay_slopes[2]', got 0");
  }
  SECTION("unknown scheme") {
    expectError(replaced(kHybrid, "minimax", "minmax"), 17, 17,
                "unknown decay slope scheme 'minmax'; did you mean "
                "'minimax'?");
  }
  SECTION("missing") {
    expectError(replaced(kHybrid, "  decay_slopes: minimax\n", ""), 15, 3,
                "missing required key 'decay_slopes' in 'linear_attention'");
  }
}

TEST_CASE("layer list lengths", "[models][errors]") {
  SECTION("layer_types length differs from num_layers") {
    expectError(replaced(replaced(kHybrid, "layer_pattern", "layer_types"),
                         "num_layers: 4", "num_layers: 8"),
                8, 14, "'layer_types' has 4 entries but num_layers is 8");
  }
  SECTION("num_layers not a multiple of the pattern length") {
    expectError(replaced(kHybrid, "num_layers: 4", "num_layers: 6"), 8, 16,
                "num_layers 6 is not a multiple of the length of "
                "'layer_pattern' (4)");
  }
  SECTION("empty pattern") {
    expectError(replaced(kBase, "attention:\n",
                         "layer_pattern: []\n"
                         "attention:\n"),
                8, 16, "'layer_pattern' is empty");
  }
  SECTION("both forms") {
    expectError(replaced(kBase, "attention:\n",
                         "layer_pattern: [full_attention]\n"
                         "layer_types: [full_attention]\nattention:\n"),
                9, 1, "give either 'layer_types' or 'layer_pattern', not both");
  }
}

TEST_CASE("sections a layer needs, and sections no layer uses",
          "[models][errors]") {
  SECTION("linear layer without linear_attention") {
    std::string text =
        replaced(kHybrid,
                 "linear_attention:\n  num_heads: 4\n  head_dim: 32\n"
                 "  decay_slopes: minimax\n",
                 "");
    expectError(text, 8, 17,
                "layer 0 is 'linear_attention' but the file has no "
                "'linear_attention' section");
  }
  SECTION("softmax layer without attention") {
    std::string text =
        replaced(kHybrid,
                 "attention:\n  num_heads: 8\n  num_kv_heads: 2\n  rope:\n"
                 "    theta: 10000\n",
                 "");
    expectError(text, 8, 71,
                "layer 3 is 'full_attention' but the file has no 'attention' "
                "section");
  }
  SECTION("linear_attention given but unused") {
    std::string text = replaced(kHybrid,
                                "linear_attention, linear_attention, "
                                "linear_attention, full_attention",
                                "full_attention");
    expectError(text, 14, 1,
                "'linear_attention' is given but no layer uses "
                "linear_attention");
  }
}

TEST_CASE("duplicate keys", "[models][errors]") {
  expectError(
      replaced(kBase, "num_layers: 4\n", "num_layers: 4\nnum_layers: 8\n"), 6,
      1, "duplicate key 'num_layers' (first given at line 5)");
}

TEST_CASE("YAML syntax errors keep yaml-cpp's position", "[models][errors]") {
  SECTION("unclosed flow sequence") {
    expectError(replaced(kHybrid, "full_attention]", "full_attention"), 9, 10,
                "invalid YAML: ");
  }
  SECTION("bad indentation") {
    expectError(replaced(kBase, "  num_kv_heads: 2", "   num_kv_heads: 2"), 10,
                16, "invalid YAML: illegal map value");
  }
}

TEST_CASE("the top level must be one mapping", "[models][errors]") {
  SECTION("scalar") {
    expectError("just words\n", 1, 1,
                "expected a mapping at the top level (starting with "
                "'format: strata-model/v1'), got 'just words'");
  }
  SECTION("list") {
    expectError("\n- format: strata-model/v1\n", 2, 1,
                "expected a mapping at the top level");
  }
  SECTION("two documents") {
    expectError(std::string(kBase) + "---\nformat: strata-model/v1\n", 15, 1,
                "a model file holds one YAML document");
  }
  SECTION("empty text") {
    expectError("", 1, 1, "model file is empty");
    expectError("# only a comment\n\n", 1, 1, "model file is empty");
  }
}

TEST_CASE("weights sections", "[models][errors]") {
  std::string base = std::string(kBase) + "weights:\n";
  SECTION("unknown source") {
    expectError(base + "  source: hdf5\n", 16, 11,
                "unsupported weights source 'hdf5'; supported: random, "
                "safetensors");
  }
  SECTION("safetensors needs a path") {
    expectError(base + "  source: safetensors\n", 16, 3,
                "missing required key 'path' in 'weights'");
  }
  SECTION("seed does not apply to safetensors") {
    expectError(base + "  source: safetensors\n  path: a.safetensors\n"
                       "  seed: 3\n",
                18, 3, "'weights.seed' applies only to 'source: random'");
  }
  SECTION("negative seed") {
    expectError(base + "  source: random\n  seed: -1\n", 17, 9,
                "expected a non-negative integer for 'weights.seed', got -1");
  }
}
