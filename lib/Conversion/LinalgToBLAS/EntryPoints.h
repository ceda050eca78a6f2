//===- EntryPoints.h - The runtime's contraction entry points ---*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// Which element types libamp_cpu_runtime has a GEMM for, shared by the
// passes that call the runtime's libraries so that they raise exactly what
// can be called, and how those passes pass a parameter record.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_LIB_CONVERSION_LINALGTOBLAS_ENTRYPOINTS_H
#define AMP_LIB_CONVERSION_LINALGTOBLAS_ENTRYPOINTS_H

#include "amp/Runtime/CPURuntime.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Types.h"

#include "llvm/ADT/DenseMap.h"

#include <string>

namespace mlir::amp {

/// The runtime's entry point `<prefix><A>_<B>_<C>` (`amp_contract_` for the
/// BLAS path, `amp_gemm_` for GEMM records) for these operand and
/// accumulator element types (f32 with f32, f16 or bf16 operands, or f64
/// throughout), or "" when it has none.
std::string getContractEntryName(Type a, Type b, Type acc,
                                 StringRef prefix = runtime::kContractPrefix);

/// `type` as a library call's record names it (a runtime::GemmDataType).
int64_t getGemmDataType(Type type);
/// The runtime's entry point `<prefix><T>_<T>_<T>` (`amp_gemm_`,
/// `amp_conv_`) of a library call on f16 or bf16 inputs of type `input`
/// that rounds its f32 accumulator to a `result` of that type, or "" when
/// it has none.
std::string getRoundedResultEntryName(Type input, Type result,
                                      StringRef prefix);
/// The runtime's FP8 GEMM record entry point `amp_gemm_<A>_<B>_<D>` for
/// FP8 operands `a` and `b` (E4M3FN or E5M2, not both E5M2) and an f32
/// result `d`, or "" when it has none.
std::string getFP8GemmEntryName(Type a, Type b, Type d);

/// The private declaration of the runtime entry point `name` taking
/// `arguments`, with the C interface that passes memref descriptors by
/// pointer (`llvm.emit_c_interface`); declared once per module.
func::FuncOp getOrDeclareEntryPoint(SymbolTable &symbols, ModuleOp module,
                                    StringRef name, ValueRange arguments);

/// A library call's parameter record as an unranked i64 memref: a constant
/// `memref.global` named after `name`, one per distinct record value in
/// `globals`.
Value getRecordMemRef(OpBuilder &b, SymbolTable &symbols, ModuleOp module,
                      llvm::DenseMap<Attribute, StringAttr> &globals,
                      Location loc, StringRef name, ArrayRef<int64_t> record);

/// `memref` cast to an unranked memref, as the runtime's entry points take
/// their operands.
Value castToUnranked(OpBuilder &b, Location loc, Value memref);

} // namespace mlir::amp

#endif // AMP_LIB_CONVERSION_LINALGTOBLAS_ENTRYPOINTS_H
