// GemmRunner: the cuBLASLt path, and the dispatch to the GEMV when asked.
//
// A plan is everything cuBLASLt needs that depends only on the shape: the
// matmul descriptor (transposes, epilogue), the four matrix layouts and the
// algorithm the heuristic picked for this runner's workspace. Building one
// costs tens of microseconds of host time, so it happens once per shape;
// per call only the bias pointer changes. The operand alignment is part of
// the key because the heuristic may only pick kernels whose vector width
// the pointers allow.
#include "kernels/gemm/Gemm.h"

#include "kernels/common/CudaCheck.h"

#include <cublasLt.h>

#include <map>
#include <mutex>
#include <string>
#include <tuple>

namespace strata::kernels {

namespace {

Status ltStatus(cublasStatus_t st, const char *what) {
  if (st == CUBLAS_STATUS_SUCCESS)
    return Status::success();
  return Status::error(std::string("gemm: ") + what + ": " +
                       cublasLtGetStatusString(st));
}

#define LT_RETURN_IF_ERROR(expr, what)                                         \
  do {                                                                         \
    if (Status s_ = ltStatus((expr), (what)); !s_)                             \
      return s_;                                                               \
  } while (0)

struct PlanKey {
  int64_t m, n, k;
  ActDType dtype;
  bool f32Out, bias, residual;
  int align;
  bool operator<(const PlanKey &o) const {
    return std::tie(m, n, k, dtype, f32Out, bias, residual, align) <
           std::tie(o.m, o.n, o.k, o.dtype, o.f32Out, o.bias, o.residual,
                    o.align);
  }
};

struct Plan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr, d = nullptr;
  cublasLtMatmulAlgo_t algo{};
  ~Plan() {
    if (desc)
      cublasLtMatmulDescDestroy(desc);
    for (cublasLtMatrixLayout_t l : {a, b, c, d})
      if (l)
        cublasLtMatrixLayoutDestroy(l);
  }
};

/// Largest power of two up to 256 dividing every address.
int commonAlignment(std::initializer_list<const void *> ptrs) {
  uintptr_t bits = 256;
  for (const void *p : ptrs)
    if (p)
      bits |= reinterpret_cast<uintptr_t>(p);
  return int(bits & (~bits + 1));
}

} // namespace

struct GemmRunner::Impl {
  cublasLtHandle_t handle = nullptr;
  void *workspace = nullptr;
  size_t workspaceBytes = 0;
  std::mutex mutex;
  std::map<PlanKey, std::unique_ptr<Plan>> plans;

  ~Impl() {
    plans.clear();
    if (workspace)
      cudaFree(workspace);
    if (handle)
      cublasLtDestroy(handle);
  }

  Status buildPlan(const PlanKey &key, std::unique_ptr<Plan> &out);
  Status run(const GemmArgs &args, cudaStream_t stream);
};

