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

#ifdef __cplusplus
extern "C" {
#endif

/// Starts a step named `step`: takes the runtime's lock, sets up the driver,
/// the device (the current context's, else device $AMP_CUDA_DEVICE or 0)
/// and cuBLASLt on first use, and forgets the last step's error. Returns 0,
/// or 1 when the GPU cannot be used (then amp_cuda_step_end must still be
/// called, and the step's code does nothing on the GPU).
int amp_cuda_step_begin(const char *step);

/// Ends the step: waits for its work, releases the lock. Returns 0, or 1
/// when a call of the step failed (amp_cuda_last_error says which).
int amp_cuda_step_end(void);

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
} // namespace mlir::amp::runtime
#endif

#endif // AMP_RUNTIME_CUDARUNTIME_H
