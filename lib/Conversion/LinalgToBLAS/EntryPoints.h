//===- EntryPoints.h - The runtime's contraction entry points ---*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// Which element types libamp_cpu_runtime has a GEMM for, shared by the two
// passes of the BLAS path so that they raise exactly what can be called.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_LIB_CONVERSION_LINALGTOBLAS_ENTRYPOINTS_H
#define AMP_LIB_CONVERSION_LINALGTOBLAS_ENTRYPOINTS_H

#include "amp/Runtime/CPURuntime.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Types.h"

#include <string>

namespace mlir::amp {

/// The runtime's entry point `<prefix><A>_<B>_<C>` (`amp_contract_` for the
/// BLAS path, `amp_gemm_` for GEMM records) for these operand and
/// accumulator element types (f32 with f32, f16 or bf16 operands, or f64
/// throughout), or "" when it has none.
std::string getContractEntryName(Type a, Type b, Type acc,
                                 StringRef prefix = runtime::kContractPrefix);

/// The private declaration of the runtime entry point `name` taking
/// `arguments`, with the C interface that passes memref descriptors by
/// pointer (`llvm.emit_c_interface`); declared once per module.
func::FuncOp getOrDeclareEntryPoint(SymbolTable &symbols, ModuleOp module,
                                    StringRef name, ValueRange arguments);

} // namespace mlir::amp

#endif // AMP_LIB_CONVERSION_LINALGTOBLAS_ENTRYPOINTS_H
