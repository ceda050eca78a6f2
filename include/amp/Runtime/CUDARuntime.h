//===- CUDARuntime.h - The C interface of the CUDA runtime ------*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// libamp_cuda_runtime (lib/Runtime/CUDA): what the host code of
// --amp-lower-to-cuda calls (upstream's mgpu* functions, on the CUDA driver
// API, and amp_gemm_* on cuBLASLt) and the calls around one step that
// amp-compile's entry points and amp-run --device=cuda make. The driver is
// loaded when first needed, so the library loads on machines without one.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_RUNTIME_CUDARUNTIME_H
#define AMP_RUNTIME_CUDARUNTIME_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Starts a step named `step`: takes the runtime's lock, sets up the driver,
/// the device (the current context's, else device $AMP_CUDA_DEVICE or 0)
/// and cuBLASLt on first use, and forgets the last step's error. The
/// pointers are the step's inputs and outputs, which name its CUDA graph
/// when AMP_CUDA_GRAPH=1 (none: no graph). Returns
///   0: run the step's code (uncaptured, or into a new graph);
///   1: the GPU cannot be used (the step's code does nothing on the GPU);
///   2: the step's graph was launched, its code must not run.
/// amp_cuda_step_end must be called after each.
int amp_cuda_step_begin(const char *step, const void *const *inputs,
                        int64_t numInputs, const void *const *outputs,
                        int64_t numOutputs);

/// Ends the step: launches the graph it captured, if any, waits for its
/// work, releases the lock. Returns 0, 1 when a call of the step failed
/// (amp_cuda_last_error says which), or 2 when its capture failed: then the
/// step must begin and run again (uncaptured).
int amp_cuda_step_end(void);

/// What step `step` did with CUDA graphs: "<n> captured, <m> replayed",
/// and why a capture was refused; "off ..." without AMP_CUDA_GRAPH=1.
const char *amp_cuda_graph_report(const char *step);

/// The first error of the last step, naming the step and the kernel or
/// library call; "" when it had none.
const char *amp_cuda_last_error(void);

#ifdef __cplusplus
}

namespace mlir::amp::runtime {
/// The runtime's step calls, by name, for the code that the compiler emits.
inline constexpr const char *kCUDAStepBegin = "amp_cuda_step_begin";
inline constexpr const char *kCUDAStepEnd = "amp_cuda_step_end";
inline constexpr const char *kCUDALastError = "amp_cuda_last_error";
inline constexpr const char *kCUDAGraphReport = "amp_cuda_graph_report";
/// amp_cuda_step_begin's and amp_cuda_step_end's statuses.
inline constexpr int kCUDAStepRun = 0, kCUDAStepFailed = 1,
                     kCUDAStepReplayed = 2, kCUDAStepAgain = 2;
} // namespace mlir::amp::runtime
#endif

#endif // AMP_RUNTIME_CUDARUNTIME_H
