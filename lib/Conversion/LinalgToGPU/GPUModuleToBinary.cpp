//===- GPUModuleToBinary.cpp - Kernel modules compiled in parallel --------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// The amp-gpu-module-to-binary pass: upstream's gpu-module-to-binary with
// the modules serialized on the context's threads.
//
//===----------------------------------------------------------------------===//

#include "ParallelInOrder.h"

#include "amp/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/StringSwitch.h"

namespace mlir::amp {
#define GEN_PASS_DEF_GPUMODULETOBINARY
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

namespace {
struct GPUModuleToBinaryPass
    : amp::impl::GPUModuleToBinaryBase<GPUModuleToBinaryPass> {
  using GPUModuleToBinaryBase::GPUModuleToBinaryBase;

  void runOnOperation() override {
    std::optional<gpu::CompilationTarget> target =
        llvm::StringSwitch<std::optional<gpu::CompilationTarget>>(format)
            .Cases({"offloading", "llvm"}, gpu::CompilationTarget::Offload)
            .Cases({"assembly", "isa"}, gpu::CompilationTarget::Assembly)
            .Cases({"binary", "bin"}, gpu::CompilationTarget::Binary)
            .Cases({"fatbinary", "fatbin"}, gpu::CompilationTarget::Fatbin)
            .Default(std::nullopt);
    if (!target) {
      getOperation().emitError("unknown format '")
          << format << "' (offloading, isa, bin or fatbin)";
      return signalPassFailure();
    }
    SmallVector<gpu::GPUModuleOp> modules(
        getOperation().getOps<gpu::GPUModuleOp>());
    for (gpu::GPUModuleOp module : modules)
      if (!module.getTargetsAttr() || module.getTargetsAttr().empty()) {
        module.emitError("the module has no target attributes");
        return signalPassFailure();
      }
    // Built before the threads start: a target may look up symbols.
    SymbolTable symbols(getOperation());
    gpu::TargetOptions options(toolkit, /*librariesToLink=*/{},
                               /*cmdOptions=*/"", /*elfSection=*/"", *target,
                               [&]() { return &symbols; });

    SmallVector<SmallVector<Attribute>> objects(modules.size());
    LogicalResult compiled = amp::parallelForEachInOrder(
        &getContext(), modules.size(), [&](size_t index) {
          return compile(modules[index], options, objects[index]);
        });
    if (failed(compiled))
      return signalPassFailure();

    for (auto [module, moduleObjects] : llvm::zip(modules, objects)) {
      OpBuilder builder(module);
      builder.setInsertionPointAfter(module);
      auto handler =
          dyn_cast_or_null<gpu::OffloadingLLVMTranslationAttrInterface>(
              module.getOffloadingHandlerAttr());
      gpu::BinaryOp::create(builder, module.getLoc(), module.getName(), handler,
                            builder.getArrayAttr(moduleObjects));
      module->erase();
    }
  }

  /// `module`'s object for each of its targets, in their order.
  static LogicalResult compile(gpu::GPUModuleOp module,
                               const gpu::TargetOptions &options,
                               SmallVectorImpl<Attribute> &objects) {
    for (Attribute attribute : module.getTargetsAttr()) {
      auto target = dyn_cast<gpu::TargetAttrInterface>(attribute);
      if (!target)
        return module.emitError("target ")
               << attribute << " cannot compile a module";
      std::optional<SmallVector<char, 0>> serialized =
          target.serializeToObject(module, options);
      if (!serialized)
        return module.emitError("the module does not compile for ")
               << attribute;
      Attribute object = target.createObject(module, *serialized, options);
      if (!object)
        return module.emitError("no object from the module's code for ")
               << attribute;
      objects.push_back(object);
    }
    return success();
  }
};
} // namespace
