//===- CPULowering.cpp - Graph to LLVM dialect for the CPU ----------------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// --amp-lower-to-cpu: what amp-run JIT-compiles. The pass list follows
// ../shared/TOOLCHAIN.md: FP16 and BF16 run natively after
// convert-arith-to-llvm; FP8 casts become integer arithmetic
// (amp-expand-fp8-casts) and what is left of FP8 goes through
// convert-arith-to-apfloat and a second convert-arith-to-llvm. GEMMs are
// calls to libamp_cpu_runtime (OpenBLAS), which the code must be linked or
// JIT-loaded with.
//
//===----------------------------------------------------------------------===//

#include "amp/Pipelines/Pipelines.h"

#include "amp/Conversion/Passes.h"
#include "amp/Dialect/ONNXGraph/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

/// Fusion, before bufferization: upstream passes and ours (GEMMs:
/// amp-raise-contractions, amp-fuse-elementwise in place of
/// linalg-fuse-elementwise-ops).
static constexpr llvm::StringLiteral kFusion =
    "func.func(canonicalize,cse,amp-raise-contractions,amp-fuse-elementwise,"
    "convert-elementwise-to-linalg,";

/// Before bufferization, after fusion: canonicalize and amp-unshare-fills;
/// then the pipeline's amp-split-reductions.
static constexpr llvm::StringLiteral kBeforeBufferization =
    "canonicalize,amp-unshare-fills,";

/// Bufferization with results as out-parameters (amp-copy-repeated-results
/// first). A while loop (a Loop node of a run-time condition) may carry a
/// new buffer from one iteration to the next.
static constexpr llvm::StringLiteral kBufferization =
    "amp-copy-repeated-results),"
    "one-shot-bufferize{bufferize-function-boundaries "
    "function-boundary-type-conversion=identity-layout-map "
    "allow-return-allocs-from-loops},"
    "buffer-results-to-out-params{hoist-static-allocs=true "
    "modify-public-functions=true},";

/// Upstream's buffer-deallocation-pipeline with amp-free-dead-buffers
/// (whose option follows) before the simplification, whose alias checks
/// are quadratic in the buffers one bufferization.dealloc frees.
static constexpr llvm::StringLiteral kDeallocation =
    "expand-realloc{emit-deallocs=false},canonicalize,"
    "ownership-based-buffer-deallocation,canonicalize,"
    "func.func(amp-free-dead-buffers{early=";
static constexpr llvm::StringLiteral kAfterDeallocation =
    "}),buffer-deallocation-simplification,"
    "bufferization-lower-deallocations,cse,canonicalize,"
    "convert-bufferization-to-memref,";

/// Floating-point sums in blocks of at most 32 terms, each level summed in
/// order (the error of a sum of n terms in order grows with n). Bias
/// gradients too, unless GEMM records take them as epilogues.
static std::string getBlockedSumsOptions(bool gemmRecords) {
  return std::string("serial-terms=32 split-bias-gradients=") +
         (gemmRecords ? "false" : "true");
}

/// The CPU's loops: GEMMs through BLAS (amp-contractions-to-blas), the rest
/// as plain loops with FP8 casts as integer arithmetic.
static constexpr llvm::StringLiteral kCPULoops =
    "amp-contractions-to-blas,"
    "func.func(convert-linalg-to-loops,canonicalize,amp-expand-fp8-casts),";

/// From loops (scf, affine, vector) on memrefs to the LLVM dialect, each
/// top-level loop nest a function of its own (for LLVM's compile time).
static constexpr llvm::StringLiteral kLoopsToLLVM =
    "amp-outline-loop-nests,"
    "convert-vector-to-scf{full-unroll=true},lower-affine,"
    "convert-scf-to-cf,expand-strided-metadata,lower-affine,"
    "convert-vector-to-llvm,"
    "finalize-memref-to-llvm,convert-ub-to-llvm,"
    "convert-math-to-llvm,convert-math-to-libm,"
    "convert-arith-to-llvm,convert-arith-to-apfloat,convert-arith-to-llvm,"
    "convert-index-to-llvm,convert-cf-to-llvm,convert-func-to-llvm,"
    "reconcile-unrealized-casts";

