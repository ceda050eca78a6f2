//===- CUDARuntime.cpp - Kernels and GEMMs of a step on the driver API ----===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// The functions that --amp-lower-to-cuda's host code calls: upstream's
// mgpu* interface (the names and signatures of MLIR's CudaRuntimeWrappers)
// on the CUDA driver API, the amp_gemm_* GEMM records on cuBLASLt, and the
// amp_conv_* convolution records on cuDNN's graph (backend) API.
//
// - The driver is dlopen'ed on the first step, so that a step library loads
//   (and fails with one message) where there is none.
// - A kernel module is loaded from its fatbin on its first launch, and
//   stays loaded; every kernel runs on one stream, the legacy default
//   stream, which orders it after the caller's own work on that stream
//   (PyTorch's default stream, for one).
// - The first failure of a step is kept, with the step's and the kernel's
//   names; after it the step's remaining launches and GEMMs are skipped, and
//   a failed allocation hands out host memory, so the host code runs to its
//   end without touching the GPU again.
// - cuDNN is dlopen'ed by the first convolution record, so that a step
//   without one needs no cuDNN. Each record gets one execution plan, from
//   cuDNN's heuristics, without TF32 tensor cores for f32 (unless
//   AMP_CUDA_TF32=1, as for GEMMs) and without engines that convert the
//   inputs down.
// - A step's device buffers come from a cache: a freed buffer is kept for
//   the next allocation of its size (cuMemFree would wait for the whole
//   device, after every kernel that used a temporary). Reuse is safe in
//   stream order, since every kernel and GEMM runs on the one stream.
// - With AMP_CUDA_GRAPH=1, the one stream is the runtime's own (after the
//   legacy default stream's work), and a step is captured in a CUDA graph
//   the second time it runs with the same input and output pointers, then
//   replayed: the first run loads the modules, builds the plans and puts
//   the host code's constants on the device, so that the capture sees
//   only launches, library calls and device copies. A capture that fails
//   (the host waits or reads the device, a library call that cannot be
//   captured) is refused for good, and the step runs again uncaptured.
//
//===----------------------------------------------------------------------===//

#include "amp/Runtime/CUDARuntime.h"
#include "amp/Runtime/ConvRecord.h"
#include "amp/Runtime/ElementBits.h"
#include "amp/Runtime/GemmRecord.h"
#include "amp/Runtime/RecordMemRef.h"

#include "mlir/ExecutionEngine/CRunnerUtils.h"

#include <cublasLt.h>
#include <cuda.h>
#include <dlfcn.h>
#ifdef AMP_CUDNN_LIBRARY
#include <cudnn_graph.h>
#endif

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

using namespace mlir::amp::runtime;

namespace {

// The driver's entry points, by the names cuda.h maps them to (cuMemAlloc
// is cuMemAlloc_v2).
#define AMP_STRINGIFY_NAME(name) #name
#define AMP_DRIVER_NAME(name) AMP_STRINGIFY_NAME(name)
#define AMP_DRIVER_FUNCTIONS(X)                                                \
  X(cuInit)                                                                    \
  X(cuDriverGetVersion)                                                        \
  X(cuDeviceGetCount)                                                          \
  X(cuDeviceGet)                                                               \
  X(cuDevicePrimaryCtxRetain)                                                  \
  X(cuCtxGetCurrent)                                                           \
  X(cuCtxSetCurrent)                                                           \
  X(cuCtxGetDevice)                                                            \
  X(cuGetErrorName)                                                            \
  X(cuGetErrorString)                                                          \
  X(cuModuleLoadData)                                                          \
  X(cuModuleGetFunction)                                                       \
  X(cuLaunchKernel)                                                            \
  X(cuStreamCreate)                                                            \
  X(cuStreamSynchronize)                                                       \
  X(cuStreamWaitEvent)                                                         \
  X(cuStreamBeginCapture)                                                      \
  X(cuStreamEndCapture)                                                        \
  X(cuGraphInstantiate)                                                        \
  X(cuGraphLaunch)                                                             \
  X(cuGraphDestroy)                                                            \
  X(cuGraphExecDestroy)                                                        \
  X(cuPointerGetAttribute)                                                     \
  X(cuEventCreate)                                                             \
  X(cuEventDestroy)                                                            \
  X(cuEventSynchronize)                                                        \
  X(cuEventRecord)                                                             \
  X(cuMemAlloc)                                                                \
  X(cuMemAllocManaged)                                                         \
  X(cuMemFree)                                                                 \
  X(cuMemcpyAsync)                                                             \
  X(cuMemcpyHtoD)                                                              \
  X(cuMemsetD32Async)                                                          \
  X(cuMemsetD16Async)

struct Driver {
#define AMP_DRIVER_POINTER(name) decltype(&name) name = nullptr;
  AMP_DRIVER_FUNCTIONS(AMP_DRIVER_POINTER)
#undef AMP_DRIVER_POINTER
};

#ifdef AMP_CUDNN_LIBRARY
// cuDNN's entry points that the convolution records use.
#define AMP_DNN_FUNCTIONS(X)                                                   \
  X(cudnnGetErrorString)                                                       \
  X(cudnnCreate)                                                               \
  X(cudnnSetStream)                                                            \
  X(cudnnBackendCreateDescriptor)                                              \
  X(cudnnBackendDestroyDescriptor)                                             \
  X(cudnnBackendFinalize)                                                      \
  X(cudnnBackendSetAttribute)                                                  \
  X(cudnnBackendGetAttribute)                                                  \
  X(cudnnBackendExecute)

struct DNN {
#define AMP_DNN_POINTER(name) decltype(&name) name = nullptr;
  AMP_DNN_FUNCTIONS(AMP_DNN_POINTER)
#undef AMP_DNN_POINTER
};

/// One convolution record's cuDNN execution plan, reused while the record
/// and its operands' alignment are the same; owns every descriptor made
/// for it.
struct ConvPlan {
  int64_t fields[kConvRecordFields] = {};
  int64_t alignment = 0;
  cudnnBackendDescriptor_t plan = nullptr;
  int64_t workspaceBytes = 0;
  std::vector<cudnnBackendDescriptor_t> descriptors;
  decltype(&cudnnBackendDestroyDescriptor) destroy = nullptr;

  ~ConvPlan() {
    for (cudnnBackendDescriptor_t descriptor : descriptors)
      destroy(descriptor);
  }
};
#endif

/// cuBLASLt's workspace, as cuBLASLt's documentation recommends for Hopper.
constexpr size_t kGemmWorkspaceBytes = 32 << 20;

/// A kernel module: its fatbin, loaded on first use.
struct Module {
  Module(const void *image, unsigned ordinal)
      : image(image), ordinal(ordinal) {}
  const void *image;
  unsigned ordinal;
  CUmodule module = nullptr;
  std::map<std::string, struct Kernel *> kernels;
};

/// A kernel of a module, as the host code holds it.
struct Kernel {
  Module *module;
  std::string name;
  CUfunction function = nullptr;
};

/// One GEMM record's cuBLASLt plan, reused while the record is the same.
struct GemmPlan {
  int64_t fields[kGemmRecordFields] = {};
  cublasLtMatmulDesc_t operation = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulAlgo_t algorithm = {};
  bool isDouble = false;
  /// FP8 operands, with scale pointers set per call.
  bool isFP8 = false;
  /// The record's bias epilogue (GemmBiasEpilogue), with the bias pointer
  /// set per call.
  int64_t biasEpilogue = kGemmNoBias;
  /// An activation with an aux matrix (GELU's input) or a ReLU bit mask,
  /// with the aux pointer set per call.
  bool hasAux = false;
  /// A bias gradient that cuBLASLt has no algorithm with the epilogue for:
  /// the GEMM runs without it, then `onesRecord`, a GEMM with a vector of
  /// ones, sums op(A)'s rows or op(B)'s columns into the gradient.
  bool gradientByOnes = false;
  int64_t onesRecord[kGemmRecordFields] = {};

  ~GemmPlan() {
    for (cublasLtMatrixLayout_t layout : {a, b, d})
      if (layout)
        cublasLtMatrixLayoutDestroy(layout);
    if (operation)
      cublasLtMatmulDescDestroy(operation);
  }
};

/// A step's CUDA graph for one set of input and output pointers
/// (AMP_CUDA_GRAPH=1): captured on the second call with them, replayed
/// from the third.
struct StepGraph {
  std::vector<const void *> pointers;
  /// A call with these pointers ran to its end uncaptured: kernels are
  /// loaded, plans built, constants on the device, buffers cached.
  bool warm = false;
  /// The capture failed once; these pointers run uncaptured.
  bool refused = false;
  CUgraphExec graph = nullptr;
  uint64_t lastUse = 0;
};

/// What one step name did with CUDA graphs, for amp_cuda_graph_report.
struct StepGraphs {
  std::vector<StepGraph> graphs;
  int64_t captures = 0, replays = 0;
  std::string refusal;
};

/// At most this many graphs per step name (a training loop that swaps
/// inputs and outputs needs two); the least recently used goes.
constexpr size_t kGraphsPerStep = 4;

/// A host array that the host code copies to the device (a constant), kept
/// on the device in graph mode: a capture copies from device to device.
struct DeviceConstant {
  CUdeviceptr copy = 0;
  std::vector<char> bytes;
};

/// The runtime's state; every step holds `stepLock`.
struct Runtime {
  std::recursive_mutex stepLock;
  void *library = nullptr;
  Driver driver;
  /// Why the GPU cannot be used at all, once set up ("" when it can).
  std::string setupError;
  bool setUp = false;
  CUcontext context = nullptr;
  cublasLtHandle_t blas = nullptr;
  CUdeviceptr workspace = 0;

