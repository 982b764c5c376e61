// Token selection from fp32 logits on the GPU: argmax and seeded
// temperature / top-k / top-p sampling over a batch of rows.
//
//   logits  fp32 [rows, vocab], row-major (rows = sequences of the batch)
//   outIds  int32 [rows]
//
// Both pick what kernels/cpu/SamplingRef.h picks on the same row: argmax
// breaks ties towards the lowest id; sampling orders candidates by logit
// (ties by id), applies top-k then top-p, and walks the kept prefix to the
// point where its running probability exceeds u * total, u being
// counterUniform(seed, seqId, step) computed bit-identically on the device.
// Probabilities are exp((logit - max) / temperature) in double as on the
// CPU, summed in a different order, so only a draw whose u lands within
// ~1e-15 (relative) of a boundary between two tokens may pick the
// neighbour.
// vocab may be anything from 1 to 2^31 - 1 (tested up to 256K); NaN logits
// are outside the contract. Launches are asynchronous on `stream`.
#ifndef STRATA_KERNELS_SAMPLING_SAMPLING_H
#define STRATA_KERNELS_SAMPLING_SAMPLING_H

#include "kernels/common/Status.h"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace strata::kernels {

/// Per-row sampling parameters (device memory, [rows]). temperature 0
/// selects argmax; topK 0 and topP 1 disable those filters. Validated by
/// the caller (runtime SamplingParams::validate): temperature >= 0 finite,
/// topK >= 0, topP in (0, 1].
struct SampleRowParams {
  double temperature = 0.0;
  int64_t topK = 0;
  double topP = 1.0;
  uint64_t seed = 0;
  uint64_t seqId = 0;
  uint64_t step = 0;
};

/// Bytes of device workspace argmaxRows needs for this shape. The
/// workspace must be zeroed once when allocated; every launch leaves it
/// zeroed again (its per-row counters elect the block that finishes a row).
size_t argmaxWorkspaceBytes(int64_t rows, int64_t vocab);

/// outIds[r] = argmax(logits[r]), ties to the lowest id. Several blocks
/// split a long row; the last one to finish reduces their results.
Status argmaxRows(const float *logits, int64_t rows, int64_t vocab,
                  int32_t *outIds, void *workspace, size_t workspaceBytes,
                  cudaStream_t stream);

/// outIds[r] = the token drawn for row r under params[r]. One block per
/// row selects by radix passes over the row (no sort, no workspace).
Status sampleRows(const float *logits, int64_t rows, int64_t vocab,
                  const SampleRowParams *params, int32_t *outIds,
                  cudaStream_t stream);

} // namespace strata::kernels

#endif // STRATA_KERNELS_SAMPLING_SAMPLING_H
