//===- ContractionsToBLAS.cpp - linalg.contract to runtime GEMM calls -----===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// The amp-contractions-to-blas pass: replaces each linalg.contract on
// memrefs by a call to the CPU runtime's amp_contract_* function
// (include/amp/Runtime/CPURuntime.h), which runs it through OpenBLAS.
//
//===----------------------------------------------------------------------===//

#include "EntryPoints.h"

#include "amp/Conversion/Passes.h"
#include "amp/Runtime/CPURuntime.h"
#include "amp/Runtime/GemmRecord.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::amp {
#define GEN_PASS_DEF_CONTRACTIONSTOBLAS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp::runtime;

/// The name of an element type in the runtime's entry points.
static StringRef getTypeName(Type type) {
  if (isa<Float8E4M3FNType>(type))
    return "f8e4m3";
  if (isa<Float8E5M2Type>(type))
    return "f8e5m2";
  if (type.isF16())
    return "f16";
  if (type.isBF16())
    return "bf16";
  return type.isF64() ? "f64" : "f32";
}

std::string mlir::amp::getContractEntryName(Type a, Type b, Type acc,
                                            StringRef prefix) {
  auto isInput = [](Type type) {
    return type.isF32() || type.isF16() || type.isBF16();
  };
  bool f64 = acc.isF64() && a.isF64() && b.isF64();
  bool f32 = acc.isF32() && isInput(a) && isInput(b);
  if (!f64 && !f32)
    return "";
  return (prefix + getTypeName(a) + "_" + getTypeName(b) + "_" +
          getTypeName(acc))
      .str();
}

int64_t mlir::amp::getGemmDataType(Type type) {
  if (isa<Float8E4M3FNType>(type))
    return runtime::kGemmF8E4M3;
  if (isa<Float8E5M2Type>(type))
    return runtime::kGemmF8E5M2;
  if (type.isF16())
    return runtime::kGemmF16;
  if (type.isBF16())
    return runtime::kGemmBF16;
  return type.isF64() ? runtime::kGemmF64 : runtime::kGemmF32;
}

std::string mlir::amp::getRoundedResultEntryName(Type input, Type result,
                                                 StringRef prefix) {
  if (input != result || !(input.isF16() || input.isBF16()))
    return "";
  std::string name = getTypeName(input).str();
  return (prefix + name + "_" + name + "_" + name).str();
}

std::string mlir::amp::getFP8GemmEntryName(Type a, Type b, Type d) {
  auto isFP8 = [](Type type) {
    return isa<Float8E4M3FNType, Float8E5M2Type>(type);
  };
  // cuBLASLt has no E5M2 x E5M2 GEMM.
  if (!isFP8(a) || !isFP8(b) || !d.isF32() ||
      (isa<Float8E5M2Type>(a) && isa<Float8E5M2Type>(b)))
    return "";
  return (kGemmEntryPrefix + getTypeName(a) + "_" + getTypeName(b) + "_" +
          getTypeName(d))
      .str();
}

func::FuncOp amp::getOrDeclareEntryPoint(SymbolTable &symbols, ModuleOp module,
                                         StringRef name, ValueRange arguments) {
  if (auto existing = symbols.lookup<func::FuncOp>(name))
    return existing;
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  auto declaration = func::FuncOp::create(
      b, module.getLoc(), name,
      b.getFunctionType(TypeRange(arguments), TypeRange()));
  declaration.setPrivate();
  declaration->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                       b.getUnitAttr());
  symbols.insert(declaration);
  return declaration;
}

Value amp::getRecordMemRef(OpBuilder &b, SymbolTable &symbols, ModuleOp module,
                           llvm::DenseMap<Attribute, StringAttr> &globals,
                           Location loc, StringRef name,
                           ArrayRef<int64_t> record) {
  int64_t size = record.size();
  auto type = MemRefType::get({size}, b.getI64Type());
  auto value = DenseIntElementsAttr::get(
      RankedTensorType::get({size}, b.getI64Type()), record);
  StringAttr &symbol = globals[value];
  if (!symbol) {
    OpBuilder top = OpBuilder::atBlockBegin(module.getBody());
    auto global = memref::GlobalOp::create(
        top, loc, name, top.getStringAttr("private"), type, value,
        /*constant=*/true, /*alignment=*/nullptr);
    symbol = symbols.insert(global);
  }
  Value ranked = memref::GetGlobalOp::create(b, loc, type, symbol);
  return castToUnranked(b, loc, ranked);
}

