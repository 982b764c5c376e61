// What the runtime hands a program for one step: the tokens of every
// sequence of the batch (flattened), their positions, and the sequence
// metadata that `!strata.seqs` stands for in the IR.
#ifndef STRATA_RUNTIME_STEPINPUTS_H
#define STRATA_RUNTIME_STEPINPUTS_H

#include <cstdint>
#include <vector>

namespace strata {

struct StepInputs {
  /// [tokens]: ids and positions of every token, sequence after sequence.
  std::vector<int32_t> tokenIds;
  std::vector<int32_t> positions;
  /// [batch + 1]: sequence b owns tokens cuQLens[b] .. cuQLens[b+1]-1.
  std::vector<int32_t> cuQLens;
  /// [batch]: tokens in the KV cache after this step's tokens are written.
  std::vector<int32_t> kvLens;
  /// [batch * maxBlocksPerSeq]: each sequence's block table, padded with -1.
  std::vector<int32_t> blockTables;
  int64_t maxBlocksPerSeq = 0;
  /// [tokens]: flat KV slot (block * blockSize + offset) of every token.
  std::vector<int64_t> slotMapping;
  /// [batch]: linear-attention state slot of each sequence (-1: padding).
  std::vector<int32_t> stateSlots;
  /// Verify only, [tokens]: the parent of each draft token among its
  /// sequence's tokens of this step (-1: attached to the cached prefix).
  std::vector<int32_t> parentIds;

  int64_t numTokens() const { return int64_t(tokenIds.size()); }
  int64_t batch() const { return int64_t(cuQLens.size()) - 1; }
};

} // namespace strata

#endif // STRATA_RUNTIME_STEPINPUTS_H
