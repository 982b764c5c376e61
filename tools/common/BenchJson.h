// The JSON pieces of the benchmark reports, shared by `strata bench`'s
// report (BenchReport.cpp) and the fusion ablation's (Ablation.cpp), so
// that a result row reads the same in both. Internal to the bench tools:
// it brings nlohmann-json into the files that include it.
#ifndef STRATA_TOOLS_COMMON_BENCHJSON_H
#define STRATA_TOOLS_COMMON_BENCHJSON_H

#include "tools/common/BenchReport.h"

#include <nlohmann/json.hpp>

#include <cstdio>

namespace strata::tools {

/// Keys keep the order they are written in.
using BenchJson = nlohmann::ordered_json;

/// tool, version, machine, device, model, plan and settings.
BenchJson benchHeaderJson(const BenchMetadata &meta);

/// One test at one batch size: every run's seconds and tokens/s, their mean
/// and standard deviation, and for decode the bytes a step moves and the
/// roofline.
BenchJson benchResultJson(const BenchResult &r, double bandwidthGBs);

/// `doc` indented by two, invalid UTF-8 replaced, and a newline.
void printJsonDocument(FILE *out, const BenchJson &doc);

} // namespace strata::tools

#endif // STRATA_TOOLS_COMMON_BENCHJSON_H