llvm::StringRef amp::getCPULoopsToLLVMPasses() { return kLoopsToLLVM; }

std::string
amp::getFuseAndBufferizePasses(bool vectorizeContractions,
                               llvm::StringRef splitReductionsOptions,
                               bool freeEarly) {
  return (kFusion +
          (vectorizeContractions ? "amp-vectorize-contractions," : "") +
          kBeforeBufferization + "amp-split-reductions{" +
          splitReductionsOptions + "}," + kBufferization + kDeallocation +
          (freeEarly ? "true" : "false") + kAfterDeallocation)
      .str();
}

void amp::addGraphToLinalgPasses(OpPassManager &pm, bool hostBranches) {
  // YieldOp's inputs keep their names as outputs before expansions replace
  // them.
  pm.addNestedPass<func::FuncOp>(onnxg::createONNXGraphExposeYield());
  pm.addNestedPass<func::FuncOp>(onnxg::createONNXGraphExpandATen());
  pm.addNestedPass<func::FuncOp>(onnxg::createONNXGraphExpandRecurrent());
  pm.addNestedPass<func::FuncOp>(onnxg::createONNXGraphExpandAttention());
  pm.addNestedPass<func::FuncOp>(onnxg::createONNXGraphExpandGradients());
  ConvertONNXGraphToLinalgOptions options;
  options.hostBranches = hostBranches;
  pm.addPass(createConvertONNXGraphToLinalg(options));
}

LogicalResult amp::buildCPULoweringPipeline(OpPassManager &pm,
                                            bool convertGraph,
                                            bool gemmRecords) {
  if (convertGraph)
    addGraphToLinalgPasses(pm);
  std::string pipeline =
      getFuseAndBufferizePasses(/*vectorizeContractions=*/true,
                                getBlockedSumsOptions(gemmRecords),
                                // The records passes move a GEMM to its
                                // epilogue, past its operands' last use.
                                /*freeEarly=*/!gemmRecords) +
      (kCPULoops + kLoopsToLLVM).str();
  if (gemmRecords) {
    // Before the BLAS pass, which takes the contractions without a record.
    size_t blas = pipeline.find("amp-contractions-to-blas,");
    assert(blas != std::string::npos && "the pipeline has the BLAS pass");
    pipeline.insert(blas, "func.func(amp-store-fp8-gemm-operands),"
                          "amp-contractions-to-gemm-records,");
  }
  return parsePassPipeline(pipeline, pm, llvm::errs());
}

void amp::registerAMPLoweringPipelines() {
  PassPipelineRegistration<>(
      "amp-lower-to-cpu",
      "Lower a graph to the LLVM dialect for the CPU (what amp-run runs)",
      [](OpPassManager &pm) {
        if (failed(buildCPULoweringPipeline(pm)))
          llvm::report_fatal_error("amp-lower-to-cpu: bad pass list");
      });
  // Registered without PassPipelineRegistration, whose builder cannot fail:
  // a missing toolkit is a user error, not a crash.
  registerPassPipeline(
      "amp-lower-to-cuda",
      "Lower a graph to GPU kernels (a cubin per chip) and LLVM host code "
      "that calls the CUDA runtime and cuBLASLt",
      [](OpPassManager &pm, StringRef text,
         function_ref<LogicalResult(const Twine &)> errorHandler) {
        CUDALoweringOptions options;
        if (failed(options.parseFromString(text)))
          return errorHandler("amp-lower-to-cuda: bad options '" + text + "'");
        return buildCUDALoweringPipeline(pm, options);
      },
      [](function_ref<void(const detail::PassOptions &)> printOptions) {
        printOptions(CUDALoweringOptions());
      });
}
