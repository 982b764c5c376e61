#include "codegen/PlanLowering.h"

#include "codegen/ProgramGraph.h"
#include "ir/StrataOps.h"
#include "ir/StrataTypes.h"
#include "runtime/plan/PlanLimits.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>
#include <map>

namespace strata {

namespace {

using plan::Buffer;
using plan::BufferKind;
using plan::Dim;

mlir::FailureOr<plan::DType> toPlanDType(mlir::Operation *op, mlir::Type type) {
  if (type.isF32())
    return plan::DType::F32;
  if (type.isF16())
    return plan::DType::F16;
  if (type.isBF16())
    return plan::DType::BF16;
  if (type.isInteger(32))
    return plan::DType::I32;
  return op->emitError() << "plan lowering: unsupported element type " << type;
}

/// The enum keyword of an attribute, or empty when it is no strata enum.
std::string enumKeyword(mlir::Attribute attr) {
  return llvm::TypeSwitch<mlir::Attribute, std::string>(attr)
      .Case([](RopeVariantAttr a) {
        return stringifyRopeVariant(a.getValue()).str();
      })
      .Case([](RopePairingKindAttr a) {
        return stringifyRopePairingKind(a.getValue()).str();
      })
      .Case([](RopeScalingKindAttr a) {
        return stringifyRopeScalingKind(a.getValue()).str();
      })
      .Case([](AttentionKindAttr a) {
        return stringifyAttentionKind(a.getValue()).str();
      })
      .Case([](PhaseAttr a) { return stringifyPhase(a.getValue()).str(); })
      .Default([](mlir::Attribute) { return std::string(); });
}

mlir::FailureOr<plan::AttrValue> toPlanAttr(mlir::Operation *op,
                                            mlir::NamedAttribute named) {
  mlir::Attribute attr = named.getValue();
  if (std::string keyword = enumKeyword(attr); !keyword.empty())
    return plan::AttrValue(keyword);
  if (auto i = attr.dyn_cast<mlir::IntegerAttr>())
    return plan::AttrValue(int64_t(i.getValue().getSExtValue()));
  if (auto f = attr.dyn_cast<mlir::FloatAttr>())
    return plan::AttrValue(f.getValueAsDouble());
  if (auto b = attr.dyn_cast<mlir::BoolAttr>())
    return plan::AttrValue(int64_t(b.getValue()));
  if (attr.isa<mlir::UnitAttr>())
    return plan::AttrValue(int64_t(1));
  if (auto s = attr.dyn_cast<mlir::StringAttr>())
    return plan::AttrValue(s.str());
  if (auto a = attr.dyn_cast<mlir::DenseF64ArrayAttr>())
    return plan::AttrValue(
        std::vector<double>(a.asArrayRef().begin(), a.asArrayRef().end()));
  if (auto a = attr.dyn_cast<mlir::DenseI64ArrayAttr>())
    return plan::AttrValue(
        std::vector<int64_t>(a.asArrayRef().begin(), a.asArrayRef().end()));
  return op->emitError() << "plan lowering: attribute '"
                         << named.getName().strref()
                         << "' has a kind plans cannot hold: " << attr;
}

/// Lowers one function; the plan-wide pieces (weights) go to `plan`.
class ProgramLowering {
public:
  /// `weightIndex` maps weight names to plan weights across all programs,
  /// so that phase programs share one copy of each weight.
  ProgramLowering(plan::Plan &plan, const PlanLoweringOptions &options,
                  llvm::StringMap<int32_t> &weightIndex)
      : plan_(plan), options_(options), weightIndex_(weightIndex) {}

  mlir::FailureOr<plan::Program> lower(mlir::func::FuncOp func);

private:
  mlir::LogicalResult addArgument(mlir::BlockArgument arg);
  mlir::LogicalResult addWeight(mlir::Operation *op);
  mlir::LogicalResult addLaunch(mlir::Operation *op);
  mlir::FailureOr<int32_t> tensorBuffer(mlir::Operation *op, mlir::Value v,
                                        BufferKind kind,
                                        const std::string &name);
  mlir::LogicalResult schedule(mlir::func::FuncOp func, plan::Program &program);

