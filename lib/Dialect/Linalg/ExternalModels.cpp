//===- ExternalModels.cpp - AMP interfaces for linalg ops -----------------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// linalg contractions and convolutions are always ops whose float inputs are
// data: in low precision they read FP16/BF16 inputs and keep their FP32
// output and accumulator, the body widening each input element (a GEMM with
// FP16 inputs and FP32 output). Other linalg ops keep their types.
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/Linalg/ExternalModels.h"
#include "amp/Interfaces/PrecisionOpInterface.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace mlir::amp;

namespace {
/// Whether `op` multiplies and accumulates: a contraction or a convolution.
bool isContractionOrConvolution(Operation *op) {
  auto linalgOp = cast<linalg::LinalgOp>(op);
  return linalg::isaContractionOpInterface(linalgOp) ||
         linalg::isaConvolutionOpInterface(linalgOp);
}

template <typename OpTy>
struct LinalgPrecisionModel
    : PrecisionOpInterface::ExternalModel<LinalgPrecisionModel<OpTy>, OpTy> {
  PrecisionClass getPrecisionClass(Operation *op) const {
    return isContractionOrConvolution(op) ? PrecisionClass::Always
                                          : PrecisionClass::NeverTouch;
  }

  bool isPrecisionDataOperand(Operation *op, unsigned index) const {
    auto linalgOp = cast<linalg::LinalgOp>(op);
    if (!isContractionOrConvolution(op) || index >= linalgOp.getNumDpsInputs())
      return false;
    return isFloatTensor(op->getOperand(index).getType());
  }

  /// The output and its accumulator keep their type.
  bool isPrecisionDataResult(Operation *op, unsigned index) const {
    return false;
  }

  double estimateFlops(Operation *op, DimSizes &sizes) const {
    // A multiply-add (two FLOPs) per point of the iteration space of a
    // contraction, one FLOP for other ops; each loop takes its size from an
    // operand dimension it indexes directly.
    auto linalgOp = cast<linalg::LinalgOp>(op);
    double flops = isContractionOrConvolution(op) ? 2 : 1;
    for (unsigned loop = 0, e = linalgOp.getNumLoops(); loop < e; ++loop) {
      double size = 1;
      for (OpOperand &operand : op->getOpOperands()) {
        AffineMap map = linalgOp.getMatchingIndexingMap(&operand);
        auto *it = llvm::find_if(map.getResults(), [&](AffineExpr expr) {
          return expr == getAffineDimExpr(loop, op->getContext());
        });
        if (it != map.getResults().end()) {
          size = sizes.getSize(operand.get(), it - map.getResults().begin());
          break;
        }
      }
      flops *= size;
    }
    return flops;
  }

  void adaptToDataType(Operation *op, FloatType type) const {
    // The body reads each retyped input through an arith.extf to the type
    // it computed in.
    auto linalgOp = cast<linalg::LinalgOp>(op);
    Block *body = linalgOp.getBlock();
    OpBuilder builder = OpBuilder::atBlockBegin(body);
    for (OpOperand *input : linalgOp.getDpsInputOperands()) {
      BlockArgument arg = linalgOp.getMatchingBlockArgument(input);
      auto wide = dyn_cast<FloatType>(arg.getType());
      if (!wide || getElementTypeOrSelf(input->get().getType()) != type ||
          wide == type)
        continue;
      arg.setType(type);
      Value extended =
          arith::ExtFOp::create(builder, op->getLoc(), wide, arg).getResult();
      arg.replaceAllUsesExcept(extended, extended.getDefiningOp());
    }
  }
};

template <typename... OpTys>
void attachPrecisionModels(MLIRContext *context) {
  (OpTys::template attachInterface<LinalgPrecisionModel<OpTys>>(*context), ...);
}
} // namespace

void mlir::amp::registerLinalgExternalModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, linalg::LinalgDialect *) {
    context->loadDialect<arith::ArithDialect>();
    using namespace linalg;
    attachPrecisionModels<MatmulOp, BatchMatmulOp, BatchReduceMatmulOp,
                          MatvecOp, VecmatOp, ContractOp, GenericOp,
                          Conv1DNwcWcfOp, Conv2DNhwcHwcfOp, Conv2DNchwFchwOp,
                          Conv2DNhwcFhwcOp, Conv3DNdhwcDhwcfOp,
                          DepthwiseConv2DNhwcHwcOp, DepthwiseConv2DNchwChwOp>(
        context);
  });
}
