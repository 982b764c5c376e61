// The memory floor of a decode step: the bytes one step must move between
// device memory and the chip, from the plan alone.
//
// A decode step reads every weight its program uses once, reads each
// sequence's cached keys and values in every softmax layer, and reads and
// writes each sequence's fp32 state in every linear-attention layer.
// Activations are left out: at decode sizes they are a few KiB against
// gigabytes of weights. Two simplifications, both upper bounds: a weight
// counts in full (an untied embedding table is only gathered, a row per
// sequence) and every softmax layer reads the whole context (a
// sliding-window layer reads at most its window).
#ifndef STRATA_TOOLS_COMMON_DECODEROOFLINE_H
#define STRATA_TOOLS_COMMON_DECODEROOFLINE_H

#include "runtime/plan/Plan.h"

namespace strata::tools {

/// The H200's measured read-only bandwidth (GB/s); decode mostly reads.
constexpr double kH200ReadBandwidthGBs = 4140.0;

struct DecodeStepBytes {
  double weights = 0;     ///< decodeWeightBytes()
  double kvCache = 0;     ///< K and V read by the softmax layers
  double linearState = 0; ///< linear-attention state, read and written
  double total() const { return weights + kvCache + linearState; }
};

/// Bytes of one decode step of `batch` sequences whose cached context is
/// `meanContext` tokens on average (the mean over the steps of a run).
DecodeStepBytes decodeStepBytes(const plan::Plan &plan, int64_t batch,
                                double meanContext);

/// Elements x dtype width summed over all the plan's weights.
double weightBytes(const plan::Plan &plan);

/// The same sum over the weights a decode step reads: those some launch of
/// the `decode` program (else the generic `forward`) takes as input. A
/// fused plan also lists the unpacked sources of its packed weights (QKV,
/// gate/up), which no launch reads. A plan with neither program counts
/// every weight.
double decodeWeightBytes(const plan::Plan &plan);

/// The bytes the launches of one decode step of `batch` sequences read and
/// write in activations: every operand of every launch of the `decode`
/// program (else the generic `forward`) that is an arena tensor, an input
/// or an output, at one token per sequence, counted once per launch that
/// reads or writes it (the sequence table, a handle, is left out). What a
/// fusion saves is here: the intermediate tensors its separate launches
/// write and read back. Weights, KV cache and linear state are what
/// decodeStepBytes counts, and are left out.
double decodeActivationBytes(const plan::Plan &plan, int64_t batch);

/// Launches of one decode step: those of the `decode` program (else the
/// generic `forward`); 0 for a plan with neither.
int64_t decodeLaunches(const plan::Plan &plan);

/// Seconds a step of `bytes` takes at `bandwidthGBs` (1 GB = 1e9 bytes).
inline double idealSeconds(double bytes, double bandwidthGBs) {
  return bytes / (bandwidthGBs * 1e9);
}

} // namespace strata::tools

#endif // STRATA_TOOLS_COMMON_DECODEROOFLINE_H
