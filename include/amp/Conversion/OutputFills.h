//===- OutputFills.h - The fill that initializes an op's output -*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// After bufferization, an accumulator (a GEMM's, a reduction's) is a buffer
// that a linalg.fill set just before the op that accumulates into it. An
// op that writes every element of its output can start from the fill's
// value instead (cuBLASLt's beta 0, a register initialized to it), and the
// fill, one kernel on the GPU, goes.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_CONVERSION_OUTPUTFILLS_H
#define AMP_CONVERSION_OUTPUTFILLS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::amp {

/// `view` (a memref or a tensor) without the reshapes (which keep every
/// element) that made it.
inline Value stripReshapes(Value view) {
  while (Operation *def = view.getDefiningOp()) {
    if (!isa<memref::ExpandShapeOp, memref::CollapseShapeOp,
             tensor::ExpandShapeOp, tensor::CollapseShapeOp>(def))
      break;
    view = def->getOperand(0);
  }
  return view;
}

/// The linalg.fill of exactly the elements of `output` (a memref operand of
/// `op`) earlier in `op`'s block, with no op in between reading or writing
/// that buffer; null when there is none.
inline linalg::FillOp getFillOfOutput(Operation *op, Value output) {
  Value elements = stripReshapes(output);
  Value buffer = memref::skipViewLikeOps(cast<MemrefValue>(output));
  auto accessesBuffer = [&](Operation *nested) {
    return !isa<ViewLikeOpInterface>(nested) &&
           llvm::any_of(nested->getOperands(), [&](Value value) {
             auto memref = dyn_cast<MemrefValue>(value);
             return memref && memref::skipViewLikeOps(memref) == buffer;
           });
  };
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    auto fill = dyn_cast<linalg::FillOp>(prev);
    if (fill && fill.hasPureBufferSemantics() &&
        stripReshapes(fill.getOutputs().front()) == elements)
      return fill;
    if (prev->walk([&](Operation *nested) {
              return accessesBuffer(nested) ? WalkResult::interrupt()
                                            : WalkResult::advance();
            })
            .wasInterrupted())
      return nullptr;
  }
  return nullptr;
}

/// The fill of `output` before `op` (getFillOfOutput) when it fills zeros,
/// which a library call folds as its overwrite flag (beta 0); else null.
inline linalg::FillOp getZeroFillOfOutput(Operation *op, Value output) {
  linalg::FillOp fill = getFillOfOutput(op, output);
  return fill && matchPattern(fill.getInputs().front(), m_AnyZeroFloat())
             ? fill
             : nullptr;
}

} // namespace mlir::amp

#endif // AMP_CONVERSION_OUTPUTFILLS_H
