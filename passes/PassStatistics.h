//===- PassStatistics.h - what each pass matched and rewrote ----*- C++ -*-===//
//
// Every pass counts what it did in MLIR pass statistics: how many groups it
// fused, which variant or kernel each became, the ops it removed. The
// counters are mlir::Pass::Statistic objects, registered with their pass
// like any other, so an LLVM built with statistics shows them in MLIR's
// own report.
//
// Debian's LLVM 16 is not: its libraries are built with NDEBUG and without
// LLVM_FORCE_ENABLE_STATS, so there mlir::Pass::Statistic is LLVM's
// NoopStatistic, which drops every increment, and MLIR's report
// (--mlir-pass-statistics) comes out empty. PassStatistic therefore keeps
// its own count as well, and PassStatisticsReport collects and prints the
// counts in the layout of MLIR's report: `strata compile --stats` and
// `strata-opt --mlir-pass-statistics` print it, with the same numbers.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_PASSES_PASSSTATISTICS_H
#define STRATA_PASSES_PASSSTATISTICS_H

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace strata {

/// A pass statistic that counts in every build of LLVM. Declare it as a
/// member of the pass, `PassStatistic fused{this, "fused", "..."};`, and
/// give the pass a copy constructor that leaves the members to their
/// initializers (the pass manager clones a pass for each thread; each
/// clone counts on its own and the report adds them up).
class PassStatistic : public mlir::Pass::Statistic {
public:
  PassStatistic(mlir::Pass *owner, const char *name, const char *description);
  ~PassStatistic();
  PassStatistic(const PassStatistic &) = delete;
  PassStatistic &operator=(const PassStatistic &) = delete;

  PassStatistic &operator+=(uint64_t n);
  PassStatistic &operator++() { return *this += 1; }

  const char *name() const { return name_; }
  const char *description() const { return description_; }
  uint64_t value() const { return value_.load(std::memory_order_relaxed); }
  /// The count so far, which is reset to 0.
  uint64_t take() { return value_.exchange(0, std::memory_order_relaxed); }

private:
  mlir::Pass *owner_;
  const char *name_;
  const char *description_;
  std::atomic<uint64_t> value_{0};
};

/// The PassStatistics `pass` declares, in declaration order.
std::vector<PassStatistic *> statisticsOf(const mlir::Pass *pass);

/// The ops nested in `root` (not `root` itself) for which `pred` holds.
int64_t countOps(mlir::Operation *root,
                 llvm::function_ref<bool(mlir::Operation *)> pred);
template <typename... OpTs> int64_t countOps(mlir::Operation *root) {
  return countOps(root,
                  [](mlir::Operation *op) { return mlir::isa<OpTs...>(op); });
}
/// Every op nested in `root`.
int64_t countAllOps(mlir::Operation *root);

/// Adds the net change of an op count, `before` a rewrite to `after` it,
/// to `removed` (fewer ops) or `added` (more).
void countOpChange(int64_t before, int64_t after, PassStatistic &removed,
                   PassStatistic &added);

/// The statistics of every pass that ran under the pass managers handed to
/// collect(), summed over each pass's thread clones and over the runs.
class PassStatisticsReport {
public:
  struct Value {
    std::string name;
    std::string description;
    uint64_t value = 0;
  };
  struct Entry {
    std::string pass;   ///< the pass's name (FuseQKV), as MLIR's report
    std::string anchor; ///< the op it runs on: builtin.module, func.func
    std::vector<Value> values;
  };

  /// Counts what the passes of `pm` do from now on, in every run.
  void collect(mlir::PassManager &pm);

  /// Passes in the order they first ran.
  std::vector<Entry> entries() const;

  /// MLIR's report: the pipeline view (passes in order, those on nested
  /// ops under "'func.func' Pipeline"), or with `list` one entry per pass
  /// that has statistics, sorted by name. Statistics are sorted by name,
  /// and each line is "(S) VALUE NAME - DESCRIPTION".
  void print(llvm::raw_ostream &os, bool list = false) const;

private:
  friend class PassStatisticsCollector;
  /// The entry of the pass named `pass` on `anchor`, made when first seen.
  Entry &entryFor(llvm::StringRef pass, llvm::StringRef anchor);
  mutable std::mutex mutex_;
  std::vector<Entry> entries_;
  std::string root_; ///< the op of the outermost pass manager
};

} // namespace strata

#endif // STRATA_PASSES_PASSSTATISTICS_H