Status GemmRunner::Impl::buildPlan(const PlanKey &key,
                                   std::unique_ptr<Plan> &out) {
  auto plan = std::make_unique<Plan>();
  cudaDataType_t act = key.dtype == ActDType::BF16 ? CUDA_R_16BF : CUDA_R_16F;
  cudaDataType_t dType = key.f32Out ? CUDA_R_32F : act;
  LT_RETURN_IF_ERROR(
      cublasLtMatmulDescCreate(&plan->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F),
      "matmul descriptor");
  cublasOperation_t opT = CUBLAS_OP_T, opN = CUBLAS_OP_N;
  LT_RETURN_IF_ERROR(cublasLtMatmulDescSetAttribute(plan->desc,
                                                    CUBLASLT_MATMUL_DESC_TRANSA,
                                                    &opT, sizeof(opT)),
                     "transa");
  LT_RETURN_IF_ERROR(cublasLtMatmulDescSetAttribute(plan->desc,
                                                    CUBLASLT_MATMUL_DESC_TRANSB,
                                                    &opN, sizeof(opN)),
                     "transb");
  if (key.bias) {
    cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_BIAS;
    LT_RETURN_IF_ERROR(
        cublasLtMatmulDescSetAttribute(
            plan->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof(epi)),
        "bias epilogue");
  }
  // Column-major view: A = w as [k, n] (ld k) transposed, B = x as [k, m]
  // (ld k), C and D = y^T as [n, m] (ld n).
  LT_RETURN_IF_ERROR(
      cublasLtMatrixLayoutCreate(&plan->a, act, key.k, key.n, key.k),
      "layout A");
  LT_RETURN_IF_ERROR(
      cublasLtMatrixLayoutCreate(&plan->b, act, key.k, key.m, key.k),
      "layout B");
  LT_RETURN_IF_ERROR(
      cublasLtMatrixLayoutCreate(&plan->c, dType, key.n, key.m, key.n),
      "layout C");
  LT_RETURN_IF_ERROR(
      cublasLtMatrixLayoutCreate(&plan->d, dType, key.n, key.m, key.n),
      "layout D");

  cublasLtMatmulPreference_t pref = nullptr;
  LT_RETURN_IF_ERROR(cublasLtMatmulPreferenceCreate(&pref), "preference");
  uint32_t align = uint32_t(key.align);
  cublasStatus_t st = cublasLtMatmulPreferenceSetAttribute(
      pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspaceBytes,
      sizeof(workspaceBytes));
  for (auto attr : {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
                    CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                    CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
                    CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
    if (st == CUBLAS_STATUS_SUCCESS)
      st = cublasLtMatmulPreferenceSetAttribute(pref, attr, &align,
                                                sizeof(align));
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  if (st == CUBLAS_STATUS_SUCCESS)
    st = cublasLtMatmulAlgoGetHeuristic(handle, plan->desc, plan->a, plan->b,
                                        plan->c, plan->d, pref, 1, &result,
                                        &found);
  cublasLtMatmulPreferenceDestroy(pref);
  LT_RETURN_IF_ERROR(st, "heuristic");
  if (found == 0)
    return Status::error(
        "gemm: cuBLASLt has no algorithm for m " + std::to_string(key.m) +
        ", n " + std::to_string(key.n) + ", k " + std::to_string(key.k));
  plan->algo = result.algo;
  out = std::move(plan);
  return Status::success();
}

Status GemmRunner::Impl::run(const GemmArgs &args, cudaStream_t stream) {
  PlanKey key{
      args.m,
      args.n,
      args.k,
      args.dtype,
      args.f32Out,
      args.bias != nullptr,
      args.residual != nullptr,
      commonAlignment({args.x, args.w, args.bias, args.residual, args.y})};
  std::lock_guard<std::mutex> lock(mutex);
  auto it = plans.find(key);
  if (it == plans.end()) {
    std::unique_ptr<Plan> plan;
    if (Status s = buildPlan(key, plan); !s)
      return s;
    it = plans.emplace(key, std::move(plan)).first;
  }
  Plan &plan = *it->second;
  if (args.bias)
    LT_RETURN_IF_ERROR(cublasLtMatmulDescSetAttribute(
                           plan.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                           &args.bias, sizeof(args.bias)),
                       "bias pointer");
  float alpha = 1.0f, beta = args.residual ? 1.0f : 0.0f;
  const void *c = args.residual ? args.residual : args.y;
  LT_RETURN_IF_ERROR(cublasLtMatmul(handle, plan.desc, &alpha, args.w, plan.a,
                                    args.x, plan.b, &beta, c, plan.c, args.y,
                                    plan.d, &plan.algo, workspace,
                                    workspaceBytes, stream),
                     "matmul");
  return Status::success();
}

GemmRunner::GemmRunner() = default;
GemmRunner::~GemmRunner() = default;

Status GemmRunner::init(size_t workspaceBytes) {
  if (impl_)
    return Status::error("gemm: runner initialised twice");
  auto impl = std::make_unique<Impl>();
  LT_RETURN_IF_ERROR(cublasLtCreate(&impl->handle), "create handle");
  if (workspaceBytes)
    STRATA_CUDA_RETURN_IF_ERROR(cudaMalloc(&impl->workspace, workspaceBytes),
                                "gemm: workspace");
  impl->workspaceBytes = workspaceBytes;
  impl_ = std::move(impl);
  return Status::success();
}

size_t GemmRunner::cachedPlans() const {
  if (!impl_)
    return 0;
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->plans.size();
}

Status checkGemmArgs(const GemmArgs &a) {
  if (Status s = requireDeviceActDType("gemm", a.dtype); !s)
    return s;
  if (a.m < 0 || a.n <= 0 || a.k <= 0)
    return Status::error("gemm: need m >= 0, n > 0, k > 0, got m " +
                         std::to_string(a.m) + ", n " + std::to_string(a.n) +
                         ", k " + std::to_string(a.k));
  if (a.m > 0x7fffffff || a.n > 0x7fffffff || a.k > 0x7fffffff)
    return Status::error("gemm: dimensions must be below 2^31");
  if (!a.x || !a.w || !a.y)
    return Status::error("gemm: null operand");
  if (a.f32Out && (a.bias || a.residual))
    return Status::error(
        "gemm: bias or residual with fp32 output is not supported");
  return Status::success();
}

Status GemmRunner::linear(const GemmArgs &args, cudaStream_t stream,
                          GemmPath path) {
  if (Status s = checkGemmArgs(args); !s)
    return s;
  if (args.m == 0)
    return Status::success();
  if (path == GemmPath::Gemv ||
      (path == GemmPath::Auto && smallMGemv_ && gemvSupports(args)))
    return gemvLinear(args, stream);
  if (!impl_)
    return Status::error("gemm: runner used before init()");
  return impl_->run(args, stream);
}

} // namespace strata::kernels