  std::string step;
  std::string error;
  std::set<void *> hostFallbacks;
  /// The cache of device buffers: free ones by size, and the size of each
  /// buffer handed out.
  std::map<uint64_t, std::vector<CUdeviceptr>> freeBuffers;
  std::map<CUdeviceptr, uint64_t> bufferSizes;
  std::map<const int64_t *, std::unique_ptr<GemmPlan>> gemmPlans;
  /// Vectors of ones by GEMM data type, and their lengths (getOnes).
  std::map<int64_t, std::pair<CUdeviceptr, int64_t>> ones;
#ifdef AMP_CUDNN_LIBRARY
  /// cuDNN, loaded by the first convolution record; why it cannot be used,
  /// once set up ("" when it can).
  DNN dnn;
  bool dnnSetUp = false;
  std::string dnnSetupError;
  cudnnHandle_t dnnHandle = nullptr;
  CUdeviceptr dnnWorkspace = 0;
  int64_t dnnWorkspaceBytes = 0;
  std::map<const int64_t *, std::unique_ptr<ConvPlan>> convPlans;
#endif
  std::vector<std::unique_ptr<Module>> modules;
  std::vector<std::unique_ptr<Kernel>> kernels;

  /// Graph mode (AMP_CUDA_GRAPH=1): every step runs on `stream`, the
  /// runtime's own non-blocking stream, ordered after the legacy default
  /// stream's work by `legacyDone`; otherwise `stream` is the legacy
  /// default stream (null).
  bool graphMode = false;
  CUstream stream = nullptr;
  CUevent legacyDone = nullptr;
  std::map<std::string, StepGraphs> stepGraphs;
  /// The graph of the step's pointers, while the step runs, and the graph
  /// being captured, while the host code runs into it.
  StepGraph *current = nullptr;
  StepGraph *capture = nullptr;
  uint64_t graphUses = 0;
  std::map<std::pair<const void *, size_t>, DeviceConstant> constants;
  /// Buffers the host code freed to the driver during a capture.
  std::vector<CUdeviceptr> deferredFrees;

  bool failed() const { return !setupError.empty() || !error.empty(); }

  /// Keeps the step's first error.
  void fail(const std::string &message) {
    if (error.empty())
      error = (step.empty() ? "" : "step '" + step + "': ") + message;
  }

  /// `what` failed with `result`, in words.
  std::string describe(CUresult result, const std::string &what) {
    const char *name = nullptr, *description = nullptr;
    if (driver.cuGetErrorName)
      driver.cuGetErrorName(result, &name);
    if (driver.cuGetErrorString)
      driver.cuGetErrorString(result, &description);
    if (!name && result == CUDA_ERROR_STUB_LIBRARY)
      name = "CUDA_ERROR_STUB_LIBRARY (the toolkit's stub, not a driver)";
    return what + ": " +
           (name ? std::string(name) : "CUresult " + std::to_string(result)) +
           (description ? " (" + std::string(description) + ")" : "");
  }

  /// `what` as text: a string, or a callable that spells it, so that the
  /// calls a step makes many times build their message only on failure.
  template <typename What>
  static std::string spell(const What &what) {
    if constexpr (std::is_invocable_v<const What &>)
      return what();
    else
      return std::string(what);
  }

  /// Whether `result` is CUDA_SUCCESS; else fails with `what`.
  template <typename What>
  bool check(CUresult result, const What &what) {
    if (result == CUDA_SUCCESS)
      return true;
    fail(describe(result, spell(what)));
    return false;
  }

  template <typename What>
  bool check(cublasStatus_t status, const What &what) {
    if (status == CUBLAS_STATUS_SUCCESS)
      return true;
    fail(spell(what) + ": cuBLASLt status " + std::to_string(int(status)));
    return false;
  }

#ifdef AMP_CUDNN_LIBRARY
  template <typename What>
  bool check(cudnnStatus_t status, const What &what) {
    if (status == CUDNN_STATUS_SUCCESS)
      return true;
    fail(spell(what) + ": " + dnn.cudnnGetErrorString(status));
    return false;
  }

  bool setUpDNNOnce();
#endif

  void setUpOnce();
  bool makeContextCurrent();
  bool dropGraphs(const char *why);
  CUfunction getFunction(Kernel &kernel);
};

Runtime &getRuntime() {
  static Runtime *runtime = new Runtime; // never destroyed: outlives users
  return *runtime;
}

/// Loads the driver and picks the device; on failure, `setupError` says why.
void Runtime::setUpOnce() {
  if (setUp)
    return;
  setUp = true;
  library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    setupError = std::string("no CUDA driver: ") + dlerror();
    return;
  }
#define AMP_DRIVER_LOAD(name)                                                  \
  driver.name = reinterpret_cast<decltype(&name)>(                             \
      dlsym(library, AMP_DRIVER_NAME(name)));                                  \
  if (!driver.name) {                                                          \
    setupError = "the CUDA driver has no " AMP_DRIVER_NAME(name);              \
    return;                                                                    \
  }
  AMP_DRIVER_FUNCTIONS(AMP_DRIVER_LOAD)
#undef AMP_DRIVER_LOAD
  // Until the context is current, failures are the setup's, not a step's.
  auto setUpCheck = [&](CUresult result, const char *what) {
    if (result != CUDA_SUCCESS)
      setupError = describe(result, what);
    return result == CUDA_SUCCESS;
  };
  int count = 0;
  if (!setUpCheck(driver.cuInit(0), "initializing the CUDA driver") ||
      !setUpCheck(driver.cuDeviceGetCount(&count), "counting CUDA devices"))
    return;
  if (count == 0) {
    setupError = "no CUDA device";
    return;
  }
  if (!setUpCheck(driver.cuCtxGetCurrent(&context), "getting the CUDA context"))
    return;
  if (!context) {
    const char *env = std::getenv("AMP_CUDA_DEVICE");
    int ordinal = env ? std::atoi(env) : 0;
    CUdevice device;
    if (ordinal < 0 || ordinal >= count) {
      setupError = "AMP_CUDA_DEVICE=" + std::string(env) + ": there are " +
                   std::to_string(count) + " CUDA devices";
      return;
    }
    if (!setUpCheck(driver.cuDeviceGet(&device, ordinal),
                    "getting the device") ||
        !setUpCheck(driver.cuDevicePrimaryCtxRetain(&context, device),
                    "creating the device's context"))
      return;
  }
  cublasStatus_t status = CUBLAS_STATUS_SUCCESS;
  if (!setUpCheck(driver.cuCtxSetCurrent(context),
                  "setting the CUDA context") ||
      !setUpCheck(driver.cuMemAlloc(&workspace, kGemmWorkspaceBytes),
                  "allocating cuBLASLt's workspace"))
    return;
  status = cublasLtCreate(&blas);
  if (status != CUBLAS_STATUS_SUCCESS) {
    setupError = "creating the cuBLASLt handle: cuBLASLt status " +
                 std::to_string(int(status));
    return;
  }
  const char *graphs = std::getenv("AMP_CUDA_GRAPH");
  graphMode = graphs && std::strcmp(graphs, "1") == 0;
  if (graphMode &&
      (!setUpCheck(driver.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING),
                   "creating the step's stream (AMP_CUDA_GRAPH=1)") ||
       !setUpCheck(driver.cuEventCreate(&legacyDone, CU_EVENT_DISABLE_TIMING),
                   "creating the step's event (AMP_CUDA_GRAPH=1)")))
    return;
}

/// Forgets every captured graph, before a buffer that graphs may hold goes
/// back to the driver; during a capture, fails it instead (the step then
/// runs again uncaptured).
bool Runtime::dropGraphs(const char *why) {
  if (capture) {
    fail(std::string("capturing a CUDA graph: ") + why);
    return false;
  }
  for (auto &[name, step] : stepGraphs)
    for (StepGraph &graph : step.graphs) {
      if (graph.graph)
        driver.cuGraphExecDestroy(graph.graph);
      graph.graph = nullptr;
      graph.warm = false;
    }
  return true;
}

bool Runtime::makeContextCurrent() {
  return check(driver.cuCtxSetCurrent(context), "setting the CUDA context");
}

/// "kernel <module ordinal> (<name>)", as errors name a kernel.
std::string describeKernel(const Kernel &kernel) {
  return "kernel " + std::to_string(kernel.module->ordinal) + " (" +
         kernel.name + ")";
}

CUfunction Runtime::getFunction(Kernel &kernel) {
  if (kernel.function)
    return kernel.function;
  Module &module = *kernel.module;
  if (!module.module &&
      !check(driver.cuModuleLoadData(&module.module, module.image),
             [&] { return "loading " + describeKernel(kernel); }))
    return nullptr;
  if (!check(driver.cuModuleGetFunction(&kernel.function, module.module,
                                        kernel.name.c_str()),
             [&] { return "finding " + describeKernel(kernel); }))
    return nullptr;
  return kernel.function;
}

/// "GEMM <m>x<n>x<k> (batch <b>)", as errors name a GEMM record.
std::string describeGemm(const int64_t *record) {
  return "GEMM " + std::to_string(record[kGemmM]) + "x" +
         std::to_string(record[kGemmN]) + "x" + std::to_string(record[kGemmK]) +
         " (batch " + std::to_string(record[kGemmBatch]) + ")";
}

cudaDataType getCudaType(int64_t type) {
  switch (type) {
  case kGemmF16:
    return CUDA_R_16F;
  case kGemmBF16:
    return CUDA_R_16BF;
  case kGemmF64:
    return CUDA_R_64F;
  case kGemmF8E4M3:
    return CUDA_R_8F_E4M3;
  case kGemmF8E5M2:
    return CUDA_R_8F_E5M2;
  default:
    return CUDA_R_32F;
  }
}

/// Whether f32 GEMMs and convolutions may use TF32 tensor cores
/// (AMP_CUDA_TF32=1); by default they compute in full FP32.
bool isTF32Allowed() {
  const char *tf32 = std::getenv("AMP_CUDA_TF32");
  return tf32 && std::strcmp(tf32, "1") == 0;
}

