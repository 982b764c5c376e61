// The generation front end shared by `strata run MODEL.yaml` and
// `strata-run MODEL.splan`: the options, their checks, and the report.
#ifndef STRATA_TOOLS_COMMON_RUNCOMMAND_H
#define STRATA_TOOLS_COMMON_RUNCOMMAND_H

#include "runtime/Engine.h"
#include "runtime/plan/Plan.h"
#include "tools/common/ArgParser.h"

#include <string>

namespace strata::tools {

/// "TOOL: error: MESSAGE" on stderr; returns 2 (a bad command line).
int usageError(const std::string &tool, const std::string &message);
/// MESSAGE on stderr, as it is when it names its file already ("FILE:
/// error: ..."), else after "TOOL: error: "; returns 1 (bad input).
int inputError(const std::string &tool, const std::string &message);

/// The sampling options (--temperature, --top-k, --top-p, --seed) and the
/// engine's (--kv-blocks, --weights, --device, --no-graphs) where given;
/// a message naming the option when a value is wrong, else empty.
std::string parseSamplingOptions(const ArgParser &parser,
                                 SamplingParams &sampling);
std::string parseEngineOptions(const ArgParser &parser, EngineOptions &options);

/// Declares --temperature, --top-k, --top-p, --seed and --tokenizer, which
/// every generating command takes.
void addSamplingOptions(ArgParser &parser);

/// Declares the prompt options (--prompt, --prompt-file, --prompt-ids,
/// --tokenizer, --chat, --chat-format, --system), the stop options
/// (--ignore-eos, --stop), --print-ids, the sampling options, --batch,
/// --kv-blocks, --weights, --device, --no-graphs, --logits-out, --draft
/// and --spec-tokens.
void addRunOptions(ArgParser &parser);

/// Reads the plan of a --draft model into `out`; on failure prints one
/// message ("FILE: error: ...") and returns the exit code. The default
/// reads compiled plans only; `strata run` sets one that also compiles
/// model files.
using DraftPlanLoader = int (*)(const std::string &path, plan::Plan &out);
void setDraftPlanLoader(DraftPlanLoader loader);
/// The default loader: a compiled plan, else an error saying how to
/// compile one.
int readDraftPlan(const std::string &path, plan::Plan &out);
/// Reads a --draft model with the loader set (strata run and strata serve
/// also compile model files).
int loadDraftPlan(const std::string &path, plan::Plan &out);
/// Creates the draft engine of `draftPlan` with its own weights and pool on
/// the device and with the settings of `options` (the model's), and
/// attaches it to `engine` (`tokens` per round, `tree` as for
/// Engine::attachDraft). False with `error` set ("the draft model: ..."
/// when it cannot be created).
bool attachDraftModel(Engine &engine, plan::Plan draftPlan,
                      const EngineOptions &options, int64_t tokens,
                      const std::vector<int64_t> &tree, std::string &error);

/// Generates with `plan` as the options say. With --draft, a draft model
/// proposes tokens that `plan` verifies (speculative decoding, greedy;
/// docs/speculative.md) and the report says how many it accepted. A text prompt streams the
/// generated text to stdout (why it stopped and the time per token go to
/// stderr); --prompt-ids or --print-ids print the ids of each sequence
/// and the times to stdout. Generation stops at the model's EOS ids
/// (unless --ignore-eos) and at --stop texts. The weights come from
/// --weights when given, else they are the plan's own (its checkpoint, or
/// random weights from its seed). `source` is the model or plan file, for
/// messages. Returns the exit code: 2 for a bad option value (message
/// prefixed by `tool`), 1 when the tokenizer, the weights or generation
/// fail.
int runGeneration(const std::string &tool, const ArgParser &parser,
                  plan::Plan plan, const std::string &source);

} // namespace strata::tools

#endif // STRATA_TOOLS_COMMON_RUNCOMMAND_H