  plan::Plan &plan_;
  const PlanLoweringOptions &options_;
  plan::Program program_;
  llvm::DenseMap<mlir::Value, int32_t> bufferOf_;
  llvm::StringMap<int32_t> &weightIndex_;
  int kvBuffer_ = -1, stateBuffer_ = -1;
};

mlir::FailureOr<int32_t>
ProgramLowering::tensorBuffer(mlir::Operation *op, mlir::Value v,
                              BufferKind kind, const std::string &name) {
  auto type = v.getType().cast<mlir::RankedTensorType>();
  auto dtype = toPlanDType(op, type.getElementType());
  if (mlir::failed(dtype))
    return mlir::failure();
  Buffer b;
  b.name = name;
  b.kind = kind;
  b.dtype = *dtype;
  // The leading dynamic dimension counts tokens, except for per-sequence
  // results (logits of last tokens, sampled ids), which count sequences.
  bool perSequence = (mlir::isa<LogitsOp>(op) && !op->hasAttr("all_tokens")) ||
                     mlir::isa<SampleOp>(op);
  for (int64_t d : type.getShape())
    b.shape.push_back(mlir::ShapedType::isDynamic(d)
                          ? (perSequence ? Dim::batch() : Dim::tokens())
                          : Dim::constant(d));
  program_.buffers.push_back(b);
  int32_t index = static_cast<int32_t>(program_.buffers.size() - 1);
  bufferOf_[v] = index;
  return index;
}

mlir::LogicalResult ProgramLowering::addArgument(mlir::BlockArgument arg) {
  Buffer b;
  std::string name = "arg" + std::to_string(arg.getArgNumber());
  mlir::Type type = arg.getType();
  if (auto kv = type.dyn_cast<KVCacheType>()) {
    plan_.kvCache = {kv.getLayers(), kv.getKvHeads(), kv.getHeadDim(),
                     kv.getBlockSize(), plan::DType::BF16};
    auto dtype =
        toPlanDType(arg.getOwner()->getParentOp(), kv.getElementType());
    if (mlir::failed(dtype))
      return mlir::failure();
    plan_.kvCache.dtype = *dtype;
    b = Buffer{"kv_cache", BufferKind::KvCache, *dtype, {}, 0, -1};
    kvBuffer_ = static_cast<int>(program_.buffers.size());
  } else if (auto st = type.dyn_cast<LinearStateType>()) {
    plan_.linearState = {st.getLayers(), st.getHeads(), st.getKeyDim(),
                         st.getValueDim()};
    b = Buffer{
        "linear_state", BufferKind::LinearState, plan::DType::F32, {}, 0, -1};
    stateBuffer_ = static_cast<int>(program_.buffers.size());
  } else if (type.isa<SeqsType>()) {
    b = Buffer{"seqs", BufferKind::Input, plan::DType::I32, {}, 0, -1};
  } else if (type.isa<mlir::RankedTensorType>()) {
    return mlir::success(!mlir::failed(tensorBuffer(
        arg.getOwner()->getParentOp(), arg, BufferKind::Input, name)));
  } else {
    return arg.getOwner()->getParentOp()->emitError()
           << "plan lowering: argument " << arg.getArgNumber()
           << " has a type plans cannot hold: " << type;
  }
  program_.buffers.push_back(b);
  bufferOf_[arg] = static_cast<int32_t>(program_.buffers.size() - 1);
  return mlir::success();
}

mlir::LogicalResult ProgramLowering::addWeight(mlir::Operation *op) {
  auto type = op->getResult(0).getType().cast<mlir::RankedTensorType>();
  auto dtype = toPlanDType(op, type.getElementType());
  if (mlir::failed(dtype))
    return mlir::failure();
  plan::Weight w;
  w.dtype = *dtype;
  w.shape.assign(type.getShape().begin(), type.getShape().end());
  if (auto weight = mlir::dyn_cast<WeightOp>(op)) {
    w.name = weight.getName().str();
  } else {
    // Packed weights are named after their sources, which are weights.
    for (mlir::Value source : op->getOperands()) {
      auto src = source.getDefiningOp<WeightOp>();
      if (!src)
        return op->emitError()
               << "plan lowering: packed weights must come from "
                  "strata.weight ops";
      w.packedFrom.push_back(src.getName().str());
      w.packedRows.push_back(
          src.getType().cast<mlir::RankedTensorType>().getDimSize(0));
    }
    w.name = "packed(";
    for (size_t i = 0; i < w.packedFrom.size(); ++i)
      w.name += (i ? "," : "") + w.packedFrom[i];
    w.name += ")";
  }
  auto [it, inserted] = weightIndex_.try_emplace(
      w.name, static_cast<int32_t>(plan_.weights.size()));
  if (inserted)
    plan_.weights.push_back(w);
  Buffer b{w.name, BufferKind::Weight, w.dtype, {}, 0, it->second};
  for (int64_t d : w.shape)
    b.shape.push_back(Dim::constant(d));
  program_.buffers.push_back(b);
  bufferOf_[op->getResult(0)] =
      static_cast<int32_t>(program_.buffers.size() - 1);
  return mlir::success();
}

mlir::LogicalResult ProgramLowering::addLaunch(mlir::Operation *op) {
  // Splitting or merging heads only renames the bytes of a row-major
  // tensor: the result is a view of an arena operand, not a copy.
  if (mlir::isa<SplitHeadsOp, MergeHeadsOp>(op)) {
    auto it = bufferOf_.find(op->getOperand(0));
    if (it != bufferOf_.end() &&
        program_.buffers[it->second].kind == BufferKind::Arena) {
      int32_t base = program_.buffers[it->second].viewOf >= 0
                         ? program_.buffers[it->second].viewOf
                         : it->second;
      std::string name = op->getName().stripDialect().str() + "." +
                         std::to_string(program_.launches.size()) + ".view";
      auto view = tensorBuffer(op, op->getResult(0), BufferKind::Arena, name);
      if (mlir::failed(view))
        return mlir::failure();
      program_.buffers[*view].viewOf = base;
      return mlir::success();
    }
  }
  plan::Launch launch;
  launch.kernel = op->getName().stripDialect().str();
  for (mlir::NamedAttribute named : op->getAttrs()) {
    llvm::StringRef attrName = named.getName().strref();
    if (attrName == "operand_segment_sizes")
      continue;
    std::string keyword = enumKeyword(named.getValue());
    if ((attrName == "variant" || attrName == "kind") && !keyword.empty()) {
      launch.variant = keyword;
      continue;
    }
    auto value = toPlanAttr(op, named);
    if (mlir::failed(value))
      return mlir::failure();
    launch.attrs.push_back({attrName.str(), *value});
  }

  for (mlir::Value v : op->getOperands()) {
    auto it = bufferOf_.find(v);
    if (it == bufferOf_.end())
      return op->emitError() << "plan lowering: operand is not produced by "
                                "a lowered op or argument";
    launch.inputs.push_back(it->second);
  }
  for (mlir::OpResult r : op->getResults()) {
    mlir::Type type = r.getType();
    if (type.isa<KVCacheType>() || type.isa<LinearStateType>()) {
      // The new cache/state is the same storage, updated in place.
      int32_t buffer = type.isa<KVCacheType>() ? kvBuffer_ : stateBuffer_;
      if (buffer < 0)
        return op->emitError() << "plan lowering: the function has no "
                                  "cache or state argument to update";
      bufferOf_[r] = buffer;
      launch.outputs.push_back(buffer);
      continue;
    }
    if (!type.isa<mlir::RankedTensorType>())
      return op->emitError()
             << "plan lowering: result type " << type << " cannot be stored";
    std::string name = launch.kernel + "." +
                       std::to_string(program_.launches.size()) + "." +
                       std::to_string(r.getResultNumber());
    auto buffer = tensorBuffer(op, r, BufferKind::Arena, name);
    if (mlir::failed(buffer))
      return mlir::failure();
    launch.outputs.push_back(*buffer);
  }
  // rope_kv_write<packed> rotates q and k inside the packed rows: when
  // nothing else reads its input's storage, the output is that same storage
  // (a view) and the backends skip the copy they would otherwise make
  // first. The storage is read elsewhere if the input, or any tensor it
  // views through split/merge heads, has another use. A returned output
  // keeps its own storage: outputs live outside the arena.
  auto soleReader = [](mlir::Value v) {
    while (v.hasOneUse()) {
      mlir::Operation *def = v.getDefiningOp();
      if (!def || !mlir::isa<SplitHeadsOp, MergeHeadsOp>(def))
        return true;
      v = def->getOperand(0);
    }
    return false;
  };
  auto returned = [](mlir::Value v) {
    return llvm::any_of(v.getUsers(), [](mlir::Operation *user) {
      return mlir::isa<mlir::func::ReturnOp>(user);
    });
  };
  if (launch.kernel == "rope_kv_write" && launch.variant == "packed" &&
      !launch.outputs.empty() && soleReader(op->getOperand(0)) &&
      !returned(op->getResult(0))) {
    int32_t input = launch.inputs[0];
    if (program_.buffers[input].kind == BufferKind::Arena) {
      int32_t base = program_.buffers[input].viewOf >= 0
                         ? program_.buffers[input].viewOf
                         : input;
      program_.buffers[launch.outputs[0]].viewOf = base;
    }
  }
  program_.launches.push_back(std::move(launch));
  return mlir::success();
}

mlir::LogicalResult ProgramLowering::schedule(mlir::func::FuncOp func,
                                              plan::Program &program) {
  const plan::Limits limits{options_.maxTokens, options_.maxBatch};
  std::vector<sched::LaunchNode> nodes = sched::launchNodes(program, limits);
  auto deps = sched::findDependencies(nodes);
  sched::ScheduleOptions scheduleOptions;
  scheduleOptions.maxStreams = options_.numStreams;
  sched::Schedule s = sched::scheduleLaunches(nodes, deps, scheduleOptions);

  const int numLaunches = static_cast<int>(program.launches.size());
  // Each size is within the model format's limits, but the step limits
  // multiply them again: at 2^24 tokens a model with 1024 heads of 1024
  // values has a q projection no plan may hold (plan::kMaxElements).
  static_assert(plan::kMaxElements == int64_t(1) << 42, "message says 2^42");
  for (const plan::Buffer &b : program.buffers)
    if (plan::boundedElements(b.shape, limits.maxTokens, limits.maxBatch) < 0)
      return func.emitError()
             << "plan lowering: buffer '" << b.name << "' of '"
             << func.getSymName() << "' would hold more than 2^42 values at "
             << limits.maxTokens << " tokens and " << limits.maxBatch
             << " sequences per step; compile with a smaller --max-tokens "
                "(and --max-batch)";
  std::vector<int32_t> requestBuffer;
  std::vector<sched::BufferRequest> requests =
      sched::arenaRequests(program, limits, requestBuffer);
  // Kept although the element bound above makes it unreachable for models
  // within the format's limits: IR given to the lowering directly has none.
  if (!sched::arenaWithoutReuse(requests)) {
    auto largest = std::max_element(
        requests.begin(), requests.end(),
        [](const auto &a, const auto &b) { return a.bytes < b.bytes; });
    return func.emitError()
           << "plan lowering: the transient buffers of '" << func.getSymName()
           << "' need more than 2^64 bytes at " << limits.maxTokens
           << " tokens and " << limits.maxBatch
           << " sequences per step (the largest, '" << largest->name
           << "', needs "
           << (largest->bytes == UINT64_MAX ? std::string("more than 2^64")
                                            : std::to_string(largest->bytes))
           << " bytes); the model is too large for these limits";
  }
  sched::MemoryPlan memory = sched::planMemory(requests, s, numLaunches);
  for (size_t r = 0; r < requests.size(); ++r)
    program.buffers[requestBuffer[r]].arenaOffset = memory.offsets[r];
  for (plan::Buffer &b : program.buffers)
    if (b.viewOf >= 0)
      b.arenaOffset = program.buffers[b.viewOf].arenaOffset;
  program.arenaBytes = memory.peakBytes;

  // Launches in issue order, each on its stream; events renumbered.
  std::vector<int32_t> issuePosition(numLaunches);
  std::vector<plan::Launch> ordered;
  for (int i = 0; i < numLaunches; ++i) {
    int l = s.issueOrder[i];
    issuePosition[l] = i;
    ordered.push_back(std::move(program.launches[l]));
    ordered.back().stream = s.stream[l];
  }
  program.launches = std::move(ordered);
  program.numStreams = static_cast<int32_t>(s.streams.size());
  for (const sched::Event &e : s.events)
    program.events.push_back({issuePosition[e.from], issuePosition[e.to]});
  return mlir::success();
}

mlir::FailureOr<plan::Program> ProgramLowering::lower(mlir::func::FuncOp func) {
  program_ = plan::Program();
  program_.phase = func.getSymName().str();
  for (mlir::BlockArgument arg : func.getArguments())
    if (mlir::failed(addArgument(arg)))
      return mlir::failure();
  for (mlir::Operation &op : func.getBody().front()) {
    if (mlir::isa<mlir::func::ReturnOp>(op)) {
      for (mlir::Value v : op.getOperands()) {
        int32_t b = bufferOf_.lookup(v);
        // Outputs live outside the arena, where views cannot follow.
        bool viewed = program_.buffers[b].viewOf >= 0;
        for (const Buffer &other : program_.buffers)
          viewed |= other.viewOf == b;
        if (viewed)
          return op.emitError() << "plan lowering: a returned value shares "
                                   "its storage with split or merged heads";
        if (program_.buffers[b].kind == BufferKind::Arena)
          program_.buffers[b].kind = BufferKind::Output;
      }
      continue;
    }
    if (op.getDialect() == nullptr ||
        op.getDialect()->getNamespace() != "strata")
      return op.emitError() << "plan lowering: only strata ops can be "
                               "lowered, got "
                            << op.getName();
    mlir::LogicalResult r = mlir::isa<WeightOp, ConcatWeightsOp>(op)
                                ? addWeight(&op)
                                : addLaunch(&op);
    if (mlir::failed(r))
      return mlir::failure();
  }
  if (mlir::failed(schedule(func, program_)))
    return mlir::failure();
  return std::move(program_);
}

} // namespace

mlir::FailureOr<plan::Plan> lowerToPlan(mlir::ModuleOp module,
                                        const PlanLoweringOptions &options) {
  plan::Plan result;
  if (auto name = module->getAttrOfType<mlir::StringAttr>("strata.model_name"))
    result.modelName = name.str();
  // Random weights are part of the model: without its seed and scale a
  // plan could not reproduce them.
  auto seed = module->getAttrOfType<mlir::IntegerAttr>("strata.seed");
  auto initStd = module->getAttrOfType<mlir::FloatAttr>("strata.init_std");
  if (!seed || !initStd)
    return module->emitError()
           << "plan lowering: the module needs the strata.seed and "
              "strata.init_std attributes of its weights";
  result.weightSeed = seed.getValue().getZExtValue();
  result.weightInitStd = initStd.getValueAsDouble();
  // The positions a sequence may reach: the runtime refuses longer ones.
  auto maxPositions =
      module->getAttrOfType<mlir::IntegerAttr>("strata.max_positions");
  if (!maxPositions)
    return module->emitError() << "plan lowering: the module needs the "
                                  "strata.max_positions attribute (the "
                                  "model's max_position_embeddings)";
  result.maxPositions = maxPositions.getInt();
  result.limits = {options.maxTokens, options.maxBatch};
  llvm::StringMap<int32_t> weightIndex;
  for (auto func : module.getOps<mlir::func::FuncOp>()) {
    ProgramLowering lowering(result, options, weightIndex);
    auto program = lowering.lower(func);
    if (mlir::failed(program))
      return mlir::failure();
    for (mlir::Type t : func.getResultTypes())
      if (auto logits = t.dyn_cast<mlir::RankedTensorType>();
          logits && logits.getRank() == 2 && logits.getElementType().isF32())
        result.vocabSize = logits.getDimSize(1);
    result.programs.push_back(std::move(*program));
  }
  if (result.programs.empty())
    return module->emitError() << "plan lowering: the module has no function";
  if (std::string invalid = plan::validatePlan(result); !invalid.empty())
    return module->emitError()
           << "plan lowering produced an invalid plan: " << invalid;
  return result;
}

} // namespace strata
