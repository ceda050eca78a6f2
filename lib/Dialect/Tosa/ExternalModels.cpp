//===- ExternalModels.cpp - AMP interfaces for TOSA ops -------------------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// TOSA's float ops get a precision class from the list below (the classes of
// the ONNX op table, docs/PrecisionClasses.md, for the matching ONNX op);
// every float tensor operand and result is data, zero points and pad
// constants included, since TOSA types them like the input. tosa.const
// converts in place and tosa.cast is reused, as ONNX's Constant and Cast.
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/Tosa/ExternalModels.h"
#include "amp/Interfaces/CastFusionOpInterface.h"
#include "amp/Interfaces/PrecisionOpInterface.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/DialectRegistry.h"

#include <type_traits>

using namespace mlir;
using namespace mlir::amp;

namespace {
/// Elements of `value`, or of its dims [begin, end) when `end` is not 0.
double countElements(Value value, DimSizes &sizes, unsigned begin = 0,
                     unsigned end = 0) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type)
    return sizes.getNumElements(value);
  double count = 1;
  unsigned stop =
      end ? std::min<unsigned>(end, type.getRank()) : type.getRank();
  for (unsigned dim = begin; dim < stop; ++dim)
    count *= sizes.getSize(value, dim);
  return count;
}

template <typename OpTy, PrecisionClass Class>
struct TosaPrecisionModel
    : PrecisionOpInterface::ExternalModel<TosaPrecisionModel<OpTy, Class>,
                                          OpTy> {
  PrecisionClass getPrecisionClass(Operation *op) const { return Class; }

  bool isPrecisionDataOperand(Operation *op, unsigned index) const {
    return index < op->getNumOperands() &&
           isFloatTensor(op->getOperand(index).getType());
  }

  bool isPrecisionDataResult(Operation *op, unsigned index) const {
    return index < op->getNumResults() &&
           isFloatTensor(op->getResult(index).getType());
  }

  double estimateFlops(Operation *op, DimSizes &sizes) const {
    auto tosaOp = cast<OpTy>(op);
    // A multiply-add counts two FLOPs.
    if constexpr (std::is_same_v<OpTy, tosa::MatMulOp>) {
      // a: [N, H, C], output: [N, H, W].
      return 2 * sizes.getNumElements(tosaOp.getOutput()) *
             countElements(tosaOp.getA(), sizes, 2, 3);
    } else if constexpr (std::is_same_v<OpTy, tosa::Conv2DOp> ||
                         std::is_same_v<OpTy, tosa::Conv3DOp>) {
      // weight: [O, KH, KW, I] or [O, KD, KH, KW, I].
      return 2 * sizes.getNumElements(tosaOp.getOutput()) *
             countElements(tosaOp.getWeight(), sizes, 1);
    } else if constexpr (std::is_same_v<OpTy, tosa::DepthwiseConv2DOp>) {
      // weight: [KH, KW, C, M]; each output reads one channel's window.
      return 2 * sizes.getNumElements(tosaOp.getOutput()) *
             countElements(tosaOp.getWeight(), sizes, 0, 2);
    } else if constexpr (std::is_same_v<OpTy, tosa::TransposeConv2DOp>) {
      // weight: [O, KH, KW, I]; every input element meets O * KH * KW.
      return 2 * sizes.getNumElements(tosaOp.getInput()) *
             countElements(tosaOp.getWeight(), sizes, 0, 3);
    } else {
      return amp::detail::estimateElementwiseFlops(op, sizes);
    }
  }

  bool isElementwiseProduct(Operation *op) const {
    return std::is_same_v<OpTy, tosa::MulOp>;
  }

  void adaptToDataType(Operation *op, FloatType type) const {
    // The bounds are typed like the data.
    if constexpr (std::is_same_v<OpTy, tosa::ClampOp>) {
      for (StringRef name : {"min_val", "max_val"})
        if (auto bound = op->getAttrOfType<FloatAttr>(name))
          op->setAttr(name, FloatAttr::get(type, bound.getValueAsDouble()));
    }
  }
};

struct ConstModel
    : CastFusionOpInterface::ExternalModel<ConstModel, tosa::ConstOp> {
  bool canWriteResultAs(Operation *op, unsigned index, FloatType type) const {
    return index == 0 && hasFloatData(cast<tosa::ConstOp>(op).getValues());
  }

  void writeResultAs(Operation *op, unsigned index, FloatType type) const {
    auto constOp = cast<tosa::ConstOp>(op);
    constOp.setValuesAttr(convertFloatElements(constOp.getValues(), type));
    Value result = constOp.getOutput();
    result.setType(cast<TensorType>(result.getType()).clone(type));
  }

  bool hasValuesOutOfRange(Operation *op, unsigned index,
                           FloatType type) const {
    ElementsAttr values = cast<tosa::ConstOp>(op).getValues();
    return index == 0 && hasFloatData(values) &&
           amp::hasValuesOutOfRange(values, type);
  }

  std::optional<double> getLargestMagnitude(Operation *op,
                                            unsigned index) const {
    if (index != 0)
      return std::nullopt;
    return amp::getLargestMagnitude(cast<tosa::ConstOp>(op).getValues());
  }
};

struct CastModel
    : CastFusionOpInterface::ExternalModel<CastModel, tosa::CastOp> {
  bool isConversionOf(Operation *op, unsigned index, unsigned operand) const {
    // TOSA's CAST rounds to nearest even between float types.
    return index == 0 && operand == 0 &&
           isFloatTensor(op->getOperand(0).getType()) &&
           isFloatTensor(op->getResult(0).getType());
  }
};

template <PrecisionClass Class, typename... OpTys>
void attachPrecisionModels(MLIRContext *context) {
  (OpTys::template attachInterface<TosaPrecisionModel<OpTys, Class>>(*context),
   ...);
}
} // namespace

void mlir::amp::registerTosaExternalModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, tosa::TosaDialect *) {
    using namespace tosa;
    attachPrecisionModels<PrecisionClass::Always, MatMulOp, Conv2DOp, Conv3DOp,
                          DepthwiseConv2DOp, TransposeConv2DOp>(context);
    attachPrecisionModels<PrecisionClass::Infer, AddOp, SubOp, MulOp, TanhOp,
                          SigmoidOp, ErfOp, AvgPool2dOp>(context);
    attachPrecisionModels<PrecisionClass::Follow, AbsOp, NegateOp, CeilOp,
                          FloorOp, ClampOp, MaximumOp, MinimumOp, ReshapeOp,
                          TransposeOp, SliceOp, ConcatOp, PadOp, TileOp,
                          ReverseOp, IdentityOp, GatherOp, ScatterOp, SelectOp,
                          EqualOp, GreaterOp, GreaterEqualOp, MaxPool2dOp,
                          ReduceMaxOp, ReduceMinOp, ArgMaxOp>(context);
    attachPrecisionModels<PrecisionClass::KeepFP32, ExpOp, LogOp, PowOp,
                          ReciprocalOp, RsqrtOp, SinOp, CosOp, ReduceSumOp,
                          ReduceProductOp, ResizeOp>(context);
    ConstOp::attachInterface<ConstModel>(*context);
    CastOp::attachInterface<CastModel>(*context);
  });
}