/// The cuBLASLt plan of `record`, built when first seen or changed.
GemmPlan *getGemmPlan(Runtime &runtime, const int64_t *record) {
  std::unique_ptr<GemmPlan> &plan = runtime.gemmPlans[record];
  if (plan && std::memcmp(plan->fields, record, sizeof(plan->fields)) == 0)
    return plan.get();
  plan = std::make_unique<GemmPlan>();
  std::memcpy(plan->fields, record, sizeof(plan->fields));
  int64_t m = record[kGemmM], n = record[kGemmN], k = record[kGemmK];
  bool transA = record[kGemmTransA], transB = record[kGemmTransB];
  std::string what = describeGemm(record);
  // FP8: E4M3 and E5M2 mix (checkGemmRecord refused the rest).
  plan->isFP8 = isFP8GemmType(record[kGemmTypeA]);
  if (record[kGemmTypeA] != record[kGemmTypeB] && !plan->isFP8) {
    runtime.fail(what + ": cuBLASLt multiplies two inputs of one type only");
    return nullptr;
  }
  plan->isDouble = record[kGemmTypeD] == kGemmF64;
  cublasComputeType_t compute =
      plan->isDouble ? CUBLAS_COMPUTE_64F
      : record[kGemmTypeA] == kGemmF32 && isTF32Allowed()
          ? CUBLAS_COMPUTE_32F_FAST_TF32
          : CUBLAS_COMPUTE_32F;
  cudaDataType scale = plan->isDouble ? CUDA_R_64F : CUDA_R_32F;
  cublasOperation_t opA = transA ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t opB = transB ? CUBLAS_OP_T : CUBLAS_OP_N;
  auto makeLayout = [&](cublasLtMatrixLayout_t &layout, int64_t type,
                        int64_t rows, int64_t cols, int64_t leadingDim,
                        int64_t batchStride) {
    int32_t batch = int32_t(record[kGemmBatch]);
    return runtime.check(cublasLtMatrixLayoutCreate(&layout, getCudaType(type),
                                                    rows, cols, leadingDim),
                         what + ": layout") &&
           runtime.check(cublasLtMatrixLayoutSetAttribute(
                             layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch,
                             sizeof(batch)),
                         what + ": batch count") &&
           runtime.check(cublasLtMatrixLayoutSetAttribute(
                             layout,
                             CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                             &batchStride, sizeof(batchStride)),
                         what + ": batch stride");
  };
  if (!runtime.check(cublasLtMatmulDescCreate(&plan->operation, compute, scale),
                     what + ": descriptor") ||
      !runtime.check(cublasLtMatmulDescSetAttribute(plan->operation,
                                                    CUBLASLT_MATMUL_DESC_TRANSA,
                                                    &opA, sizeof(opA)),
                     what + ": transpose A") ||
      !runtime.check(cublasLtMatmulDescSetAttribute(plan->operation,
                                                    CUBLASLT_MATMUL_DESC_TRANSB,
                                                    &opB, sizeof(opB)),
                     what + ": transpose B") ||
      !makeLayout(plan->a, record[kGemmTypeA], transA ? k : m, transA ? m : k,
                  record[kGemmLdA], record[kGemmBatchStrideA]) ||
      !makeLayout(plan->b, record[kGemmTypeB], transB ? n : k, transB ? k : n,
                  record[kGemmLdB], record[kGemmBatchStrideB]) ||
      !makeLayout(plan->d, record[kGemmTypeD], m, n, record[kGemmLdD],
                  record[kGemmBatchStrideD]))
    return nullptr;
  // The epilogues: BIAS (D's row i plus bias[i]), BGRADA and BGRADB (the
  // bias gradient), the bias of D's type; RELU or GELU after the bias or
  // alone, writing the ReLU mask or GELU's input to the aux; DRELU, DGELU.
  plan->biasEpilogue = record[kGemmBias];
  plan->hasAux = hasGemmAux(record[kGemmActivation]) ||
                 hasGemmReLUMask(record[kGemmActivation]);
  auto setEpilogue = [&](cublasLtEpilogue_t epilogue) {
    return runtime.check(cublasLtMatmulDescSetAttribute(
                             plan->operation, CUBLASLT_MATMUL_DESC_EPILOGUE,
                             &epilogue, sizeof(epilogue)),
                         what + ": epilogue");
  };
  constexpr cublasLtEpilogue_t kEpilogues[] = {
      CUBLASLT_EPILOGUE_DEFAULT, CUBLASLT_EPILOGUE_BIAS,
      CUBLASLT_EPILOGUE_BGRADA, CUBLASLT_EPILOGUE_BGRADB};
  // By activation (GemmActivation, from kGemmReLU), without and with a
  // bias.
  constexpr cublasLtEpilogue_t kActivationEpilogues[][2] = {
      {CUBLASLT_EPILOGUE_RELU, CUBLASLT_EPILOGUE_RELU_BIAS},
      {CUBLASLT_EPILOGUE_GELU, CUBLASLT_EPILOGUE_GELU_BIAS},
      {CUBLASLT_EPILOGUE_GELU_AUX, CUBLASLT_EPILOGUE_GELU_AUX_BIAS},
      {CUBLASLT_EPILOGUE_DGELU, CUBLASLT_EPILOGUE_DGELU},
      {CUBLASLT_EPILOGUE_RELU_AUX, CUBLASLT_EPILOGUE_RELU_AUX_BIAS},
      {CUBLASLT_EPILOGUE_DRELU, CUBLASLT_EPILOGUE_DRELU}};
  int64_t activation = record[kGemmActivation];
  cublasLtEpilogue_t epilogue =
      activation != kGemmNoActivation
          ? kActivationEpilogues[activation - kGemmReLU]
                                [plan->biasEpilogue != kGemmNoBias]
          : kEpilogues[plan->biasEpilogue];
  // The aux matrix: D's leading dimension (checkGemmRecord: a multiple of
  // 8); the ReLU mask's, in bits, a multiple of 128.
  int64_t auxLeadingDim = hasGemmReLUMask(activation)
                              ? getGemmReLUMaskLd(record[kGemmM])
                              : record[kGemmLdD];
  if ((epilogue != CUBLASLT_EPILOGUE_DEFAULT && !setEpilogue(epilogue)) ||
      (plan->hasAux &&
       !runtime.check(cublasLtMatmulDescSetAttribute(
                          plan->operation, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD,
                          &auxLeadingDim, sizeof(auxLeadingDim)),
                      what + ": aux leading dimension")))
    return nullptr;
  cublasLtMatmulPreference_t preference = nullptr;
  cublasLtMatmulHeuristicResult_t heuristic = {};
  int found = 0;
  size_t workspaceBytes = kGemmWorkspaceBytes;
  auto getAlgorithm = [&] {
    return runtime.check(
        cublasLtMatmulAlgoGetHeuristic(runtime.blas, plan->operation, plan->a,
                                       plan->b, plan->d, plan->d, preference, 1,
                                       &heuristic, &found),
        what + ": algorithm");
  };
  bool planned =
      runtime.check(cublasLtMatmulPreferenceCreate(&preference),
                    what + ": preference") &&
      runtime.check(cublasLtMatmulPreferenceSetAttribute(
                        preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                        &workspaceBytes, sizeof(workspaceBytes)),
                    what + ": workspace") &&
      getAlgorithm();
  // No algorithm with a bias gradient epilogue: the GEMM without it, then
  // a GEMM with ones (m = 1 or n = 1) for the gradient.
  if (planned && found == 0 && plan->biasEpilogue >= kGemmBiasGradA) {
    plan->gradientByOnes = true;
    planned = setEpilogue(CUBLASLT_EPILOGUE_DEFAULT) && getAlgorithm();
    int64_t *ones = plan->onesRecord;
    bool ofA = plan->biasEpilogue == kGemmBiasGradA;
    ones[kGemmM] = ofA ? m : 1;
    ones[kGemmN] = ofA ? 1 : n;
    ones[kGemmK] = k;
    ones[kGemmBatch] = 1;
    ones[kGemmTransA] = ofA && transA;
    ones[kGemmTransB] = !ofA && transB;
    ones[kGemmLdA] = ofA ? record[kGemmLdA] : 1;
    ones[kGemmLdB] = ofA ? k : record[kGemmLdB];
    ones[kGemmLdD] = ofA ? m : 1;
    ones[kGemmTypeA] = ones[kGemmTypeB] = record[kGemmTypeA];
    ones[kGemmTypeD] = record[kGemmTypeD];
    ones[kGemmOverwrite] = 1;
  }
  if (preference)
    cublasLtMatmulPreferenceDestroy(preference);
  if (planned && found == 0)
    runtime.fail(what + ": cuBLASLt has no algorithm for it" +
                 (plan->isFP8 ? " (FP8 GEMMs need compute capability 8.9 or "
                                "newer)"
                              : ""));
  if (!planned || found == 0)
    return nullptr;
  plan->algorithm = heuristic.algo;
  return plan.get();
}

template <typename T>
const char *getData(const UnrankedMemRefType<T> &memref) {
  DynamicMemRefType<T> ranked(memref);
  return reinterpret_cast<const char *>(ranked.data + ranked.offset);
}

/// A device vector of at least `count` ones of the GEMM data type `type`
/// (f32, f16 or bf16), for bias gradients computed as GEMMs; 0 when the
/// step failed.
CUdeviceptr getOnes(Runtime &runtime, int64_t type, int64_t count) {
  auto &[ones, size] = runtime.ones[type];
  if (size >= count)
    return ones;
  // Graphs hold the old vector's address.
  if (!runtime.dropGraphs("a vector of ones grows"))
    return 0;
  if (ones)
    runtime.driver.cuMemFree(ones);
  ones = 0;
  size = 0;
  int64_t bytes = count * (type == kGemmF32 ? 4 : 2);
  auto what = [&] { return "allocating " + std::to_string(count) + " ones"; };
  if (!runtime.check(runtime.driver.cuMemAlloc(&ones, bytes), what) ||
      !runtime.check(type == kGemmF32
                         ? runtime.driver.cuMemsetD32Async(
                               ones, 0x3f800000u, count, runtime.stream)
                         : runtime.driver.cuMemsetD16Async(
                               ones, type == kGemmF16 ? 0x3c00 : 0x3f80, count,
                               runtime.stream),
                     what))
    return 0;
  size = count;
  return ones;
}

