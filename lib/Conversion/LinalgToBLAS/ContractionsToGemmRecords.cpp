//===- ContractionsToGemmRecords.cpp - linalg.contract to GEMM records ----===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// The amp-contractions-to-gemm-records pass: derives, at compile time, the
// cuBLASLt-style parameter record (include/amp/Runtime/GemmRecord.h) of
// each linalg.contract on memrefs with static shapes and strides, and
// replaces the contraction by a call to `amp_gemm` with that record. A
// zero fill of the output just before becomes the record's overwrite flag
// (cuBLASLt's beta 0) and is erased.
//
//===----------------------------------------------------------------------===//

#include "EntryPoints.h"

#include "amp/Conversion/OutputFills.h"
#include "amp/Conversion/Passes.h"
#include "amp/Runtime/GemmRecord.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/SymbolTable.h"

#include <array>
#include <optional>

namespace mlir::amp {
#define GEN_PASS_DEF_CONTRACTIONSTOGEMMRECORDS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp::runtime;

using GemmRecord = std::array<int64_t, kGemmRecordFields>;

namespace {
/// The loops of one role (batch, M, N or K) collapsed into one dimension:
/// its size and each operand's stride along it.
struct LoopGroup {
  int64_t size = 1;
  std::array<int64_t, 3> strides = {0, 0, 0};
};

/// How a column-major GEMM reads a stored matrix.
struct MatrixLayout {
  bool transposed;
  int64_t leadingDim;
};
} // namespace

/// The layout in which a GEMM reads a `rows` x `cols` matrix whose elements
/// are `rowStride` and `colStride` apart: column-major (rows contiguous), or
/// transposed (columns contiguous, cuBLAS's OP_T), or none.
static std::optional<MatrixLayout> getLayout(int64_t rows, int64_t cols,
                                             int64_t rowStride,
                                             int64_t colStride,
                                             bool allowTranspose) {
  if ((rows == 1 || rowStride == 1) && (cols == 1 || colStride >= rows))
    return MatrixLayout{false, cols == 1 ? rows : colStride};
  if (allowTranspose && (cols == 1 || colStride == 1) &&
      (rows == 1 || rowStride >= cols))
    return MatrixLayout{true, rows == 1 ? cols : rowStride};
  return std::nullopt;
}

/// `loops` (in loop order) as one dimension: each operand indexes all of
/// them, laid out contiguously (its stride the innermost loop's), or none
/// (stride 0); nullopt otherwise.
static std::optional<LoopGroup>
collapseLoops(ArrayRef<unsigned> loops, ArrayRef<AffineMap> maps,
              ArrayRef<SmallVector<int64_t>> strides,
              ArrayRef<int64_t> loopSizes) {
  LoopGroup group;
  for (unsigned loop : loops)
    group.size *= loopSizes[loop];
  for (auto [i, map] : llvm::enumerate(maps)) {
    unsigned indexed = 0;
    std::optional<int64_t> expected;
    for (unsigned loop : llvm::reverse(loops)) {
      std::optional<unsigned> position =
          map.getResultPosition(getAffineDimExpr(loop, map.getContext()));
      if (!position)
        continue;
      int64_t stride = strides[i][*position];
      if (!expected)
        group.strides[i] = stride;
      else if (stride != *expected)
        return std::nullopt;
      expected = stride * loopSizes[loop];
      ++indexed;
    }
    if (indexed != 0 && indexed != loops.size())
      return std::nullopt;
  }
  return group;
}

/// A record's code for an element type getContractEntryName accepts.
static int64_t getDataType(Type type) {
  if (type.isF16())
    return kGemmF16;
  if (type.isBF16())
    return kGemmBF16;
  return type.isF64() ? kGemmF64 : kGemmF32;
}

/// The record of `op`, or the reason it has none in `why`.
static std::optional<GemmRecord> deriveRecord(linalg::ContractOp op,
                                              std::string &why) {
  if (!op.hasPureBufferSemantics() || op->getNumOperands() != 3) {
    why = "not a contraction of three memrefs";
    return std::nullopt;
  }
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (!llvm::all_of(
          maps, [](AffineMap map) { return map.isProjectedPermutation(); })) {
    why = "an indexing map is not a projected permutation";
    return std::nullopt;
  }
  std::array<Type, 3> elementTypes;
  SmallVector<SmallVector<int64_t>> strides;
  for (auto [i, operand] : llvm::enumerate(op->getOperands())) {
    auto type = cast<MemRefType>(operand.getType());
    int64_t offset;
    SmallVector<int64_t> operandStrides;
    if (!type.hasStaticShape() ||
        failed(type.getStridesAndOffset(operandStrides, offset)) ||
        llvm::any_of(operandStrides, ShapedType::isDynamic)) {
      why = "operand " + std::to_string(i) + " has a dynamic shape or stride";
      return std::nullopt;
    }
    elementTypes[i] = type.getElementType();
    strides.push_back(std::move(operandStrides));
  }
  if (amp::getContractEntryName(elementTypes[0], elementTypes[1],
                                elementTypes[2])
          .empty()) {
    why = "element types (an f32 accumulator over f32, f16 or bf16, or f64 "
          "throughout)";
    return std::nullopt;
  }

  // Each loop's role from the operands that index it; each role's loops in
  // loop order, collapsed where every operand lays them out contiguously.
  auto linalgOp = cast<linalg::LinalgOp>(op.getOperation());
  SmallVector<int64_t> loopSizes = linalgOp.getStaticLoopRanges();
  enum Role { Batch, M, N, K };
  std::array<LoopGroup, 4> groups;
  std::array<SmallVector<unsigned>, 4> groupLoops;
  for (unsigned loop = 0; loop < loopSizes.size(); ++loop) {
    if (loopSizes[loop] == 1)
      continue;
    unsigned mask = 0;
    for (auto [i, map] : llvm::enumerate(maps))
      if (map.isFunctionOfDim(loop))
        mask |= 1u << i;
    Role role = mask == 7 ? Batch : mask == 5 ? M : mask == 6 ? N : K;
    if (mask != 7 && mask != 5 && mask != 6 && mask != 3) {
      why = "loop " + std::to_string(loop) + " indexes one operand only";
      return std::nullopt;
    }
    groupLoops[role].push_back(loop);
  }
  // The outer loops of an M or N role that do not collapse with the rest
  // become batch loops, the operand that does not index them shared by
  // every batch (a convolution's weight across images).
  auto collapse = [&](ArrayRef<unsigned> loops) {
    return collapseLoops(loops, maps, strides, loopSizes);
  };
  for (Role role : {M, N}) {
    SmallVector<unsigned> &loops = groupLoops[role];
    size_t first = 0;
    while (first < loops.size() && !collapse(ArrayRef(loops).drop_front(first)))
      ++first;
    groupLoops[Batch].append(loops.begin(), loops.begin() + first);
    loops.erase(loops.begin(), loops.begin() + first);
  }
  llvm::sort(groupLoops[Batch]);
  for (unsigned role = 0; role < 4; ++role) {
    std::optional<LoopGroup> group = collapse(groupLoops[role]);
    if (!group) {
      why = role == K ? "the reduction loops are not contiguous in an operand"
                      : "the batch loops are not contiguous in an operand";
      return std::nullopt;
    }
    groups[role] = *group;
  }

  // Column-major D = C (m x n), or D = C^T with the operands swapped when
  // C's rows are contiguous.
  const LoopGroup &gm = groups[M], &gn = groups[N], &gk = groups[K];
  for (bool swapped : {false, true}) {
    unsigned a = swapped ? 1 : 0, b = swapped ? 0 : 1;
    const LoopGroup &rows = swapped ? gn : gm, &cols = swapped ? gm : gn;
    std::optional<MatrixLayout> d =
        getLayout(rows.size, cols.size, rows.strides[2], cols.strides[2],
                  /*allowTranspose=*/false);
    std::optional<MatrixLayout> la =
        getLayout(rows.size, gk.size, rows.strides[a], gk.strides[a], true);
    std::optional<MatrixLayout> lb =
        getLayout(gk.size, cols.size, gk.strides[b], cols.strides[b], true);
    if (!d || !la || !lb)
      continue;
    int64_t batch = groups[Batch].size;
    auto batchStride = [&](unsigned i) {
      return batch == 1 ? 0 : groups[Batch].strides[i];
    };
    GemmRecord record = {};
    record[kGemmM] = rows.size;
    record[kGemmN] = cols.size;
    record[kGemmK] = gk.size;
    record[kGemmBatch] = batch;
    record[kGemmTransA] = la->transposed;
    record[kGemmTransB] = lb->transposed;
    record[kGemmLdA] = la->leadingDim;
    record[kGemmLdB] = lb->leadingDim;
    record[kGemmLdD] = d->leadingDim;
    record[kGemmBatchStrideA] = batchStride(a);
    record[kGemmBatchStrideB] = batchStride(b);
    record[kGemmBatchStrideD] = batchStride(2);
    record[kGemmTypeA] = getDataType(elementTypes[a]);
    record[kGemmTypeB] = getDataType(elementTypes[b]);
    record[kGemmTypeD] = getDataType(elementTypes[2]);
    record[kGemmSwapped] = swapped;
    return record;
  }
  why = "no column-major layout reads the operands in place";
  return std::nullopt;
}

namespace {
struct ContractionsToGemmRecordsPass
    : amp::impl::ContractionsToGemmRecordsBase<ContractionsToGemmRecordsPass> {
  using ContractionsToGemmRecordsBase::ContractionsToGemmRecordsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<std::pair<linalg::ContractOp, GemmRecord>> records;
    // One global per distinct record, by its value.
    llvm::DenseMap<Attribute, StringAttr> globals;
    module.walk([&](linalg::ContractOp op) {
      std::string why;
      if (std::optional<GemmRecord> record = deriveRecord(op, why))
        records.emplace_back(op, *record);
      else if (emitRemarks)
        op.emitRemark() << "no GEMM record: " << why;
    });
    for (auto &[op, record] : records) {
      linalg::FillOp zeros =
          amp::getZeroFillOfOutput(op, op.getDpsInits().front());
      record[kGemmOverwrite] = zeros ? 1 : 0;
      if (zeros)
        zeros.erase();
      if (emitRemarks)
        emitRecordRemark(op, record);
      OpBuilder b(op);
      Location loc = op.getLoc();
      SmallVector<Value> arguments = {amp::getRecordMemRef(
          b, symbols, module, globals, loc, "amp_gemm_record", record)};
      // A, B and D in the record's order.
      unsigned first = record[kGemmSwapped] ? 1 : 0;
      SmallVector<Type, 3> types;
      for (unsigned i : {first, 1 - first, 2u}) {
        Value operand = op->getOperand(i);
        types.push_back(cast<MemRefType>(operand.getType()).getElementType());
        arguments.push_back(amp::castToUnranked(b, loc, operand));
      }
      std::string name = amp::getContractEntryName(types[0], types[1], types[2],
                                                   kGemmEntryPrefix);
      func::CallOp::create(
          b, loc, amp::getOrDeclareEntryPoint(symbols, module, name, arguments),
          arguments);
      op.erase();
    }
  }

  void emitRecordRemark(linalg::ContractOp op, const GemmRecord &record) {
    static constexpr const char *kNames[kGemmRecordFields] = {
        "m",      "n",      "k",      "batch",    "trans_a",  "trans_b",
        "lda",    "ldb",    "ldd",    "stride_a", "stride_b", "stride_d",
        "type_a", "type_b", "type_d", "swapped",  "overwrite"};
    InFlightDiagnostic remark = op.emitRemark() << "GEMM record:";
    for (unsigned field = 0; field < kGemmRecordFields; ++field)
      remark << " " << kNames[field] << "=" << record[field];
  }
};
} // namespace
