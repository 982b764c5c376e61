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

plan::RopePairing toPlan(RopePairingKind k) {
  switch (k) {
  case RopePairingKind::Neox:
    return plan::RopePairing::Neox;
  case RopePairingKind::GptJ:
    return plan::RopePairing::GptJ;
  }
  llvm_unreachable("every rope pairing is handled");
}

plan::RopeScaling toPlan(RopeScalingKind k) {
  switch (k) {
  case RopeScalingKind::None:
    return plan::RopeScaling::None;
  case RopeScalingKind::Linear:
    return plan::RopeScaling::Linear;
  case RopeScalingKind::Llama3:
    return plan::RopeScaling::Llama3;
  }
  llvm_unreachable("every rope scaling is handled");
}

plan::RopeKvVariant toPlan(RopeVariant v) {
  switch (v) {
  case RopeVariant::Packed:
    return plan::RopeKvVariant::Packed;
  case RopeVariant::Continuous:
    return plan::RopeKvVariant::Continuous;
  case RopeVariant::Tree:
    return plan::RopeKvVariant::Tree;
  }
  llvm_unreachable("every rope_kv_write variant is handled");
}

double toDouble(const llvm::APFloat &v) { return v.convertToDouble(); }

/// The rotary parameters of a rope or rope_kv_write op. The ODS defaults of
/// the scaling attributes arrive through the accessors.
template <typename Op> plan::RotaryParams rotaryOf(Op op) {
  plan::RotaryParams r;
  r.rotaryDim = int64_t(op.getRotaryDim());
  r.theta = toDouble(op.getTheta());
  r.pairing = toPlan(op.getPairing());
  r.scaling = toPlan(op.getScaling());
  r.scalingFactor = toDouble(op.getScalingFactor());
  r.lowFreqFactor = toDouble(op.getLowFreqFactor());
  r.highFreqFactor = toDouble(op.getHighFreqFactor());
  r.originalMaxPositions = int64_t(op.getOriginalMaxPositions());
  return r;
}

std::vector<double> toVector(llvm::ArrayRef<double> v) {
  return std::vector<double>(v.begin(), v.end());
}