/// Runs the GEMM `record` (GemmRecord.h): D += op(A) op(B) (or D = with the
/// overwrite flag) on the step's stream; FP8 operands times the factors at
/// the device pointers `scaleA` and `scaleB`; `bias` the vector of a bias
/// epilogue, which a bias gradient entry point (`isGradientEntry`) writes;
/// `aux` the aux matrix or ReLU mask of an activation that has one
/// (`isMask`: the mask).
void runGemm(Runtime &runtime, const int64_t *record, const char *a,
             const char *b, char *d, int64_t typeA, int64_t typeB,
             int64_t typeD, const char *scaleA, const char *scaleB,
             const char *bias, bool isGradientEntry, const char *aux,
             bool isMask) {
  if (const char *error = checkGemmRecord(record, typeA, typeB, typeD))
    return runtime.fail(error);
  GemmPlan *plan = getGemmPlan(runtime, record);
  if (!plan)
    return;
  if (plan->isFP8 &&
      !(runtime.check(cublasLtMatmulDescSetAttribute(
                          plan->operation, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER,
                          &scaleA, sizeof(scaleA)),
                      describeGemm(record) + ": A's scale") &&
        runtime.check(cublasLtMatmulDescSetAttribute(
                          plan->operation, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
                          &scaleB, sizeof(scaleB)),
                      describeGemm(record) + ": B's scale")))
    return;
  if (const char *error = checkGemmBiasEntry(record, bias, isGradientEntry))
    return runtime.fail(describeGemm(record) + ": " + error);
  if (const char *error =
          checkGemmAuxEntry(record, aux && !isMask, aux && isMask))
    return runtime.fail(describeGemm(record) + ": " + error);
  if (plan->hasAux &&
      !runtime.check(cublasLtMatmulDescSetAttribute(
                         plan->operation,
                         CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &aux,
                         sizeof(aux)),
                     describeGemm(record) + ": aux matrix"))
    return;
  int64_t epilogue = plan->biasEpilogue;
  if (epilogue != kGemmNoBias && !plan->gradientByOnes &&
      !runtime.check(cublasLtMatmulDescSetAttribute(
                         plan->operation, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                         &bias, sizeof(bias)),
                     describeGemm(record) + ": bias"))
    return;
  // beta 0 with the overwrite flag: cuBLASLt does not read D then.
  float oneFloat = 1, betaFloat = record[kGemmOverwrite] ? 0 : 1;
  double oneDouble = 1, betaDouble = betaFloat;
  const void *one =
      plan->isDouble ? static_cast<const void *>(&oneDouble) : &oneFloat;
  const void *beta =
      plan->isDouble ? static_cast<const void *>(&betaDouble) : &betaFloat;
  if (!runtime.check(cublasLtMatmul(runtime.blas, plan->operation, one, a,
                                    plan->a, b, plan->b, beta, d, plan->d, d,
                                    plan->d, &plan->algorithm,
                                    reinterpret_cast<void *>(runtime.workspace),
                                    kGemmWorkspaceBytes, runtime.stream),
                     [&] { return describeGemm(record); }) ||
      !plan->gradientByOnes)
    return;
  // The gradient as op(A) ones or ones op(B).
  const char *ones =
      reinterpret_cast<const char *>(getOnes(runtime, typeA, record[kGemmK]));
  if (!ones)
    return;
  bool ofA = epilogue == kGemmBiasGradA;
  runGemm(runtime, plan->onesRecord, ofA ? a : ones, ofA ? ones : b,
          const_cast<char *>(bias), typeA, typeA, typeD, nullptr, nullptr,
          nullptr, false, nullptr, false);
}

/// The `numFields` fields of `recordMemRef` when the step has not failed;
/// null otherwise, or when the memref does not hold them (the step fails
/// with `malformed`).
const int64_t *readRecord(Runtime &runtime,
                          const UnrankedMemRefType<int64_t> &recordMemRef,
                          int64_t numFields, const char *malformed) {
  if (runtime.failed())
    return nullptr;
  const int64_t *record = getRecordFields(recordMemRef, numFields);
  if (!record)
    runtime.fail(malformed);
  return record;
}

/// runGemm on a record memref.
void runGemmRecord(const UnrankedMemRefType<int64_t> &recordMemRef,
                   const char *a, const char *b, char *d, int64_t typeA,
                   int64_t typeB, int64_t typeD, const char *scaleA = nullptr,
                   const char *scaleB = nullptr, const char *bias = nullptr,
                   bool isGradientEntry = false, const char *aux = nullptr,
                   bool isMask = false) {
  Runtime &runtime = getRuntime();
  const int64_t *record =
      readRecord(runtime, recordMemRef, kGemmRecordFields,
                 "a GEMM record is a 1-d memref of kGemmRecordFields i64");
  if (!record)
    return;
  runGemm(runtime, record, a, b, d, typeA, typeB, typeD, scaleA, scaleB, bias,
          isGradientEntry, aux, isMask);
}

/// "convolution <mode> <N>x<C>x<spatial> * <kernel> -> <M> channels", as
/// errors name a convolution record.
std::string describeConv(const int64_t *record) {
  std::string text = record[kConvMode] == kConvForward
                         ? "convolution (forward) "
                     : record[kConvMode] == kConvBackwardFilter
                         ? "convolution (backward filter) "
                         : "convolution (backward data) ";
  text += std::to_string(record[kConvBatch]) + "x" +
          std::to_string(record[kConvInChannels]);
  for (int64_t i = 0; i < kConvMaxSpatialRank; ++i)
    text += "x" + std::to_string(record[kConvInput + i]);
  text += " by ";
  for (int64_t i = 0; i < kConvMaxSpatialRank; ++i)
    text += (i ? "x" : "") + std::to_string(record[kConvKernel + i]);
  return text + " into " + std::to_string(record[kConvOutChannels]) +
         " channels";
}

