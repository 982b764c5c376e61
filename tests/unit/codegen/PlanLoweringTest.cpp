// Lowering every model in models/ to a plan: the plan validates, survives
// the file round trip, and its schedule and arena honour every hazard, on
// one stream and on several.
#include "codegen/PlanLowering.h"
#include "codegen/ProgramGraph.h"
#include "ir/ModelBuilder.h"
#include "ir/StrataDialect.h"
#include "models/ModelImporter.h"
#include "runtime/plan/PlanFile.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <catch2/catch.hpp>

#include <filesystem>

namespace {

std::vector<std::string> modelFiles() {
  std::vector<std::string> files;
  for (const auto &entry :
       std::filesystem::directory_iterator(STRATA_SOURCE_DIR "/models"))
    if (entry.path().extension() == ".yaml")
      files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

strata::plan::Plan lower(const std::string &file, int streams) {
  strata::ImportResult imported = strata::importModelFile(file);
  REQUIRE(imported.ok);
  mlir::MLIRContext context;
  mlir::DialectRegistry registry;
  strata::registerStrataDialect(registry);
  context.appendDialectRegistry(registry);
  auto module = strata::buildForwardModule(context, imported.spec);
  REQUIRE(mlir::succeeded(module));
  strata::PlanLoweringOptions options;
  options.maxTokens = 512;
  options.maxBatch = 16;
  options.numStreams = streams;
  auto plan = strata::lowerToPlan(**module, options);
  REQUIRE(mlir::succeeded(plan));
  return *plan;
}

} // namespace

TEST_CASE("every model lowers to a plan whose schedule and arena are safe") {
  std::vector<std::string> files = modelFiles();
  REQUIRE(files.size() >= 8);
  for (const std::string &file : files)
    for (int streams : {1, 3}) {
      INFO(file << " on " << streams << " streams");
      strata::plan::Plan plan = lower(file, streams);
      REQUIRE(plan.programs.size() == 1);
      const strata::plan::Program &p = plan.programs[0];
      CHECK(strata::plan::validatePlan(plan).empty());
      CHECK(strata::sched::checkProgram(p, plan.limits).empty());
      CHECK(p.numStreams >= 1);
      CHECK(p.numStreams <= streams);
      // Reuse: the arena is far smaller than all transient buffers together.
      uint64_t total = 0;
      std::vector<int32_t> ids;
      for (const auto &r : strata::sched::arenaRequests(p, plan.limits, ids))
        total += r.bytes;
      CHECK(p.arenaBytes < total / 4);
      CHECK(plan.vocabSize > 0);
      // The plan file round trip is exact.
      strata::plan::Plan back;
      std::string error;
      REQUIRE(strata::plan::deserializePlan(strata::plan::serializePlan(plan),
                                            "x", back, error));
      CHECK(back == plan);
    }
}

TEST_CASE("a hybrid model's plan records its cache, state and weights") {
  strata::plan::Plan plan =
      lower(STRATA_SOURCE_DIR "/models/tiny-minimax.yaml", 2);
  CHECK(plan.modelName == "tiny-minimax");
  CHECK(plan.weightSeed == 5);
  CHECK(plan.kvCache.layers == 1);
  CHECK(plan.kvCache.blockSize == 16);
  CHECK(plan.linearState.layers == 3);
  CHECK(plan.linearState.heads == 8);
  const strata::plan::Program &p = plan.programs[0];
  int linear = 0, softmax = 0;
  for (const auto &l : p.launches)
    if (l.kernel() == strata::plan::Kernel::LinearAttention)
      ++linear;
    else if (l.kernel() == strata::plan::Kernel::Attention)
      ++softmax;
  CHECK(linear == 3);
  CHECK(softmax == 1);
  // An untied model has its lm_head among the weights, once.
  int heads = 0;
  for (const auto &w : plan.weights)
    heads += w.name == "lm_head.weight";
  CHECK(heads == 1);
}

TEST_CASE("the checker catches a plan whose events were dropped") {
  strata::plan::Plan plan =
      lower(STRATA_SOURCE_DIR "/models/tiny-minimax.yaml", 3);
  strata::plan::Program &p = plan.programs[0];
  REQUIRE(p.numStreams > 1);
  REQUIRE_FALSE(p.events.empty());
  p.events.clear();
  CHECK_THAT(strata::sched::checkProgram(p, plan.limits),
             Catch::Matchers::Contains("is not ordered by the streams"));
}

TEST_CASE("a view and its base are one storage for hazards and lifetimes") {
  using namespace strata::plan;
  // #0 writes base, #1 writes other, #2 reads the view of base: #2 must
  // follow #0 through the view, and base lives until #2.
  Program p;
  p.phase = "decode";
  Buffer base{"base", BufferKind::Arena, DType::BF16,
              {Dim::tokens(), Dim::constant(64)}, 0, -1};
  Buffer other{"other", BufferKind::Arena, DType::BF16,
               {Dim::tokens(), Dim::constant(64)}, 0, -1};
  Buffer view{"view", BufferKind::Arena, DType::BF16,
              {Dim::tokens(), Dim::constant(2), Dim::constant(32)}, 0, -1};
  view.viewOf = 0;
  Buffer out{"out", BufferKind::Arena, DType::BF16,
             {Dim::tokens(), Dim::constant(64)}, 0, -1};
  p.buffers = {base, other, view, out};
  // Kernels chosen for their operand lists only: the dependencies follow
  // the buffers.
  p.launches = {{strata::plan::EmbeddingParams{}, {}, {0}, 0},
                {strata::plan::EmbeddingParams{}, {}, {1}, 0},
                {strata::plan::AddParams{}, {2, 1}, {3}, 0}};
  const Limits limits{16, 4};
  auto deps =
      strata::sched::findDependencies(strata::sched::launchNodes(p, limits));
  bool ordered = false;
  for (const auto &d : deps)
    ordered |= d.from == 0 && d.to == 2;
  CHECK(ordered);
  std::vector<int32_t> ids;
  auto requests = strata::sched::arenaRequests(p, limits, ids);
  // The view makes no request of its own; base's users include #2.
  REQUIRE(requests.size() == 3);
  CHECK(ids == std::vector<int32_t>{0, 1, 3});
  CHECK(requests[0].users == std::vector<int>{0, 2});
}

namespace {

/// A prefill function whose packed rope reads the heads of %qkv (a view)
/// and whose result is read by an add. `extraUse`: a second add also reads
/// %qkv, the storage behind that view. `returnRope`: the function returns
/// the rope's result itself beside the logits.
strata::plan::Plan lowerPackedRope(bool extraUse, bool returnRope = false) {
  const std::string kv = "!strata.kv_cache<1, 2, 32, 16, bf16>";
  std::string results = "tensor<?x512xf32>" +
                        std::string(returnRope ? ", tensor<?x8x32xbf16>" : "");
  std::string text =
      "module attributes {strata.seed = 1 : i64, strata.init_std = 0.02 : "
      "f64, strata.max_positions = 2048 : i64} {\n"
      "func.func @prefill(%ids: tensor<?xi32>, %pos: tensor<?xi32>, "
      "%c0: " + kv + ", %seqs: !strata.seqs) -> (" + results + ") {\n"
      "  %w = strata.weight \"embed\" : tensor<512x256xbf16>\n"
      "  %x = strata.embedding %ids, %w : tensor<?xi32>, "
      "tensor<512x256xbf16> -> tensor<?x256xbf16>\n"
      "  %qkv = strata.add %x, %x : tensor<?x256xbf16>\n"
      "  %h = strata.split_heads %qkv {num_heads = 8 : i64} : "
      "tensor<?x256xbf16> -> tensor<?x8x32xbf16>\n"
      "  %r, %c1 = strata.rope_kv_write packed %h, %pos, %c0, %seqs "
      "pairing neox scaling none {layer = 0 : i64, num_kv_heads = 2 : i64, "
      "num_q_heads = 4 : i64, rotary_dim = 32 : i64, theta = 1.0e+04 : f64} "
      ": tensor<?x8x32xbf16>, tensor<?xi32>, " + kv +
      " -> tensor<?x8x32xbf16>, " + kv + "\n";
  if (returnRope) {
    text += "  %l = strata.logits %x, %w, %seqs : tensor<?x256xbf16>, "
            "tensor<512x256xbf16> -> tensor<?x512xf32>\n"
            "  return %l, %r : " + results + "\n}\n}\n";
  } else {
    text += "  %m = strata.merge_heads %r : tensor<?x8x32xbf16> -> "
            "tensor<?x256xbf16>\n"
            "  %o = strata.add %m, %m : tensor<?x256xbf16>\n";
    std::string last = "%o";
    if (extraUse) {
      text += "  %z = strata.add %qkv, %qkv : tensor<?x256xbf16>\n"
              "  %s = strata.add %o, %z : tensor<?x256xbf16>\n";
      last = "%s";
    }
    text += "  %l = strata.logits " + last +
            ", %w, %seqs : tensor<?x256xbf16>, tensor<512x256xbf16> -> "
            "tensor<?x512xf32>\n"
            "  return %l : " + results + "\n}\n}\n";
  }
  mlir::MLIRContext context;
  mlir::DialectRegistry registry;
  strata::registerStrataDialect(registry);
  registry.insert<mlir::func::FuncDialect>();
  context.appendDialectRegistry(registry);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(text, &context);
  REQUIRE(module);
  strata::PlanLoweringOptions options;
  options.maxTokens = 64;
  options.maxBatch = 2;
  auto plan = strata::lowerToPlan(*module, options);
  REQUIRE(mlir::succeeded(plan));
  return *plan;
}

/// The rope launch's output buffer of the plan's one program.
const strata::plan::Buffer &ropeOutput(const strata::plan::Plan &plan) {
  const strata::plan::Program &p = plan.programs[0];
  for (const strata::plan::Launch &l : p.launches)
    if (l.kernel() == strata::plan::Kernel::RopeKvWrite)
      return p.buffers[l.outputs[0]];
  FAIL("no rope_kv_write launch");
  return p.buffers[0];
}

} // namespace

TEST_CASE("a packed rope writes over its input only when nothing else reads "
          "it") {
  strata::plan::Plan alone = lowerPackedRope(false);
  const strata::plan::Program &p = alone.programs[0];
  const strata::plan::Buffer &out = ropeOutput(alone);
  REQUIRE(out.viewOf >= 0);
  CHECK(p.buffers[out.viewOf].name.rfind("add.", 0) == 0);
  CHECK(out.arenaOffset == p.buffers[out.viewOf].arenaOffset);
  CHECK(strata::plan::validatePlan(alone).empty());
  CHECK(strata::sched::checkProgram(p, alone.limits).empty());

  // Read by another launch as well: rotating in place would change what
  // that launch reads.
  strata::plan::Plan shared = lowerPackedRope(true);
  CHECK(ropeOutput(shared).viewOf == -1);
  CHECK(strata::plan::validatePlan(shared).empty());

  // A returned rope output keeps storage of its own (outputs live outside
  // the arena), and the function still lowers.
  strata::plan::Plan returnedPlan = lowerPackedRope(false, true);
  CHECK(ropeOutput(returnedPlan).viewOf == -1);
  CHECK(strata::plan::validatePlan(returnedPlan).empty());
}
