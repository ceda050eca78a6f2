//===- Exporter.h - MLIR to ONNX export, internal ---------------*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// The exporter's state, shared by Export.cpp (graphs, nodes, tensors) and
// ExportAMPOps.cpp (the amp ops' ONNX forms).
//
//===----------------------------------------------------------------------===//

#ifndef AMP_LIB_TARGET_ONNX_EXPORTER_H
#define AMP_LIB_TARGET_ONNX_EXPORTER_H

#include "amp/Dialect/AMP/IR/AMPOps.h"
#include "amp/Dialect/ONNXGraph/IR/ONNXGraph.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include "onnx/onnx_pb.h"

#include <string>

namespace mlir::onnxg::detail {

/// Exports one module. Value names are unique across the whole model.
class Exporter {
public:
  explicit Exporter(ModuleOp module) : module(module) {}

  LogicalResult exportModel(onnx::ModelProto &model);

private:
  /// A name for a new value: `hint` if free, else `hint_N`. Subgraph inputs
  /// may shadow names of enclosing graphs, as in ONNX.
  std::string claimName(StringRef hint, bool mayShadow = false);
  bool isNameUsed(StringRef name, bool innermostOnly);
  LogicalResult exportGraph(Block &block, ArrayRef<std::string> outputNames,
                            ArrayRef<ArrayAttr> inputDims,
                            ArrayRef<ArrayAttr> outputDims,
                            onnx::GraphProto &graph);
  LogicalResult exportOp(Operation *op, onnx::GraphProto &graph);
  LogicalResult exportNode(NodeOp node, onnx::GraphProto &graph);
  LogicalResult exportCast(amp::CastOp cast, onnx::GraphProto &graph);
  LogicalResult exportUnscale(amp::UnscaleOp unscale, onnx::GraphProto &graph);
  LogicalResult exportScaleLoss(amp::ScaleLossOp op, onnx::GraphProto &graph);
  LogicalResult exportAllFinite(amp::AllFiniteOp op, onnx::GraphProto &graph);
  /// The FP8 ops (ExportAMPOps.cpp): saturating Cast, Mul and Reciprocal,
  /// ReduceMax of Abs, the scale formula in Div/Where, the history update
  /// in Slice/Concat, and the scaled GEMM as a MatMul of the dequantized
  /// operands (ONNX Runtime rewrites DequantizeLinear -> MatMul into an
  /// integer kernel that rejects FP8).
  LogicalResult exportFP8Op(Operation *op, onnx::GraphProto &graph);
  /// `data` widened to FP32 and, with `block`, padded with zeros to whole
  /// blocks (`padded` gets that shape) and reshaped to its block view
  /// [g0, b0, g1, b1, ...]; `grid` gets [g0, 1, g1, 1, ...], the shape its
  /// per-block values broadcast in. Helper names start with `prefix`.
  FailureOr<std::string>
  exportFloatBlocks(Operation *op, Value data,
                    std::optional<ArrayRef<int64_t>> block, StringRef prefix,
                    SmallVectorImpl<int64_t> &grid,
                    SmallVectorImpl<int64_t> &padded, onnx::GraphProto &graph);
  /// `data` widened to FP32 times its per-tensor or per-block `scale`, as
  /// the value named `output` (claimed by the caller).
  LogicalResult exportScaled(Operation *op, Value data, Value scale,
                             std::optional<ArrayRef<int64_t>> block,
                             const std::string &output,
                             onnx::GraphProto &graph);
  /// max |input| (per block), NaN where a NaN is, as the value `output`.
  LogicalResult exportAmax(Operation *op, Value input,
                           std::optional<ArrayRef<int64_t>> block,
                           const std::string &output, onnx::GraphProto &graph);
  /// max of `magnitudes` (non-negative) over `axes` (all when empty), NaN
  /// where a NaN is among them, as the value `output`.
  void exportMaxMagnitude(const std::string &magnitudes, ArrayRef<int64_t> axes,
                          const std::string &output, onnx::GraphProto &graph);
  /// FP8.h's computeScale on FP32 tensors; `previous` may be empty.
  std::string exportScaleFormula(const std::string &amax,
                                 const std::string &previous, float fp8Max,
                                 int64_t margin, bool pow2, StringRef hint,
                                 onnx::GraphProto &graph);
  /// `input` as FP32, through a Cast named after `hint` when it is not.
  std::string castToFloat32(Value input, StringRef hint,
                            onnx::GraphProto &graph);
  /// A 1-D INT64 initializer.
  std::string addInts(ArrayRef<int64_t> values, StringRef hint,
                      onnx::GraphProto &graph);
  LogicalResult exportUpdateScale(amp::UpdateScaleOp op,
                                  onnx::GraphProto &graph);
  /// A new value named after `hint`, computed by a default-domain node.
  std::string addHelperNode(StringRef opType, ArrayRef<std::string> inputs,
                            StringRef hint, onnx::GraphProto &graph);
  /// A new scalar initializer named after `hint`.
  std::string addScalar(float value, StringRef hint, onnx::GraphProto &graph);
  std::string addScalar(int64_t value, StringRef hint, onnx::GraphProto &graph);
  /// A default-domain node named after its one output (made unique).
  onnx::NodeProto &addNode(StringRef opType, ArrayRef<std::string> inputs,
                           const std::string &output, onnx::GraphProto &graph);
  void addCastNode(const std::string &input, const std::string &output,
                   int32_t to, onnx::GraphProto &graph);
  LogicalResult exportAttribute(NodeOp node, NamedAttribute named,
                                onnx::AttributeProto &attr,
                                onnx::GraphProto &graph);
  LogicalResult exportType(Type type, ArrayAttr dims, Location loc,
                           onnx::TypeProto &proto);
  LogicalResult exportTensor(ElementsAttr value, StringRef name, Location loc,
                             onnx::TensorProto &tensor);
  void addValueInfo(Value value, ArrayAttr dims, onnx::GraphProto &graph);
  void nameResults(Operation *op);
  void noteDomain(StringRef domain, int64_t opset);

  ModuleOp module;
  llvm::DenseMap<Value, std::string> names;
  /// Names taken in each enclosing graph, innermost last.
  SmallVector<llvm::StringSet<>> nameScopes;
  /// Opsets of the domains nodes use, to complete opset_import.
  llvm::StringMap<int64_t> usedDomains;
  /// The default-domain opset the amp ops' forms need (19 for FP8 types).
  int64_t requiredOpset = 0;
  /// Names of the imported nodes and of the nodes added so far: ONNX
  /// Runtime rejects two nodes with one name.
  llvm::StringSet<> nodeNames;
};

} // namespace mlir::onnxg::detail

#endif // AMP_LIB_TARGET_ONNX_EXPORTER_H