#ifdef AMP_CUDNN_LIBRARY
/// Loads cuDNN and creates its handle, once; on failure, `dnnSetupError`
/// says why.
bool Runtime::setUpDNNOnce() {
  if (dnnSetUp)
    return dnnSetupError.empty();
  dnnSetUp = true;
  void *handle = dlopen("libcudnn.so.9", RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    handle = dlopen(AMP_CUDNN_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    dnnSetupError =
        std::string("no cuDNN 9 for the convolutions: ") + dlerror();
    return false;
  }
#define AMP_DNN_LOAD(name)                                                     \
  dnn.name = reinterpret_cast<decltype(&name)>(dlsym(handle, #name));          \
  if (!dnn.name) {                                                             \
    dnnSetupError = "cuDNN has no " #name;                                     \
    return false;                                                              \
  }
  AMP_DNN_FUNCTIONS(AMP_DNN_LOAD)
#undef AMP_DNN_LOAD
  cudnnStatus_t status = dnn.cudnnCreate(&dnnHandle);
  if (status == CUDNN_STATUS_SUCCESS)
    status = dnn.cudnnSetStream(dnnHandle, stream);
  if (status != CUDNN_STATUS_SUCCESS)
    dnnSetupError = std::string("creating the cuDNN handle: ") +
                    dnn.cudnnGetErrorString(status);
  return dnnSetupError.empty();
}

/// Whether the engine of `config` computes as the CPU reference does: no
/// inputs converted down, no reduced-precision sums, and, for f32, no TF32
/// tensor cores unless `allowTF32`. An engine whose notes cannot be read
/// is taken.
bool isFaithfulEngine(Runtime &runtime, ConvPlan &plan,
                      cudnnBackendDescriptor_t config, bool isFloat,
                      bool allowTF32) {
  DNN &dnn = runtime.dnn;
  cudnnBackendDescriptor_t engine = nullptr;
  if (dnn.cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINE_DESCRIPTOR,
                                       &engine) != CUDNN_STATUS_SUCCESS)
    return true;
  plan.descriptors.push_back(engine);
  int64_t count = 0;
  cudnnBackendNumericalNote_t notes[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
  if (dnn.cudnnBackendGetAttribute(config, CUDNN_ATTR_ENGINECFG_ENGINE,
                                   CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &count,
                                   &engine) != CUDNN_STATUS_SUCCESS ||
      dnn.cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE,
                                   CUDNN_TYPE_NUMERICAL_NOTE,
                                   CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &count,
                                   notes) != CUDNN_STATUS_SUCCESS)
    return true;
  for (int64_t i = 0; i < count; ++i) {
    if (notes[i] == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS ||
        notes[i] == CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION)
      return false;
    if (isFloat && !allowTF32 && notes[i] == CUDNN_NUMERICAL_NOTE_TENSOR_CORE)
      return false;
  }
  return true;
}

/// The cuDNN execution plan of `record` for operands aligned to
/// `alignment` bytes, built when first seen or changed: one operation
/// graph of the record's convolution, its engine configurations from the
/// heuristics (mode A, then the fallback list), the first faithful one
/// that finalizes.
ConvPlan *getConvPlan(Runtime &runtime, const int64_t *record,
                      int64_t alignment) {
  std::unique_ptr<ConvPlan> &plan = runtime.convPlans[record];
  if (plan && plan->alignment == alignment &&
      std::memcmp(plan->fields, record, sizeof(plan->fields)) == 0)
    return plan.get();
  plan = std::make_unique<ConvPlan>();
  std::memcpy(plan->fields, record, sizeof(plan->fields));
  plan->alignment = alignment;
  DNN &dnn = runtime.dnn;
  plan->destroy = dnn.cudnnBackendDestroyDescriptor;
  std::string what = describeConv(record);
  auto create = [&](cudnnBackendDescriptorType_t type) {
    cudnnBackendDescriptor_t descriptor = nullptr;
    if (!runtime.check(dnn.cudnnBackendCreateDescriptor(type, &descriptor),
                       [&] { return what + ": creating a cuDNN descriptor"; }))
      return descriptor;
    plan->descriptors.push_back(descriptor);
    return descriptor;
  };
  auto set =
      [&](cudnnBackendDescriptor_t descriptor, cudnnBackendAttributeName_t name,
          cudnnBackendAttributeType_t type, int64_t count, const void *value) {
        return descriptor &&
               runtime.check(dnn.cudnnBackendSetAttribute(descriptor, name,
                                                          type, count, value),
                             [&] {
                               return what + ": setting cuDNN attribute " +
                                      std::to_string(int(name));
                             });
      };
  auto finalize = [&](cudnnBackendDescriptor_t descriptor, const char *which) {
    return descriptor &&
           runtime.check(dnn.cudnnBackendFinalize(descriptor),
                         [&] { return what + ": finalizing the " + which; });
  };

  // Packed channels-first tensors of rank 2 + spatial rank: X is 1, the
  // second factor 2, the result 3 in the variant pack.
  // f16 and bf16 data convolve through an f32 accumulator (PSEUDO_HALF).
  bool isDouble = record[kConvTypeX] == kGemmF64;
  bool isFloat = record[kConvTypeX] == kGemmF32;
  cudnnDataType_t dataType = isDouble ? CUDNN_DATA_DOUBLE
                             : record[kConvTypeX] == kGemmF16 ? CUDNN_DATA_HALF
                             : record[kConvTypeX] == kGemmBF16
                                 ? CUDNN_DATA_BFLOAT16
                                 : CUDNN_DATA_FLOAT;
  cudnnDataType_t computeType = isDouble ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
  int64_t spatial = record[kConvSpatialRank];
  int64_t unused = kConvMaxSpatialRank - spatial;
  auto makeTensor = [&](int64_t uid, int64_t outer, int64_t inner,
                        unsigned sizesField) {
    int64_t rank = 2 + spatial, dims[2 + kConvMaxSpatialRank],
            strides[2 + kConvMaxSpatialRank];
    dims[0] = outer;
    dims[1] = inner;
    for (int64_t i = 0; i < spatial; ++i)
      dims[2 + i] = record[sizesField + unused + i];
    strides[rank - 1] = 1;
    for (int64_t i = rank - 2; i >= 0; --i)
      strides[i] = strides[i + 1] * dims[i + 1];
    cudnnBackendDescriptor_t tensor = create(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    bool ok =
        set(tensor, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1,
            &dataType) &&
        set(tensor, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, rank,
            dims) &&
        set(tensor, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, rank,
            strides) &&
        set(tensor, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid) &&
        set(tensor, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1,
            &alignment) &&
        finalize(tensor, "tensor descriptor");
    return ok ? tensor : nullptr;
  };
  int64_t batch = record[kConvBatch], groups = record[kConvGroups];
  int64_t inChannels = record[kConvInChannels];
  int64_t outChannels = record[kConvOutChannels];
  auto mode = static_cast<ConvMode>(record[kConvMode]);
  // X, W and Y or their gradients; the variant pack's unique ids are the
  // call's operands: 1 the first factor, 2 the second, 3 the result.
  int64_t xId = mode == kConvBackwardData ? 3 : 1;
  int64_t wId = mode == kConvBackwardFilter ? 3 : 2;
  int64_t yId = mode == kConvForward ? 3 : mode == kConvBackwardFilter ? 2 : 1;
  // W and dW are [out channels, in channels per group, kernel...]: cuDNN
  // reads the groups off the input's channels.
  cudnnBackendDescriptor_t x = makeTensor(xId, batch, inChannels, kConvInput);
  cudnnBackendDescriptor_t weights =
      makeTensor(wId, outChannels, inChannels / groups, kConvKernel);
  cudnnBackendDescriptor_t outputs =
      makeTensor(yId, batch, outChannels, kConvOutput);

  cudnnBackendDescriptor_t convolution =
      create(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
  cudnnConvolutionMode_t crossCorrelation = CUDNN_CROSS_CORRELATION;
  bool ok = set(convolution, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS,
                CUDNN_TYPE_INT64, 1, &spatial) &&
            set(convolution, CUDNN_ATTR_CONVOLUTION_COMP_TYPE,
                CUDNN_TYPE_DATA_TYPE, 1, &computeType) &&
            set(convolution, CUDNN_ATTR_CONVOLUTION_CONV_MODE,
                CUDNN_TYPE_CONVOLUTION_MODE, 1, &crossCorrelation) &&
            set(convolution, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64,
                spatial, record + kConvDilation + unused) &&
            set(convolution, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES,
                CUDNN_TYPE_INT64, spatial, record + kConvStride + unused) &&
            set(convolution, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS,
                CUDNN_TYPE_INT64, spatial, record + kConvPadBefore + unused) &&
            set(convolution, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS,
                CUDNN_TYPE_INT64, spatial, record + kConvPadAfter + unused) &&
            finalize(convolution, "convolution descriptor");
  if (!ok || !x || !weights || !outputs)
    return nullptr;

  // The operation, with beta 0 for the overwrite flag.
  float alphaFloat = 1, betaFloat = record[kConvOverwrite] ? 0 : 1;
  double alphaDouble = 1, betaDouble = betaFloat;
  cudnnBackendAttributeType_t scaleType =
      isDouble ? CUDNN_TYPE_DOUBLE : CUDNN_TYPE_FLOAT;
  const void *alpha =
      isDouble ? static_cast<const void *>(&alphaDouble) : &alphaFloat;
  const void *beta =
      isDouble ? static_cast<const void *>(&betaDouble) : &betaFloat;
  // X, W and Y or their gradients, the convolution, alpha and beta.
  const cudnnBackendAttributeName_t forwardNames[] = {
      CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
      CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
      CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y,
      CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC,
      CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA,
      CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA};
  const cudnnBackendAttributeName_t filterNames[] = {
      CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X,
      CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW,
      CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY,
      CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC,
      CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA,
      CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA};
  const cudnnBackendAttributeName_t dataNames[] = {
      CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX,
      CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W,
      CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY,
      CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC,
      CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA,
      CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA};
  const cudnnBackendAttributeName_t *names = mode == kConvForward ? forwardNames
                                             : mode == kConvBackwardFilter
                                                 ? filterNames
                                                 : dataNames;
  cudnnBackendDescriptor_t operands[] = {x, weights, outputs, convolution};
  cudnnBackendDescriptor_t operation = create(
      mode == kConvForward
          ? CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR
      : mode == kConvBackwardFilter
          ? CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR
          : CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR);
  for (int i = 0; i < 4 && ok; ++i)
    ok = set(operation, names[i], CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
             &operands[i]);
  ok = ok && set(operation, names[4], scaleType, 1, alpha) &&
       set(operation, names[5], scaleType, 1, beta);
  cudnnBackendDescriptor_t graph =
      ok && finalize(operation, "convolution operation")
          ? create(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR)
          : nullptr;
  if (!set(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
           1, &operation) ||
      !set(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1,
           &runtime.dnnHandle) ||
      !finalize(graph, "operation graph"))
    return nullptr;

  bool allowTF32 = isTF32Allowed();
  for (cudnnBackendHeurMode_t heuristic :
       {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
    cudnnBackendDescriptor_t search =
        create(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    int64_t count = 0;
    if (!set(search, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH,
             CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph) ||
        !set(search, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1,
             &heuristic) ||
        !finalize(search, "engine heuristics") ||
        !runtime.check(dnn.cudnnBackendGetAttribute(
                           search, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                           CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, nullptr),
                       [&] { return what + ": counting cuDNN's engines"; }))
      return nullptr;
    std::vector<cudnnBackendDescriptor_t> configs;
    for (int64_t i = 0; i < count; ++i)
      if (cudnnBackendDescriptor_t config =
              create(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR))
        configs.push_back(config);
      else
        return nullptr;
    if (!runtime.check(
            dnn.cudnnBackendGetAttribute(search, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                         CUDNN_TYPE_BACKEND_DESCRIPTOR, count,
                                         &count, configs.data()),
            [&] { return what + ": reading cuDNN's engines"; }))
      return nullptr;
    for (int64_t i = 0; i < count; ++i) {
      if (!isFaithfulEngine(runtime, *plan, configs[i], isFloat, allowTF32))
        continue;
      cudnnBackendDescriptor_t candidate =
          create(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
      if (!set(candidate, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE,
               1, &runtime.dnnHandle) ||
          !set(candidate, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
               CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &configs[i]))
        return nullptr;
      // An engine that does not take this convolution is no error.
      if (dnn.cudnnBackendFinalize(candidate) != CUDNN_STATUS_SUCCESS)
        continue;
      if (!runtime.check(
              dnn.cudnnBackendGetAttribute(
                  candidate, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                  CUDNN_TYPE_INT64, 1, &count, &plan->workspaceBytes),
              [&] { return what + ": reading the workspace size"; }))
        return nullptr;
      plan->plan = candidate;
      return plan.get();
    }
  }
  runtime.fail(what + ": cuDNN has no engine that computes it" +
               (allowTF32 ? "" : " without TF32"));
  return nullptr;
}
#endif

/// Runs a convolution record (ConvRecord.h) on the step's stream: Y (+)=
/// conv(X, W), dW (+)= the weight gradient of X and dY, or dX (+)= the
/// data gradient of dY and W.
void runConvRecord(const UnrankedMemRefType<int64_t> &recordMemRef,
                   const char *first, const char *factor, char *result,
                   int64_t type) {
  Runtime &runtime = getRuntime();
  const int64_t *record = readRecord(
      runtime, recordMemRef, kConvRecordFields,
      "a convolution record is a 1-d memref of kConvRecordFields i64");
  if (!record)
    return;
  if (const char *error = checkConvRecord(record, type, type, type))
    return runtime.fail(error);
#ifdef AMP_CUDNN_LIBRARY
  if (!runtime.setUpDNNOnce())
    return runtime.fail(describeConv(record) + ": " + runtime.dnnSetupError);
  // The largest power of two up to 16 that divides every address.
  auto bits = reinterpret_cast<uintptr_t>(first) |
              reinterpret_cast<uintptr_t>(factor) |
              reinterpret_cast<uintptr_t>(result);
  int64_t alignment = 16;
  while (alignment > 1 && bits % alignment)
    alignment /= 2;
  ConvPlan *plan = getConvPlan(runtime, record, alignment);
  if (!plan)
    return;
  if (plan->workspaceBytes > runtime.dnnWorkspaceBytes) {
    // Graphs hold the old workspace's address.
    if (!runtime.dropGraphs("cuDNN's workspace grows"))
      return;
    // cuMemFree waits for the work that may still use the old one.
    if (runtime.dnnWorkspace &&
        !runtime.check(runtime.driver.cuMemFree(runtime.dnnWorkspace),
                       "freeing cuDNN's workspace"))
      return;
    runtime.dnnWorkspace = 0;
    runtime.dnnWorkspaceBytes = 0;
    if (!runtime.check(runtime.driver.cuMemAlloc(&runtime.dnnWorkspace,
                                                 plan->workspaceBytes),
                       [&] {
                         return describeConv(record) +
                                ": allocating its workspace";
                       }))
      return;
    runtime.dnnWorkspaceBytes = plan->workspaceBytes;
  }
  DNN &dnn = runtime.dnn;
  void *pointers[3] = {const_cast<char *>(first), const_cast<char *>(factor),
                       result};
  int64_t uids[3] = {1, 2, 3};
  void *workspace = reinterpret_cast<void *>(runtime.dnnWorkspace);
  cudnnBackendDescriptor_t pack = nullptr;
  auto what = [&] { return describeConv(record); };
  if (runtime.check(dnn.cudnnBackendCreateDescriptor(
                        CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack),
                    what) &&
      runtime.check(dnn.cudnnBackendSetAttribute(
                        pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS,
                        CUDNN_TYPE_VOID_PTR, 3, pointers),
                    what) &&
      runtime.check(
          dnn.cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS,
                                       CUDNN_TYPE_INT64, 3, uids),
          what) &&
      runtime.check(
          dnn.cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE,
                                       CUDNN_TYPE_VOID_PTR, 1, &workspace),
          what) &&
      runtime.check(dnn.cudnnBackendFinalize(pack), what))
    runtime.check(dnn.cudnnBackendExecute(runtime.dnnHandle, plan->plan, pack),
                  what);
  if (pack)
    dnn.cudnnBackendDestroyDescriptor(pack);
#else
  (void)first;
  (void)factor;
  (void)result;
  runtime.fail(describeConv(record) +
               ": this runtime was built without cuDNN's headers");
#endif
}

} // namespace

//===----------------------------------------------------------------------===//
// A step.
//===----------------------------------------------------------------------===//

/// The graph of `step` for these pointers, made (uncaptured, not warm) when
/// new; the least recently used goes when the step has kGraphsPerStep.
static StepGraph &getStepGraph(Runtime &runtime, StepGraphs &step,
                               std::vector<const void *> pointers) {
  StepGraph *found = nullptr;
  for (StepGraph &graph : step.graphs)
    if (graph.pointers == pointers)
      found = &graph;
  if (!found) {
    if (step.graphs.size() == kGraphsPerStep) {
      auto oldest =
          std::min_element(step.graphs.begin(), step.graphs.end(),
                           [](const StepGraph &a, const StepGraph &b) {
                             return a.lastUse < b.lastUse;
                           });
      if (oldest->graph)
        runtime.driver.cuGraphExecDestroy(oldest->graph);
      step.graphs.erase(oldest);
    }
    step.graphs.push_back(StepGraph{std::move(pointers)});
    found = &step.graphs.back();
  }
  found->lastUse = ++runtime.graphUses;
  return *found;
}

/// In graph mode, orders the step's stream after the caller's work on the
/// legacy default stream.
static bool waitForLegacyStream(Runtime &runtime) {
  return runtime.check(
             runtime.driver.cuEventRecord(runtime.legacyDone, nullptr),
             "ordering the step after the default stream") &&
         runtime.check(runtime.driver.cuStreamWaitEvent(runtime.stream,
                                                        runtime.legacyDone, 0),
                       "ordering the step after the default stream");
}

extern "C" int amp_cuda_step_begin(const char *step, const void *const *inputs,
                                   int64_t numInputs,
                                   const void *const *outputs,
                                   int64_t numOutputs) {
  Runtime &runtime = getRuntime();
  runtime.stepLock.lock();
  runtime.step = step ? step : "";
  runtime.error.clear();
  runtime.setUpOnce();
  if (!runtime.setupError.empty() || !runtime.makeContextCurrent())
    return 1;
  if (!runtime.graphMode)
    return 0;
  if (!waitForLegacyStream(runtime))
    return 1;
  if (numInputs + numOutputs == 0)
    return 0;
  std::vector<const void *> pointers(inputs, inputs + numInputs);
  pointers.insert(pointers.end(), outputs, outputs + numOutputs);
  StepGraph &graph = getStepGraph(runtime, runtime.stepGraphs[runtime.step],
                                  std::move(pointers));
  runtime.current = &graph;
  if (graph.graph) {
    if (!runtime.check(
            runtime.driver.cuGraphLaunch(graph.graph, runtime.stream),
            "launching the step's CUDA graph"))
      return 1;
    ++runtime.stepGraphs[runtime.step].replays;
    return 2;
  }
  if (!graph.warm || graph.refused)
    return 0;
  if (runtime.check(runtime.driver.cuStreamBeginCapture(
                        runtime.stream, CU_STREAM_CAPTURE_MODE_RELAXED),
                    "capturing the step in a CUDA graph")) {
    runtime.capture = &graph;
    return 0;
  }
  // Not the step's failure: it runs uncaptured.
  graph.refused = true;
  runtime.stepGraphs[runtime.step].refusal = runtime.error;
  runtime.error.clear();
  return 0;
}

/// Ends the capture of the step that just ran into it: instantiates and
/// launches the graph. Returns false when the capture failed: then the
/// graph is refused for good, and the step must run again uncaptured.
static bool endCapture(Runtime &runtime) {
  StepGraph &graph = *runtime.capture;
  runtime.capture = nullptr;
  StepGraphs &step = runtime.stepGraphs[runtime.step];
  CUgraph captured = nullptr;
  CUresult ended = runtime.driver.cuStreamEndCapture(runtime.stream, &captured);
  if (!runtime.failed())
    runtime.check(ended, "capturing the step in a CUDA graph");
  if (!runtime.failed())
    runtime.check(runtime.driver.cuGraphInstantiate(&graph.graph, captured, 0),
                  "instantiating the step's CUDA graph");
  if (captured)
    runtime.driver.cuGraphDestroy(captured);
  for (CUdeviceptr buffer : runtime.deferredFrees)
    runtime.driver.cuMemFree(buffer);
  runtime.deferredFrees.clear();
  if (runtime.failed()) {
    graph.graph = nullptr;
    graph.refused = true;
    step.refusal = runtime.error;
    runtime.error.clear();
    return false;
  }
  ++step.captures;
  return runtime.check(
      runtime.driver.cuGraphLaunch(graph.graph, runtime.stream),
      "launching the step's CUDA graph");
}

extern "C" int amp_cuda_step_end(void) {
  Runtime &runtime = getRuntime();
  if (runtime.capture && !endCapture(runtime)) {
    runtime.current = nullptr;
    runtime.stepLock.unlock();
    return 2;
  }
  if (!runtime.failed())
    runtime.check(runtime.driver.cuStreamSynchronize(runtime.stream),
                  "finishing the step");
  if (!runtime.setupError.empty())
    runtime.fail(runtime.setupError);
  int status = runtime.error.empty() ? 0 : 1;
  // The graph of these pointers can be captured from now on.
  if (status == 0 && runtime.current)
    runtime.current->warm = true;
  runtime.current = nullptr;
  runtime.stepLock.unlock();
  return status;
}

extern "C" const char *amp_cuda_graph_report(const char *step) {
  Runtime &runtime = getRuntime();
  std::lock_guard<std::recursive_mutex> lock(runtime.stepLock);
  static std::string report;
  if (!runtime.graphMode) {
    report = "off (AMP_CUDA_GRAPH is not 1)";
    return report.c_str();
  }
  const StepGraphs &graphs = runtime.stepGraphs[step ? step : ""];
  report = std::to_string(graphs.captures) + " captured, " +
           std::to_string(graphs.replays) + " replayed";
  if (!graphs.refusal.empty())
    report += "; refused: " + graphs.refusal;
  return report.c_str();
}

extern "C" const char *amp_cuda_last_error(void) {
  return getRuntime().error.c_str();
}

//===----------------------------------------------------------------------===//
// Upstream's mgpu* interface (mlir/lib/ExecutionEngine/CudaRuntimeWrappers).
//===----------------------------------------------------------------------===//

extern "C" void *mgpuModuleLoad(void *data, size_t /*size*/) {
  Runtime &runtime = getRuntime();
  std::lock_guard<std::recursive_mutex> lock(runtime.stepLock);
  runtime.modules.push_back(
      std::make_unique<Module>(data, unsigned(runtime.modules.size())));
  return runtime.modules.back().get();
}

extern "C" void mgpuModuleUnload(void * /*module*/) {
  // Modules stay loaded until the process ends: a step library's
  // destructors may run after the driver's.
}

extern "C" void *mgpuModuleGetFunction(void *handle, const char *name) {
  auto *module = static_cast<Module *>(handle);
  Kernel *&kernel = module->kernels[name];
  if (!kernel) {
    Runtime &runtime = getRuntime();
    runtime.kernels.push_back(
        std::make_unique<Kernel>(Kernel{module, name, nullptr}));
    kernel = runtime.kernels.back().get();
  }
  return kernel;
}

extern "C" void mgpuLaunchKernel(void *handle, intptr_t gridX, intptr_t gridY,
                                 intptr_t gridZ, intptr_t blockX,
                                 intptr_t blockY, intptr_t blockZ,
                                 int32_t sharedBytes, CUstream /*stream*/,
                                 void **params, void **extra,
                                 size_t /*paramsCount*/) {
  Runtime &runtime = getRuntime();
  if (runtime.failed())
    return;
  Kernel &kernel = *static_cast<Kernel *>(handle);
  CUfunction function = runtime.getFunction(kernel);
  if (!function)
    return;
  runtime.check(runtime.driver.cuLaunchKernel(
                    function, gridX, gridY, gridZ, blockX, blockY, blockZ,
                    sharedBytes, runtime.stream, params, extra),
                [&] {
                  return "launching " + describeKernel(kernel) + " on " +
                         std::to_string(gridX) + " blocks of " +
                         std::to_string(blockX) + " threads";
                });
}

// The host code's streams are all the step's stream.
extern "C" CUstream mgpuStreamCreate() { return getRuntime().stream; }

extern "C" void mgpuStreamDestroy(CUstream) {}

extern "C" void mgpuStreamSynchronize(CUstream /*stream*/) {
  Runtime &runtime = getRuntime();
  // A capture waits at the step's end, after launching the graph.
  if (!runtime.failed() && !runtime.capture)
    runtime.check(runtime.driver.cuStreamSynchronize(runtime.stream),
                  "running the step's kernels");
}

extern "C" void mgpuStreamWaitEvent(CUstream /*stream*/, CUevent event) {
  Runtime &runtime = getRuntime();
  if (!runtime.failed() && event)
    runtime.check(runtime.driver.cuStreamWaitEvent(runtime.stream, event, 0),
                  "waiting for an event");
}

extern "C" CUevent mgpuEventCreate() {
  Runtime &runtime = getRuntime();
  CUevent event = nullptr;
  if (!runtime.failed())
    runtime.check(runtime.driver.cuEventCreate(&event, CU_EVENT_DISABLE_TIMING),
                  "creating an event");
  return event;
}

extern "C" void mgpuEventDestroy(CUevent event) {
  Runtime &runtime = getRuntime();
  if (event && runtime.setupError.empty())
    runtime.driver.cuEventDestroy(event);
}

extern "C" void mgpuEventSynchronize(CUevent event) {
  Runtime &runtime = getRuntime();
  if (runtime.capture)
    return runtime.fail("capturing a CUDA graph: the host waits for an "
                        "event");
  if (!runtime.failed() && event)
    runtime.check(runtime.driver.cuEventSynchronize(event),
                  "waiting for an event");
}

extern "C" void mgpuEventRecord(CUevent event, CUstream /*stream*/) {
  Runtime &runtime = getRuntime();
  if (!runtime.failed() && event)
    runtime.check(runtime.driver.cuEventRecord(event, runtime.stream),
                  "recording an event");
}

/// Allocation sizes are rounded up to this, so that buffers of nearby sizes
/// share the cache.
static constexpr uint64_t kBufferGranule = 512;

/// A device buffer of `bytes` (a multiple of kBufferGranule), from the cache
/// or the driver; when the driver has none left, the cache is given back to
/// it and the allocation tried again.
static CUresult allocateDevice(Runtime &runtime, uint64_t bytes,
                               CUdeviceptr &pointer) {
  std::vector<CUdeviceptr> &cached = runtime.freeBuffers[bytes];
  if (!cached.empty()) {
    pointer = cached.back();
    cached.pop_back();
    return CUDA_SUCCESS;
  }
  CUresult result = runtime.driver.cuMemAlloc(&pointer, bytes);
  if (result == CUDA_ERROR_OUT_OF_MEMORY &&
      runtime.dropGraphs("the device is full")) {
    for (auto &[size, buffers] : runtime.freeBuffers) {
      for (CUdeviceptr buffer : buffers) {
        runtime.bufferSizes.erase(buffer);
        runtime.driver.cuMemFree(buffer);
      }
      buffers.clear();
    }
    result = runtime.driver.cuMemAlloc(&pointer, bytes);
  }
  if (result == CUDA_SUCCESS)
    runtime.bufferSizes[pointer] = bytes;
  return result;
}

extern "C" void *mgpuMemAlloc(uint64_t bytes, CUstream /*stream*/,
                              bool isHostShared) {
  Runtime &runtime = getRuntime();
  if (bytes == 0)
    return nullptr;
  CUdeviceptr pointer = 0;
  uint64_t rounded =
      (bytes + kBufferGranule - 1) / kBufferGranule * kBufferGranule;
  if (!runtime.failed() &&
      runtime.check(
          isHostShared ? runtime.driver.cuMemAllocManaged(&pointer, bytes,
                                                          CU_MEM_ATTACH_GLOBAL)
                       : allocateDevice(runtime, rounded, pointer),
          [&] { return "allocating " + std::to_string(bytes) + " bytes"; }))
    return reinterpret_cast<void *>(pointer);
  // The step has failed: host memory, for the host code to finish with.
  void *fallback = std::calloc(1, bytes);
  runtime.hostFallbacks.insert(fallback);
  return fallback;
}

extern "C" void mgpuMemFree(void *pointer, CUstream /*stream*/) {
  Runtime &runtime = getRuntime();
  if (!pointer)
    return;
  if (runtime.hostFallbacks.erase(pointer)) {
    std::free(pointer);
    return;
  }
  auto buffer = reinterpret_cast<CUdeviceptr>(pointer);
  if (auto cached = runtime.bufferSizes.find(buffer);
      cached != runtime.bufferSizes.end()) {
    runtime.freeBuffers[cached->second].push_back(buffer);
    return;
  }
  // cuMemFree would wait for the device, which a capture cannot.
  if (runtime.capture)
    return runtime.deferredFrees.push_back(buffer);
  runtime.check(runtime.driver.cuMemFree(buffer), "freeing a buffer");
}

/// Whether `pointer` is host memory that CUDA does not know (pageable).
static bool isPageable(Runtime &runtime, const void *pointer) {
  unsigned type = 0;
  return runtime.driver.cuPointerGetAttribute(
             &type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
             reinterpret_cast<CUdeviceptr>(pointer)) != CUDA_SUCCESS;
}

/// The device copy of the host array `source` of `bytes`, made on its first
/// copy outside a capture; 0 (and the step failed) when there is none or
/// the array changed, which a capture cannot take.
static CUdeviceptr getDeviceConstant(Runtime &runtime, const void *source,
                                     size_t bytes) {
  DeviceConstant &constant = runtime.constants[{source, bytes}];
  if (constant.copy && std::memcmp(constant.bytes.data(), source, bytes) == 0)
    return constant.copy;
  if (runtime.capture) {
    runtime.fail("capturing a CUDA graph: the host code copies " +
                 std::to_string(bytes) + " bytes of host memory that " +
                 (constant.copy ? "changed since the last step"
                                : "no step copied before"));
    return 0;
  }
  // A new copy: graphs may read the old one.
  if (constant.copy && !runtime.dropGraphs("a host array changed"))
    return 0;
  auto what = [&] {
    return "copying " + std::to_string(bytes) + " bytes of host memory";
  };
  if (constant.copy) {
    runtime.check(runtime.driver.cuMemFree(constant.copy), what);
    constant.copy = 0;
  }
  if (!runtime.check(runtime.driver.cuMemAlloc(&constant.copy, bytes), what) ||
      !runtime.check(runtime.driver.cuMemcpyHtoD(constant.copy, source, bytes),
                     what))
    return 0;
  const char *begin = static_cast<const char *>(source);
  constant.bytes.assign(begin, begin + bytes);
  return constant.copy;
}

extern "C" void mgpuMemcpy(void *destination, void *source, size_t bytes,
                           CUstream /*stream*/) {
  Runtime &runtime = getRuntime();
  if (runtime.failed())
    return;
  // What the host reads would be the capture's, not each replay's.
  if (runtime.capture && isPageable(runtime, destination))
    return runtime.fail("capturing a CUDA graph: the host code reads " +
                        std::to_string(bytes) + " bytes of device memory");
  auto from = reinterpret_cast<CUdeviceptr>(source);
  // In graph mode, host arrays (the constants the host code uploads) come
  // from their device copies, as a capture needs.
  if (runtime.graphMode && isPageable(runtime, source))
    from = getDeviceConstant(runtime, source, bytes);
  if (from)
    runtime.check(
        runtime.driver.cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(destination),
                                     from, bytes, runtime.stream),
        [&] { return "copying " + std::to_string(bytes) + " bytes"; });
}

extern "C" void mgpuMemset32(void *destination, unsigned int value,
                             size_t count, CUstream /*stream*/) {
  Runtime &runtime = getRuntime();
  if (!runtime.failed())
    runtime.check(runtime.driver.cuMemsetD32Async(
                      reinterpret_cast<CUdeviceptr>(destination), value, count,
                      runtime.stream),
                  "filling a buffer");
}

extern "C" void mgpuMemset16(void *destination, unsigned short value,
                             size_t count, CUstream /*stream*/) {
  Runtime &runtime = getRuntime();
  if (!runtime.failed())
    runtime.check(runtime.driver.cuMemsetD16Async(
                      reinterpret_cast<CUdeviceptr>(destination), value, count,
                      runtime.stream),
                  "filling a buffer");
}

//===----------------------------------------------------------------------===//
// GEMM records (amp-contractions-to-gemm-records).
//===----------------------------------------------------------------------===//

// The record, then A, B and D, like the CPU runtime's entry points; one
// input type per GEMM (cuBLASLt's rule for these types).
#define AMP_CUDA_GEMM(NAME, TA, TB, TD, KA, KB, KD)                            \
  extern "C" void _mlir_ciface_amp_gemm_##NAME(                                \
      UnrankedMemRefType<int64_t> *record, UnrankedMemRefType<TA> *a,          \
      UnrankedMemRefType<TB> *b, UnrankedMemRefType<TD> *d) {                  \
    runGemmRecord(*record, getData(*a), getData(*b),                           \
                  const_cast<char *>(getData(*d)), KA, KB, KD);                \
  }

AMP_CUDA_GEMM(f32_f32_f32, float, float, float, kGemmF32, kGemmF32, kGemmF32)
AMP_CUDA_GEMM(f16_f16_f32, F16Bits, F16Bits, float, kGemmF16, kGemmF16,
              kGemmF32)
AMP_CUDA_GEMM(bf16_bf16_f32, BF16Bits, BF16Bits, float, kGemmBF16, kGemmBF16,
              kGemmF32)
AMP_CUDA_GEMM(f64_f64_f64, double, double, double, kGemmF64, kGemmF64, kGemmF64)
// f16 and bf16 results: cuBLASLt rounds the f32 accumulator.
AMP_CUDA_GEMM(f16_f16_f16, F16Bits, F16Bits, F16Bits, kGemmF16, kGemmF16,
              kGemmF16)
AMP_CUDA_GEMM(bf16_bf16_bf16, BF16Bits, BF16Bits, BF16Bits, kGemmBF16,
              kGemmBF16, kGemmBF16)
// Mixed inputs, which the CPU runtime widens: here they fail the step.
AMP_CUDA_GEMM(f32_f16_f32, float, F16Bits, float, kGemmF32, kGemmF16, kGemmF32)
AMP_CUDA_GEMM(f32_bf16_f32, float, BF16Bits, float, kGemmF32, kGemmBF16,
              kGemmF32)
AMP_CUDA_GEMM(f16_f32_f32, F16Bits, float, float, kGemmF16, kGemmF32, kGemmF32)
AMP_CUDA_GEMM(f16_bf16_f32, F16Bits, BF16Bits, float, kGemmF16, kGemmBF16,
              kGemmF32)
AMP_CUDA_GEMM(bf16_f32_f32, BF16Bits, float, float, kGemmBF16, kGemmF32,
              kGemmF32)
AMP_CUDA_GEMM(bf16_f16_f32, BF16Bits, F16Bits, float, kGemmBF16, kGemmF16,
              kGemmF32)

// Records with a bias epilogue (amp_gemm_bias_*): then the bias (m elements
// of D's type, cuBLASLt's default bias type: f32, or the inputs' f16 or
// bf16 where D is rounded to it); with a bias gradient (amp_gemm_bgrad_*):
// then the gradient, which the call writes.
#define AMP_CUDA_GEMM_BIAS(KIND, NAME, T, K, TD, KD, IS_GRADIENT)              \
  extern "C" void _mlir_ciface_amp_gemm_##KIND##_##NAME(                       \
      UnrankedMemRefType<int64_t> *record, UnrankedMemRefType<T> *a,           \
      UnrankedMemRefType<T> *b, UnrankedMemRefType<TD> *d,                     \
      UnrankedMemRefType<TD> *bias) {                                          \
    runGemmRecord(*record, getData(*a), getData(*b),                           \
                  const_cast<char *>(getData(*d)), K, K, KD, nullptr, nullptr, \
                  getData(*bias), IS_GRADIENT);                                \
  }

AMP_CUDA_GEMM_BIAS(bias, f32_f32_f32, float, kGemmF32, float, kGemmF32, false)
AMP_CUDA_GEMM_BIAS(bias, f16_f16_f32, F16Bits, kGemmF16, float, kGemmF32, false)
AMP_CUDA_GEMM_BIAS(bias, bf16_bf16_f32, BF16Bits, kGemmBF16, float, kGemmF32,
                   false)
AMP_CUDA_GEMM_BIAS(bias, f16_f16_f16, F16Bits, kGemmF16, F16Bits, kGemmF16,
                   false)
AMP_CUDA_GEMM_BIAS(bias, bf16_bf16_bf16, BF16Bits, kGemmBF16, BF16Bits,
                   kGemmBF16, false)
AMP_CUDA_GEMM_BIAS(bgrad, f32_f32_f32, float, kGemmF32, float, kGemmF32, true)
AMP_CUDA_GEMM_BIAS(bgrad, f16_f16_f32, F16Bits, kGemmF16, float, kGemmF32, true)
AMP_CUDA_GEMM_BIAS(bgrad, bf16_bf16_f32, BF16Bits, kGemmBF16, float, kGemmF32,
                   true)

// Records whose activation has an aux matrix of D's type (GELU's input) or
// a ReLU bit mask (i8, IS_MASK): amp_gemm_<KIND>_* (then the aux) and
// amp_gemm_bias_<KIND>_* (then the bias and the aux), KIND `aux` or `mask`.
#define AMP_CUDA_GEMM_WITH_AUX(KIND, NAME, T, K, TD, KD, TAUX, IS_MASK)        \
  extern "C" void _mlir_ciface_amp_gemm_##KIND##_##NAME(                       \
      UnrankedMemRefType<int64_t> *record, UnrankedMemRefType<T> *a,           \
      UnrankedMemRefType<T> *b, UnrankedMemRefType<TD> *d,                     \
      UnrankedMemRefType<TAUX> *aux) {                                         \
    runGemmRecord(*record, getData(*a), getData(*b),                           \
                  const_cast<char *>(getData(*d)), K, K, KD, nullptr, nullptr, \
                  nullptr, false, getData(*aux), IS_MASK);                     \
  }                                                                            \
  extern "C" void _mlir_ciface_amp_gemm_bias_##KIND##_##NAME(                  \
      UnrankedMemRefType<int64_t> *record, UnrankedMemRefType<T> *a,           \
      UnrankedMemRefType<T> *b, UnrankedMemRefType<TD> *d,                     \
      UnrankedMemRefType<TD> *bias, UnrankedMemRefType<TAUX> *aux) {           \
    runGemmRecord(*record, getData(*a), getData(*b),                           \
                  const_cast<char *>(getData(*d)), K, K, KD, nullptr, nullptr, \
                  getData(*bias), false, getData(*aux), IS_MASK);              \
  }

