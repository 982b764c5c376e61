#include "runtime/PlanTokenizer.h"

#include <new>

namespace strata {

namespace {

/// The tokenizer of `files`, named `name` in messages, checked against the
/// model's vocabulary: an id the embedding table has no row for would be
/// read out of bounds.
tok::Tokenizer loadChecked(const plan::TokenizerFiles &files,
                           const std::string &name, int64_t vocabSize) {
  tok::TokenizerSideFiles side;
  const size_t slash = name.find_last_of('/');
  const std::string dir =
      slash == std::string::npos ? "" : name.substr(0, slash + 1);
  side.tokenizerConfigName = dir + "tokenizer_config.json";
  side.generationConfigName = dir + "generation_config.json";
  if (!files.tokenizerConfig.empty())
    side.tokenizerConfig = files.tokenizerConfig;
  if (!files.generationConfig.empty())
    side.generationConfig = files.generationConfig;
  tok::Tokenizer tokenizer =
      tok::Tokenizer::fromJson(files.tokenizerJson, name, side);
  if (tokenizer.vocabSize() > vocabSize)
    throw tok::TokenizerError(
        name + ": the tokenizer has ids up to " +
        std::to_string(tokenizer.vocabSize() - 1) +
        " but the model's vocabulary has " + std::to_string(vocabSize) +
        " ids (vocab_size); it is not this model's tokenizer");
  return tokenizer;
}

} // namespace

std::string embedTokenizer(const std::string &tokenizerJson, int64_t vocabSize,
                           plan::TokenizerFiles &out) {
  try {
    tok::TokenizerSources sources = tok::readTokenizerSources(tokenizerJson);
    plan::TokenizerFiles files = out;
    files.tokenizerJson = std::move(sources.tokenizerJson);
    files.tokenizerConfig = sources.side.tokenizerConfig.value_or("");
    files.generationConfig = sources.side.generationConfig.value_or("");
    loadChecked(files, tokenizerJson, vocabSize);
    out = std::move(files);
    return "";
  } catch (const tok::TokenizerError &e) {
    return e.what();
  } catch (const std::bad_alloc &) {
    return tokenizerJson + ": out of memory while loading the tokenizer";
  }
}

std::optional<tok::Tokenizer> planTokenizer(const plan::Plan &plan,
                                            const std::string &planName) {
  if (plan.tokenizer.empty())
    return std::nullopt;
  return loadChecked(plan.tokenizer, planName + ": embedded tokenizer.json",
                     plan.vocabSize);
}

std::vector<int32_t> eosIdsOf(const plan::Plan &plan,
                              const tok::Tokenizer *tokenizer) {
  if (!plan.tokenizer.eosIds.empty())
    return plan.tokenizer.eosIds;
  return tokenizer ? tokenizer->eosIds() : std::vector<int32_t>{};
}

int32_t bosIdOf(const plan::Plan &plan, const tok::Tokenizer *tokenizer) {
  if (plan.tokenizer.bosId >= 0)
    return plan.tokenizer.bosId;
  return tokenizer && tokenizer->bosId() ? *tokenizer->bosId() : -1;
}

} // namespace strata
