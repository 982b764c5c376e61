//===- PassStatistics.cpp - what each pass matched and rewrote ------------===//

#include "passes/PassStatistics.h"

#include "mlir/IR/Operation.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Format.h"

#include <algorithm>
#include <map>

using namespace mlir;

namespace strata {

namespace {

/// Which PassStatistics each live pass declares. mlir::Pass lists its
/// statistics too, but as mlir::Pass::Statistic, which holds neither a name
/// nor a value where LLVM is built without statistics.
struct Registry {
  std::mutex mutex;
  llvm::DenseMap<const Pass *, std::vector<PassStatistic *>> byPass;
};

Registry &registry() {
  static Registry *r = new Registry; // never destroyed: passes outlive main
  return *r;
}

} // namespace

PassStatistic::PassStatistic(Pass *owner, const char *name,
                             const char *description)
    : Pass::Statistic(owner, name, description), owner_(owner), name_(name),
      description_(description) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.byPass[owner].push_back(this);
}

PassStatistic::~PassStatistic() {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.byPass.find(owner_);
  if (it == r.byPass.end())
    return;
  llvm::erase_value(it->second, this);
  if (it->second.empty())
    r.byPass.erase(it);
}

PassStatistic &PassStatistic::operator+=(uint64_t n) {
  value_.fetch_add(n, std::memory_order_relaxed);
  // Counts too where LLVM is built with statistics.
  Pass::Statistic::operator+=(n);
  return *this;
}

std::vector<PassStatistic *> statisticsOf(const Pass *pass) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.byPass.find(pass);
  return it == r.byPass.end() ? std::vector<PassStatistic *>() : it->second;
}

int64_t countOps(Operation *root, llvm::function_ref<bool(Operation *)> pred) {
  int64_t n = 0;
  root->walk([&](Operation *op) {
    if (op != root && pred(op))
      ++n;
  });
  return n;
}

int64_t countAllOps(Operation *root) {
  return countOps(root, [](Operation *) { return true; });
}

void countOpChange(int64_t before, int64_t after, PassStatistic &removed,
                   PassStatistic &added) {
  if (after < before)
    removed += uint64_t(before - after);
  else
    added += uint64_t(after - before);
}

/// Takes each pass's counts when it has run on an op: a clone made for a
/// thread runs on several functions, and its counts are added to its
/// entry each time.
class PassStatisticsCollector : public PassInstrumentation {
public:
  explicit PassStatisticsCollector(PassStatisticsReport &report)
      : report_(report) {}

  void runBeforePass(Pass *pass, Operation *op) override {
    if (isAdaptor(pass))
      return;
    // The entry is made here, so that the report keeps the order in which
    // the passes start, statistics or not.
    std::lock_guard<std::mutex> lock(report_.mutex_);
    report_.entryFor(pass->getName(), anchorOf(pass, op));
  }
  void runAfterPass(Pass *pass, Operation *op) override { take(pass, op); }
  void runAfterPassFailed(Pass *pass, Operation *op) override {
    take(pass, op);
  }

private:
  /// The pass that runs a nested pass manager on each op of a kind; the
  /// report names the nested passes instead, under their op's heading.
  /// Its class is internal to MLIR, so it is known by its name.
  static bool isAdaptor(Pass *pass) {
    return pass->getArgument().empty() &&
           pass->getName() == "mlir::detail::OpToOpPassAdaptor";
  }

  static llvm::StringRef anchorOf(Pass *pass, Operation *op) {
    if (std::optional<llvm::StringRef> name = pass->getOpName())
      return *name;
    return op->getName().getStringRef();
  }

  void take(Pass *pass, Operation *op) {
    if (isAdaptor(pass))
      return;
    std::vector<PassStatistic *> stats = statisticsOf(pass);
    std::lock_guard<std::mutex> lock(report_.mutex_);
    PassStatisticsReport::Entry &entry =
        report_.entryFor(pass->getName(), anchorOf(pass, op));
    for (PassStatistic *stat : stats) {
      auto it = llvm::find_if(
          entry.values, [&](const auto &v) { return v.name == stat->name(); });
      if (it == entry.values.end()) {
        entry.values.push_back({stat->name(), stat->description(), 0});
        it = std::prev(entry.values.end());
      }
      it->value += stat->take();
    }
  }

  PassStatisticsReport &report_;
};

void PassStatisticsReport::collect(PassManager &pm) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (root_.empty())
      root_ = pm.getOpAnchorName().str();
  }
  pm.addInstrumentation(std::make_unique<PassStatisticsCollector>(*this));
}

PassStatisticsReport::Entry &
PassStatisticsReport::entryFor(llvm::StringRef pass, llvm::StringRef anchor) {
  for (Entry &e : entries_)
    if (e.pass == pass && e.anchor == anchor)
      return e;
  entries_.push_back({pass.str(), anchor.str(), {}});
  return entries_.back();
}

std::vector<PassStatisticsReport::Entry> PassStatisticsReport::entries() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_;
}

namespace {

/// One pass and its statistics, as MLIR's printPassEntry writes them.
void printEntry(llvm::raw_ostream &os, unsigned indent, llvm::StringRef pass,
                std::vector<PassStatisticsReport::Value> values) {
  os.indent(indent) << pass << "\n";
  llvm::sort(values,
             [](const auto &a, const auto &b) { return a.name < b.name; });
  size_t nameWidth = 0, valueWidth = 0;
  for (const auto &v : values) {
    nameWidth = std::max(nameWidth, v.name.size());
    valueWidth = std::max(valueWidth, std::to_string(v.value).size());
  }
  for (const auto &v : values)
    os.indent(indent + 2) << llvm::format(
        "(S) %*llu %-*s - %s\n", int(valueWidth), (unsigned long long)v.value,
        int(nameWidth), v.name.c_str(), v.description.c_str());
}

} // namespace

void PassStatisticsReport::print(llvm::raw_ostream &os, bool list) const {
  std::vector<Entry> all = entries();
  std::string root;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    root = root_;
  }
  os << "===" << std::string(73, '-') << "===\n";
  llvm::StringRef title = "... Pass statistics report ...";
  os.indent((80 - title.size()) / 2) << title << "\n";
  os << "===" << std::string(73, '-') << "===\n";
  if (list) {
    // One entry per pass name, the runs on every op merged.
    std::map<std::string, std::vector<Value>> merged;
    for (const Entry &e : all) {
      if (e.values.empty())
        continue;
      std::vector<Value> &values = merged[e.pass];
      for (const Value &v : e.values) {
        auto it = llvm::find_if(
            values, [&](const Value &x) { return x.name == v.name; });
        if (it == values.end())
          values.push_back(v);
        else
          it->value += v.value;
      }
    }
    for (const auto &[pass, values] : merged)
      printEntry(os, 2, pass, values);
  } else {
    // Passes on the outermost op at the top; a run of passes on nested ops
    // under the heading of their op, as MLIR's nested pass managers.
    std::string nested;
    for (const Entry &e : all) {
      if (e.anchor == root) {
        nested.clear();
        printEntry(os, 0, e.pass, e.values);
        continue;
      }
      if (e.anchor != nested) {
        nested = e.anchor;
        os << "'" << nested << "' Pipeline\n";
      }
      printEntry(os, 2, e.pass, e.values);
    }
  }
  os << "\n";
}

} // namespace strata