/// The kernel and parameters of the launch an op becomes, read through the
/// ops' generated accessors: an attribute renamed in ODS is a compile error
/// here, and the one place where optional attributes get their values when
/// absent. An op that is no kernel (weights, sampling) is an error.
mlir::FailureOr<plan::KernelParams> launchParams(mlir::Operation *op) {
  using Result = mlir::FailureOr<plan::KernelParams>;
  return llvm::TypeSwitch<mlir::Operation *, Result>(op)
      .Case([](EmbeddingOp) { return plan::EmbeddingParams{}; })
      .Case([](RMSNormOp o) {
        plan::RmsNormParams p;
        p.eps = toDouble(o.getEps());
        return p;
      })
      .Case([](HeadNormOp o) {
        plan::HeadNormParams p;
        p.eps = toDouble(o.getEps());
        return p;
      })
      .Case([](AddRMSNormOp o) {
        plan::AddRmsNormParams p;
        p.eps = toDouble(o.getEps());
        // An absent scale keeps its operand as it is.
        p.xScale = o.getXScale() ? toDouble(*o.getXScale()) : 1.0;
        p.residualScale =
            o.getResidualScale() ? toDouble(*o.getResidualScale()) : 1.0;
        return p;
      })
      .Case([](LinearOp) { return plan::LinearParams{}; })
      .Case([](SplitHeadsOp) { return plan::SplitHeadsParams{}; })
      .Case([](MergeHeadsOp) { return plan::MergeHeadsParams{}; })
      .Case([](HeadSliceOp o) {
        plan::HeadSliceParams p;
        p.first = int64_t(o.getFirst());
        p.numHeads = int64_t(o.getNumHeads());
        return p;
      })
      .Case([](SiluMulOp) { return plan::SiluMulParams{}; })
      .Case([](SiluOp) { return plan::SiluParams{}; })
      .Case([](SigmoidMulOp) { return plan::SigmoidMulParams{}; })
      .Case([](AddOp o) {
        plan::AddParams p;
        p.lhsScale = o.getLhsScale() ? toDouble(*o.getLhsScale()) : 1.0;
        p.rhsScale = o.getRhsScale() ? toDouble(*o.getRhsScale()) : 1.0;
        return p;
      })
      .Case([](SwiGLUOp) { return plan::SwigluParams{}; })
      .Case([](RopeOp o) {
        plan::RopeParams p;
        p.rotary = rotaryOf(o);
        return p;
      })
      .Case([](KVAppendOp o) {
        plan::KvAppendParams p;
        p.layer = int64_t(o.getLayer());
        return p;
      })
      .Case([](AttentionOp o) -> Result {
        switch (o.getKind()) {
        case AttentionKind::Softmax: {
          plan::AttentionParams p;
          p.layer = int64_t(o.getLayer());
          if (!o.getScale())
            return o.emitError()
                   << "plan lowering: softmax attention needs a scale";
          p.scale = toDouble(*o.getScale());
          p.causal = o.getCausal();
          p.slidingWindow =
              o.getSlidingWindow() ? int64_t(*o.getSlidingWindow()) : 0;
          return plan::KernelParams(p);
        }
        case AttentionKind::Linear: {
          plan::LinearAttentionParams p;
          p.layer = int64_t(o.getLayer());
          if (!o.getDecaySlopes())
            return o.emitError()
                   << "plan lowering: linear attention needs decay_slopes";
          p.decaySlopes = toVector(*o.getDecaySlopes());
          return plan::KernelParams(p);
        }
        }
        llvm_unreachable("every attention kind is handled");
      })
      .Case([](RopeKVWriteOp o) {
        plan::RopeKvWriteParams p;
        p.variant = toPlan(o.getVariant());
        p.layer = int64_t(o.getLayer());
        p.numQHeads = int64_t(o.getNumQHeads());
        p.numKvHeads = int64_t(o.getNumKvHeads());
        p.rotary = rotaryOf(o);
        // The verifier allows an epsilon exactly when the norm weights are
        // there; without them the plan says 0.
        p.qkNormEps = o.getQkNormEps() ? toDouble(*o.getQkNormEps()) : 0.0;
        return p;
      })
      .Case([](PrefillAttentionOp o) {
        plan::PrefillAttentionParams p;
        p.numQHeads = int64_t(o.getNumQHeads());
        p.numKvHeads = int64_t(o.getNumKvHeads());
        p.scale = toDouble(o.getScale());
        p.slidingWindow = int64_t(o.getSlidingWindow());
        return p;
      })
      .Case([](ExtendAttentionOp o) {
        plan::ExtendAttentionParams p;
        p.layer = int64_t(o.getLayer());
        p.scale = toDouble(o.getScale());
        p.slidingWindow = int64_t(o.getSlidingWindow());
        return p;
      })
      .Case([](PagedDecodeAttentionOp o) {
        plan::PagedDecodeAttentionParams p;
        p.layer = int64_t(o.getLayer());
        p.scale = toDouble(o.getScale());
        p.slidingWindow = int64_t(o.getSlidingWindow());
        p.maxSplits = int64_t(o.getMaxSplits());
        return p;
      })
      .Case([](TreeAttentionOp o) {
        plan::TreeAttentionParams p;
        p.layer = int64_t(o.getLayer());
        p.scale = toDouble(o.getScale());
        p.slidingWindow = int64_t(o.getSlidingWindow());
        return p;
      })
      .Case([](LightningPrefillOp o) {
        plan::LightningPrefillParams p;
        p.layer = int64_t(o.getLayer());
        p.decaySlopes = toVector(o.getDecaySlopes());
        p.chunkSize = int64_t(o.getChunkSize());
        return p;
      })
      .Case([](LightningDecodeOp o) {
        plan::LightningDecodeParams p;
        p.layer = int64_t(o.getLayer());
        p.decaySlopes = toVector(o.getDecaySlopes());
        return p;
      })
      .Case([](LogitsOp o) {
        plan::LogitsParams p;
        p.allTokens = o.getAllTokens();
        return p;
      })
      .Default([](mlir::Operation *other) -> Result {
        return other->emitError()
               << "plan lowering: no kernel runs " << other->getName();
      });
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
    b.role = plan::InputRole::Sequences;
  } else if (type.isa<mlir::RankedTensorType>()) {
    auto index = tensorBuffer(arg.getOwner()->getParentOp(), arg,
                              BufferKind::Input, name);
    if (mlir::failed(index))
      return mlir::failure();
    // Every phase function takes the token ids and the positions first
    // (ir/ModelBuilder.cpp); the only other per-token input is the verify
    // function's draft tree.
    program_.buffers[*index].role =
        arg.getArgNumber() == 0   ? plan::InputRole::TokenIds
        : arg.getArgNumber() == 1 ? plan::InputRole::Positions
                                  : plan::InputRole::ParentIds;
    return mlir::success();
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
  auto params = launchParams(op);
  if (mlir::failed(params))
    return mlir::failure();
  launch.params = std::move(*params);

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
    std::string name = op->getName().stripDialect().str() + "." +
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
  auto write = mlir::dyn_cast<RopeKVWriteOp>(op);
  if (write && write.getVariant() == RopeVariant::Packed &&
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
