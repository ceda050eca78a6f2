//===- CPURuntime.h - Functions the CPU pipeline's code calls ---*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// The C interface of libamp_cpu_runtime, which amp-run loads next to MLIR's
// runner utilities. amp-contractions-to-blas emits the calls; the names and
// the role encoding here are the contract between the two.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_RUNTIME_CPURUNTIME_H
#define AMP_RUNTIME_CPURUNTIME_H

#include <cstdint>

namespace mlir::amp::runtime {

/// The prefix of the contraction entry points: `amp_contract_<A>_<B>_<C>`
/// with element types f32, f16, bf16 (A, B; C f32) or f64 (all three).
inline constexpr const char *kContractPrefix = "amp_contract_";

/// Bits of one loop's role in the `roles` argument: which of A, B and C the
/// loop indexes. Loop `l` uses bits [3l, 3l + 3).
enum ContractRole : uint64_t { kInA = 1, kInB = 2, kInC = 4 };
inline constexpr unsigned kRoleBits = 3;
/// The most loops `roles` can describe.
inline constexpr unsigned kMaxContractLoops = 64 / kRoleBits;

} // namespace mlir::amp::runtime

#endif // AMP_RUNTIME_CPURUNTIME_H