#define AMP_CUDA_GEMM_AUX_AND_MASK(NAME, T, K, TD, KD)                         \
  AMP_CUDA_GEMM_WITH_AUX(aux, NAME, T, K, TD, KD, TD, false)                   \
  AMP_CUDA_GEMM_WITH_AUX(mask, NAME, T, K, TD, KD, uint8_t, true)

AMP_CUDA_GEMM_AUX_AND_MASK(f32_f32_f32, float, kGemmF32, float, kGemmF32)
AMP_CUDA_GEMM_AUX_AND_MASK(f16_f16_f32, F16Bits, kGemmF16, float, kGemmF32)
AMP_CUDA_GEMM_AUX_AND_MASK(bf16_bf16_f32, BF16Bits, kGemmBF16, float, kGemmF32)
AMP_CUDA_GEMM_AUX_AND_MASK(f16_f16_f16, F16Bits, kGemmF16, F16Bits, kGemmF16)
AMP_CUDA_GEMM_AUX_AND_MASK(bf16_bf16_bf16, BF16Bits, kGemmBF16, BF16Bits,
                           kGemmBF16)

// FP8 records: then A's and B's dequantization factors, 0-d f32 memrefs
// whose device pointers cuBLASLt reads as its A and B scale pointers.
#define AMP_CUDA_GEMM_FP8(NAME, KA, KB)                                        \
  extern "C" void _mlir_ciface_amp_gemm_##NAME(                                \
      UnrankedMemRefType<int64_t> *record, UnrankedMemRefType<uint8_t> *a,     \
      UnrankedMemRefType<uint8_t> *b, UnrankedMemRefType<float> *d,            \
      UnrankedMemRefType<float> *scaleA, UnrankedMemRefType<float> *scaleB) {  \
    runGemmRecord(*record, getData(*a), getData(*b),                           \
                  const_cast<char *>(getData(*d)), KA, KB, kGemmF32,           \
                  getData(*scaleA), getData(*scaleB));                         \
  }

