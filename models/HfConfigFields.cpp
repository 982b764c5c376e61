#include "models/HfConfigFields.h"

namespace strata::detail {

const std::vector<HfArchInfo> &hfArchitectures() {
  static const std::vector<HfArchInfo> archs = {
      {"LlamaForCausalLM", "llama", HfArch::Llama},
      {"Qwen3ForCausalLM", "qwen3", HfArch::Qwen3},
      {"MistralForCausalLM", "mistral", HfArch::Mistral},
      {"MiniMaxForCausalLM", "minimax", HfArch::MiniMax},
  };
  return archs;
}

const std::vector<std::string> &hfHarmlessFields() {
  // None of them changes the forward pass.
  static const std::vector<std::string> fields = {
      "_name_or_path",   "architectures",     "attention_dropout",
      "auto_map",        "bos_token_id",      "decoder_start_token_id",
      "eos_token_id",    "hidden_dropout",    "initializer_range",
      "model_type",      "output_attentions", "output_hidden_states",
      "pad_token_id",    "return_dict",       "sep_token_id",
      "tokenizer_class", "torchscript",       "transformers_version",
      "use_cache",       "use_return_dict",
  };
  return fields;
}

const std::vector<std::string> &hfMappedFields() {
  static const std::vector<std::string> fields = {
      "vocab_size",
      "hidden_size",
      "num_hidden_layers",
      "num_attention_heads",
      "num_key_value_heads",
      "head_dim",
      "intermediate_size",
      "rms_norm_eps",
      "rope_theta",
      "max_position_embeddings",
      "tie_word_embeddings",
      "torch_dtype",
      "dtype",
      "attention_bias",
      "rope_scaling",
      "rope_parameters",
      "partial_rotary_factor",
      "hidden_act",
      "layer_types",
  };
  return fields;
}

const std::vector<std::string> &hfMiniMaxResidualFactors() {
  static const std::vector<std::string> fields = {
      "layernorm_full_attention_alpha",
      "layernorm_full_attention_beta",
      "layernorm_linear_attention_alpha",
      "layernorm_linear_attention_beta",
      "layernorm_mlp_alpha",
      "layernorm_mlp_beta",
      "full_attn_alpha_factor",
      "full_attn_beta_factor",
      "linear_attn_alpha_factor",
      "linear_attn_beta_factor",
      "mlp_alpha_factor",
      "mlp_beta_factor",
  };
  return fields;
}

std::vector<std::string> hfArchSpecificFields(HfArch arch) {
  switch (arch) {
  case HfArch::Llama:
    // pretraining_tp > 1 only split the matmuls differently in old
    // transformers versions; the result is the same model.
    return {"sliding_window", "mlp_bias", "pretraining_tp"};
  case HfArch::Mistral:
    return {"sliding_window"};
  case HfArch::Qwen3:
    return {"sliding_window", "use_sliding_window", "max_window_layers"};
  case HfArch::MiniMax: {
    std::vector<std::string> f = {
        "attn_type_list",
        "sliding_window",
        "rotary_dim",
        "num_local_experts",
        "num_experts_per_tok",
        "shared_intermediate_size",
        "postnorm",
        "block_size",
        "router_aux_loss_coef",
        "router_jitter_noise",
        "output_router_logits",
    };
    for (const std::string &name : hfMiniMaxResidualFactors())
      f.push_back(name);
    return f;
  }
  }
  return {};
}

} // namespace strata::detail
