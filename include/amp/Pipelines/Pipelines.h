//===- Pipelines.h - Lowering pipelines of amp-opt --------------*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// The pipelines that take a (mixed-precision) graph to executable code:
// --amp-lower-to-cpu (graph -> linalg -> fused, bufferized loops -> LLVM)
// and --amp-lower-to-cuda (the same fused loops as GPU kernels, GEMMs as
// cuBLASLt records, host code in LLVM).
//
//===----------------------------------------------------------------------===//

#ifndef AMP_PIPELINES_PIPELINES_H
#define AMP_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::amp {

/// Adds what takes a graph to linalg on tensors: onnxg-expose-yield,
/// onnxg-expand-aten, onnxg-expand-recurrent, onnxg-expand-attention,
/// onnxg-expand-gradients, then convert-onnxg-to-linalg (with `hostBranches`:
/// an If or Loop of a run-time condition becomes an scf.if or scf.while, which
/// the CUDA step cannot evaluate).
void addGraphToLinalgPasses(OpPassManager &pm, bool hostBranches = true);

/// Adds the CPU lowering to `pm` (docs/Lowering.md): addGraphToLinalgPasses
/// (unless `convertGraph` is false: the module is on linalg already),
/// elementwise fusion, one-shot bufferization with results turned into
/// out-parameters, loops, and the LLVM dialect (FP8 through
/// convert-arith-to-apfloat). `gemmRecords` runs the GEMMs that have a
/// record through amp-contractions-to-gemm-records (the CUDA backend's
/// cuBLASLt records, executed on the CPU). Returns failure when a pass
/// cannot be built.
LogicalResult buildCPULoweringPipeline(OpPassManager &pm,
                                       bool convertGraph = true,
                                       bool gemmRecords = false);

/// The pass list that fuses elementwise ops and bufferizes a module on
/// linalg (the first half of --amp-lower-to-cpu and --amp-lower-to-cuda);
/// `vectorizeContractions` adds amp-vectorize-contractions (CPU only), and
/// amp-split-reductions runs with `splitReductionsOptions` before
/// bufferization (blocked sums on the CPU, threads on the GPU), and
/// amp-free-dead-buffers frees each buffer after its last use when
/// `freeEarly` (the CPU), else at the function's end (the GPU, whose
/// amp-plan-buffers places them).
std::string getFuseAndBufferizePasses(bool vectorizeContractions,
                                      llvm::StringRef splitReductionsOptions,
                                      bool freeEarly);

/// The CPU pipeline's passes from loops on memrefs to the LLVM dialect.
llvm::StringRef getCPULoopsToLLVMPasses();

/// The options of --amp-lower-to-cuda.
struct CUDALoweringOptions : public PassPipelineOptions<CUDALoweringOptions> {
  ListOption<std::string> chips{
      *this, "chips",
      llvm::cl::desc("the chips to compile the kernels for (sm_80, sm_90)"),
      llvm::cl::list_init<std::string>({"sm_80", "sm_90"})};
  Option<std::string> toolkit{
      *this, "toolkit",
      llvm::cl::desc("root of the CUDA toolkit that has ptxas (default: the "
                     "one CMake found)")};
  Option<std::string> format{
      *this, "format",
      llvm::cl::desc("what amp-gpu-module-to-binary embeds: bin (cubin), isa "
                     "(PTX) or fatbin"),
      llvm::cl::init("bin")};
  Option<int64_t> blockSize{*this, "block-size",
                            llvm::cl::desc("threads per block of a kernel"),
                            llvm::cl::init(256)};
  Option<bool> fuseGrids{
      *this, "fuse-grids",
      llvm::cl::desc("run consecutive ops with the same parallel iteration "
                     "space as one kernel (amp-linalg-to-grid-loops' fuse); "
                     "false: one kernel per op"),
      llvm::cl::init(true)};
  Option<bool> fuseIndependentGrids{
      *this, "fuse-independent-grids",
      llvm::cl::desc("with fuse-grids, also run consecutive independent "
                     "kernels as one (amp-linalg-to-grid-loops' "
                     "fuse-independent)"),
      llvm::cl::init(true)};
  Option<int64_t> rowLanes{
      *this, "row-lanes",
      llvm::cl::desc("threads that share a row of a reduction and its "
                     "elementwise ops (amp-linalg-to-grid-loops' "
                     "row-lanes); 1: one thread per row"),
      llvm::cl::init(32)};
  Option<bool> gemmTransposes{
      *this, "gemm-transposes",
      llvm::cl::desc("let a GEMM read the source of a transposed copy of "
                     "its input, or write its result transposed, in place of "
                     "the copy (amp-contractions-to-gemm-records' "
                     "transposes); false: the copies stay kernels"),
      llvm::cl::init(true)};
};

/// Adds the CUDA lowering to `pm` (docs/Lowering.md): addGraphToLinalgPasses
/// (unless `convertGraph` is false), the CPU pipeline's fusion and
/// bufferization, GEMM records, grid loops outlined into kernels, buffers
/// in host-shared memory, ptxas for each chip, and host code in the LLVM
/// dialect. Returns failure, with a message, for bad options or a missing
/// ptxas.
LogicalResult buildCUDALoweringPipeline(OpPassManager &pm,
                                        const CUDALoweringOptions &options,
                                        bool convertGraph = true);

/// Adds --amp-lower-to-cuda's passes up to its kernels' grid loops (GEMM
/// records, amp-linalg-to-grid-loops with `blockSize`), then the CPU's
/// lowering of loops, where the block and thread loops run sequentially
/// (last to first with `reverse`: amp-reverse-parallel-loops): the kernels'
/// arithmetic, executed on the CPU (amp-run --grid-loops).
LogicalResult buildGridLoopsOnCPUPipeline(OpPassManager &pm,
                                          bool reverse = false,
                                          int64_t blockSize = 256);

/// Registers --amp-lower-to-cpu and --amp-lower-to-cuda.
void registerAMPLoweringPipelines();

} // namespace mlir::amp

#endif // AMP_PIPELINES_PIPELINES_H