Value amp::castToUnranked(OpBuilder &b, Location loc, Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  return memref::CastOp::create(
      b, loc,
      UnrankedMemRefType::get(type.getElementType(), type.getMemorySpace()),
      memref);
}

/// The entry point that computes `op` (on memrefs, with projected
/// permutations), or "" when the runtime has none.
static std::string getEntryName(linalg::ContractOp op) {
  if (!op.hasPureBufferSemantics() || op->getNumOperands() != 3 ||
      op.getNumLoops() > kMaxContractLoops ||
      !llvm::all_of(op.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isProjectedPermutation(); }))
    return "";
  auto elementType = [&](unsigned operand) {
    return cast<MemRefType>(op->getOperand(operand).getType()).getElementType();
  };
  return amp::getContractEntryName(elementType(0), elementType(1),
                                   elementType(2));
}

/// `memref` as a view over all `loopSizes` loops of the contraction: the
/// stride of the dimension that `map` says indexes a loop, 0 for loops it
/// does not index; then cast to an unranked memref.
static Value buildLoopView(OpBuilder &b, Location loc, Value memref,
                           AffineMap map, ArrayRef<Value> loopSizes) {
  auto type = cast<MemRefType>(memref.getType());
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  auto metadata = memref::ExtractStridedMetadataOp::create(b, loc, memref);
  SmallVector<OpFoldResult> strides(loopSizes.size(), zero);
  for (auto [position, expr] : llvm::enumerate(map.getResults()))
    strides[cast<AffineDimExpr>(expr).getPosition()] =
        metadata.getStrides()[position];
  SmallVector<int64_t> dynamic(loopSizes.size(), ShapedType::kDynamic);
  auto viewType = MemRefType::get(
      dynamic, type.getElementType(),
      StridedLayoutAttr::get(b.getContext(), ShapedType::kDynamic, dynamic),
      type.getMemorySpace());
  // Sizes as values, constant or not, as the all-dynamic type says.
  SmallVector<OpFoldResult> sizes(loopSizes.begin(), loopSizes.end());
  Value view = memref::ReinterpretCastOp::create(
      b, loc, viewType, metadata.getBaseBuffer(),
      OpFoldResult(metadata.getOffset()), sizes, strides);
  auto unranked =
      UnrankedMemRefType::get(type.getElementType(), type.getMemorySpace());
  return memref::CastOp::create(b, loc, unranked, view);
}

/// The runtime's `roles` argument: which operands index each loop.
static int64_t getRoles(linalg::ContractOp op) {
  uint64_t roles = 0;
  for (auto [operand, map] : llvm::enumerate(op.getIndexingMapsArray())) {
    uint64_t bit = operand == 0 ? kInA : operand == 1 ? kInB : kInC;
    for (AffineExpr expr : map.getResults())
      roles |= bit << (kRoleBits * cast<AffineDimExpr>(expr).getPosition());
  }
  return int64_t(roles);
}

namespace {
struct ContractionsToBLASPass
    : amp::impl::ContractionsToBLASBase<ContractionsToBLASPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<std::pair<linalg::ContractOp, std::string>> contractions;
    module.walk([&](linalg::ContractOp op) {
      std::string name = getEntryName(op);
      if (!name.empty())
        contractions.emplace_back(op, std::move(name));
    });
    for (auto &[op, name] : contractions) {
      OpBuilder b(op);
      Location loc = op.getLoc();
      SmallVector<Value> loopSizes;
      auto linalgOp = cast<linalg::LinalgOp>(op.getOperation());
      for (Range range : linalgOp.createLoopRanges(b, loc))
        loopSizes.push_back(
            getValueOrCreateConstantIndexOp(b, loc, range.size));
      SmallVector<Value> arguments = {
          arith::ConstantIntOp::create(b, loc, getRoles(op), 64)};
      for (auto [operand, map] :
           llvm::zip(op->getOperands(), op.getIndexingMapsArray()))
        arguments.push_back(buildLoopView(b, loc, operand, map, loopSizes));
      func::FuncOp callee =
          amp::getOrDeclareEntryPoint(symbols, module, name, arguments);
      func::CallOp::create(b, loc, callee, arguments);
      op.erase();
    }
  }
};
} // namespace
