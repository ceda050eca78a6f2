//===- CUDALowering.cpp - Graph to kernels and host code for CUDA ---------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// --amp-lower-to-cuda: the CPU pipeline's fusion and bufferization, then
// convolutions as cuDNN records (amp_conv calls), GEMMs as cuBLASLt records
// (amp_gemm calls), every other linalg op as a
// grid of blocks and threads (amp-linalg-to-grid-loops) outlined into a
// kernel, kernels compiled by ptxas for each chip into gpu.binary ops, and
// host code in the LLVM dialect that calls the runtime's mgpu* functions.
//
//===----------------------------------------------------------------------===//

#include "amp/Pipelines/Pipelines.h"

#include "mlir/Pass/PassRegistry.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

/// Up to the kernels' grid loops: the CPU pipeline's fusion and
/// bufferization (without its contraction vectorization, and with large
/// reductions split first), GEMMs as records, grid loops (unit dimensions
/// dropped first, so that ops over the same points fuse into one grid) with
/// FP8 casts as integer arithmetic (NVPTX has no f8 truncf/extf in LLVM
/// 22).
static std::string getGridLoopPasses(const amp::CUDALoweringOptions &options) {
  // Reductions with few outputs split for threads (the pass's defaults).
  std::string passes = amp::getFuseAndBufferizePasses(
      /*vectorizeContractions=*/false, /*splitReductionsOptions=*/"",
      /*freeEarly=*/false);
  auto flag = [](bool value) { return value ? "true" : "false"; };
  bool fuseGrids = options.fuseGrids;
  return passes +
         "func.func(amp-store-fp8-gemm-operands),"
         "amp-convolutions-to-dnn-records,amp-contractions-to-gemm-records{"
         "warn-unrecorded=true transposes=" +
         flag(options.gemmTransposes) +
         "},func.func(amp-parallelize-loop-nests{atomic-updates=true},"
         "amp-host-data-to-kernels,linalg-fold-unit-extent-dims,"
         "amp-linalg-to-grid-loops{block-size=" +
         std::to_string(options.blockSize) + " fuse=" + flag(fuseGrids) +
         " fuse-independent=" +
         flag(fuseGrids && options.fuseIndependentGrids) +
         " row-lanes=" + std::to_string(options.rowLanes) +
         "},amp-expand-fp8-casts,amp-plan-buffers),";
}

LogicalResult amp::buildGridLoopsOnCPUPipeline(OpPassManager &pm, bool reverse,
                                               int64_t blockSize) {
  CUDALoweringOptions options;
  options.blockSize = blockSize;
  return parsePassPipeline(
      getGridLoopPasses(options) +
          (reverse ? "func.func(amp-reverse-parallel-loops)," : "") +
          getCPULoopsToLLVMPasses().str(),
      pm, llvm::errs());
}

/// The PTX ISA each chip needs (../shared/TOOLCHAIN.md): LLVM aborts when a
/// chip is given an older one.
static std::optional<llvm::StringRef> getPTXFeatures(llvm::StringRef chip) {
  if (chip == "sm_80")
    return llvm::StringRef("+ptx70");
  if (chip == "sm_90")
    return llvm::StringRef("+ptx80");
  return std::nullopt;
}

LogicalResult amp::buildCUDALoweringPipeline(OpPassManager &pm,
                                             const CUDALoweringOptions &options,
                                             bool convertGraph) {
  if (options.chips.empty()) {
    llvm::errs() << "amp-lower-to-cuda: no chip to compile for\n";
    return failure();
  }
  std::string toolkit = options.toolkit.empty()
                            ? std::string(AMP_CUDA_TOOLKIT_ROOT)
                            : options.toolkit.getValue();
  llvm::SmallString<128> ptxas(toolkit);
  llvm::sys::path::append(ptxas, "bin", "ptxas");
  if (toolkit.empty() || !llvm::sys::fs::can_execute(ptxas)) {
    llvm::errs() << "amp-lower-to-cuda: no ptxas in the CUDA toolkit '"
                 << toolkit << "': pass toolkit=<root of the CUDA toolkit>\n";
    return failure();
  }
  if (convertGraph)
    addGraphToLinalgPasses(pm, /*hostBranches=*/false);
  std::string pipeline = getGridLoopPasses(options);
  llvm::raw_string_ostream os(pipeline);
  os << "func.func(amp-grid-phases-to-gpu,convert-parallel-loops-to-gpu),"
     << "gpu-launch-sink-index-computations,gpu-kernel-outlining,"
     << "amp-place-gpu-buffers,func.func(amp-async-gpu-work),";
  for (const std::string &chip : options.chips) {
    std::optional<llvm::StringRef> features = getPTXFeatures(chip);
    if (!features) {
      llvm::errs() << "amp-lower-to-cuda: unknown chip '" << chip
                   << "' (sm_80 or sm_90)\n";
      return failure();
    }
    os << "nvvm-attach-target{chip=" << chip << " features=" << *features
       << " O=3},";
  }
  // Upstream's gpu-lower-to-nvvm-pipeline, with the CPU pipeline's host
  // lowering in the middle.
  os << "convert-vector-to-scf{full-unroll=true},lower-affine,"
     << "convert-scf-to-cf,expand-strided-metadata,lower-affine,"
     << "gpu.module(convert-gpu-to-nvvm,canonicalize,cse,"
     << "reconcile-unrealized-casts),"
     << "convert-vector-to-llvm,finalize-memref-to-llvm,convert-ub-to-llvm,"
     << "convert-math-to-llvm,convert-math-to-libm,convert-arith-to-llvm,"
     << "convert-index-to-llvm,convert-cf-to-llvm,convert-func-to-llvm,"
     << "gpu-to-llvm,amp-gpu-module-to-binary{toolkit=" << toolkit
     << " format=" << options.format
     << "},amp-merge-gpu-objects{toolkit=" << toolkit << "},"
     << "canonicalize,reconcile-unrealized-casts";
  return parsePassPipeline(pipeline, pm, llvm::errs());
}