AMP_CUDA_GEMM_FP8(f8e4m3_f8e4m3_f32, kGemmF8E4M3, kGemmF8E4M3)
AMP_CUDA_GEMM_FP8(f8e4m3_f8e5m2_f32, kGemmF8E4M3, kGemmF8E5M2)
AMP_CUDA_GEMM_FP8(f8e5m2_f8e4m3_f32, kGemmF8E5M2, kGemmF8E4M3)

//===----------------------------------------------------------------------===//
// Convolution records (amp-convolutions-to-dnn-records).
//===----------------------------------------------------------------------===//

// The record, then the first factor (X, or dY backward data), the second
// factor and the result, like the CPU runtime's entry points; one type
// throughout (cuDNN's rule for these).
#define AMP_CUDA_CONV(NAME, T, KIND)                                           \
  extern "C" void _mlir_ciface_amp_conv_##NAME(                                \
      UnrankedMemRefType<int64_t> *record, UnrankedMemRefType<T> *first,       \
      UnrankedMemRefType<T> *factor, UnrankedMemRefType<T> *result) {          \
    runConvRecord(*record, getData(*first), getData(*factor),                  \
                  const_cast<char *>(getData(*result)), KIND);                 \
  }

AMP_CUDA_CONV(f32_f32_f32, float, kGemmF32)
AMP_CUDA_CONV(f64_f64_f64, double, kGemmF64)
AMP_CUDA_CONV(f16_f16_f16, F16Bits, kGemmF16)
AMP_CUDA_CONV(bf16_bf16_bf16, BF16Bits, kGemmBF16)
