//===- OutlineLoopNests.cpp - Each top-level loop nest a function ---------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// The amp-outline-loop-nests pass: moves each loop nest at the top level of
// a function into a private function of its own, marked `noinline` for LLVM,
// and calls it. A lowered step is one function of thousands of loop nests, and
// LLVM's loop passes and instruction selection take time that grows faster
// than the size of one function.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::amp {
#define GEN_PASS_DEF_OUTLINELOOPNESTS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

namespace {
struct OutlineLoopNests
    : public amp::impl::OutlineLoopNestsBase<OutlineLoopNests> {
  using Base::Base;
  void runOnOperation() override;
};
} // namespace

/// Replaces `loop` with a call of a new function `name` that runs it,
/// placed after `previous`; returns the function.
static func::FuncOp outline(Operation *loop, StringRef name,
                            SymbolTable &symbols, Operation *previous) {
  // What the loop reads from above: its operands, and the values its
  // regions use.
  SetVector<Value> captured(loop->getOperands().begin(),
                            loop->getOperands().end());
  getUsedValuesDefinedAbove(loop->getRegions(), captured);
  // Constants are copied in, so that LLVM still sees loop bounds and
  // strides; the rest are arguments.
  SmallVector<Value> arguments, constants;
  for (Value value : captured)
    (matchPattern(value, m_Constant()) ? constants : arguments)
        .push_back(value);

  OpBuilder builder(loop->getContext());
  auto type = builder.getFunctionType(ValueRange(arguments).getTypes(),
                                      loop->getResultTypes());
  auto function = func::FuncOp::create(builder, loop->getLoc(), name, type);
  function.setPrivate();
  // Attributes that convert-func-to-llvm keeps: LLVM's noinline, and
  // internal linkage, so that two lowered steps linked into one program do
  // not clash and LLVM may drop unused arguments.
  function->setAttr("passthrough",
                    builder.getArrayAttr(builder.getStringAttr("noinline")));
  function->setAttr(
      "llvm.linkage",
      LLVM::LinkageAttr::get(builder.getContext(), LLVM::Linkage::Internal));
  symbols.insert(function, std::next(Block::iterator(previous)));

  Block *body = function.addEntryBlock();
  builder.setInsertionPointToStart(body);
  IRMapping mapping;
  mapping.map(arguments, body->getArguments());
  for (Value value : constants)
    builder.clone(*value.getDefiningOp(), mapping);
  Operation *copy = builder.clone(*loop, mapping);
  func::ReturnOp::create(builder, loop->getLoc(), copy->getResults());

  builder.setInsertionPoint(loop);
  auto call =
      func::CallOp::create(builder, loop->getLoc(), function, arguments);
  loop->replaceAllUsesWith(call.getResults());
  loop->erase();
  return function;
}

void OutlineLoopNests::runOnOperation() {
  ModuleOp module = getOperation();
  SymbolTable symbols(module);
  SmallVector<func::FuncOp> functions(module.getOps<func::FuncOp>());
  for (func::FuncOp function : functions) {
    SmallVector<Operation *> loops;
    for (Block &block : function.getBody())
      for (Operation &op : block)
        if (isa<LoopLikeOpInterface>(op) && op.getNumRegions() > 0)
          loops.push_back(&op);
    // Not a function that is one loop nest already.
    if (loops.size() < minLoops)
      continue;
    Operation *previous = function;
    for (auto [index, loop] : llvm::enumerate(loops))
      previous =
          outline(loop, (function.getSymName() + "_loop" + Twine(index)).str(),
                  symbols, previous);
  }
}
