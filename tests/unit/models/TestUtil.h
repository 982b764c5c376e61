// Helpers shared by the importer tests.
#ifndef STRATA_TESTS_UNIT_MODELS_TESTUTIL_H
#define STRATA_TESTS_UNIT_MODELS_TESTUTIL_H

#include "models/ModelImporter.h"

#include <catch2/catch.hpp>

#include <string>

namespace strata::test {

/// A minimal valid Llama-style model; line numbers below refer to it.
///  1 format   4 hidden_size   8 attention:     11   rope:
///  2 name     5 num_layers    9   num_heads    12     theta
///  3 vocab    6 max_pos      10   num_kv_heads 13 mlp: / 14 intermediate
///             7 norm_eps
inline const char *kBase = R"(format: strata-model/v1
name: t
vocab_size: 512
hidden_size: 256
num_layers: 4
max_position_embeddings: 2048
norm_eps: 1.0e-5
attention:
  num_heads: 8
  num_kv_heads: 2
  rope:
    theta: 10000
mlp:
  intermediate_size: 688
)";

/// A valid hybrid (3 linear + 1 full layer); line numbers refer to it.
///  8 layer_pattern (elements at columns 17, 35, 53, 71)
///  9 attention:  14 linear_attention:  15 num_heads: 4  16 head_dim: 32
/// 17   decay_slopes: minimax (value at column 17)
inline const char *kHybrid = R"(format: strata-model/v1
name: h
vocab_size: 512
hidden_size: 256
num_layers: 4
max_position_embeddings: 2048
norm_eps: 1.0e-5
layer_pattern: [linear_attention, linear_attention, linear_attention, full_attention]
attention:
  num_heads: 8
  num_kv_heads: 2
  rope:
    theta: 10000
linear_attention:
  num_heads: 4
  head_dim: 32
  decay_slopes: minimax
mlp:
  intermediate_size: 688
)";

/// `text` with its single occurrence of `from` replaced by `to`.
inline std::string replaced(const std::string &text, const std::string &from,
                            const std::string &to) {
  size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  REQUIRE(text.find(from, at + 1) == std::string::npos);
  return text.substr(0, at) + to + text.substr(at + from.size());
}

/// Imports `text` and checks that it fails at line:column with a message
/// containing `message`.
inline void expectError(const std::string &text, int line, int column,
                        const std::string &message) {
  ImportResult r = importModelString(text, "test.yaml");
  INFO("input:\n" << text);
  INFO("diagnostic: " << r.diag.str());
  REQUIRE_FALSE(r.ok);
  CHECK(r.diag.file == "test.yaml");
  CHECK(r.diag.line == line);
  CHECK(r.diag.column == column);
  CHECK_THAT(r.diag.message, Catch::Matchers::Contains(message));
}

} // namespace strata::test

#endif // STRATA_TESTS_UNIT_MODELS_TESTUTIL_H
