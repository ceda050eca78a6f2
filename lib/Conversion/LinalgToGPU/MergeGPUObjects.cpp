//===- MergeGPUObjects.cpp - One fatbin per gpu.binary --------------------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// The amp-merge-gpu-objects pass: the cubins of a gpu.binary, one per chip,
// become one fatbin (the toolkit's fatbinary, one process per binary on the
// context's threads), so the embedded kernel runs on every chip it was
// compiled for.
//
//===----------------------------------------------------------------------===//

#include "ParallelInOrder.h"

#include "amp/Conversion/Passes.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

namespace mlir::amp {
#define GEN_PASS_DEF_MERGEGPUOBJECTS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

namespace {
struct MergeGPUObjectsPass
    : amp::impl::MergeGPUObjectsBase<MergeGPUObjectsPass> {
  using MergeGPUObjectsBase::MergeGPUObjectsBase;

  /// The fatbin of `cubins`, or failure (with a diagnostic on `binary`).
  FailureOr<std::string> createFatbin(gpu::BinaryOp binary,
                                      ArrayRef<gpu::ObjectAttr> cubins) {
    llvm::SmallString<128> fatbinary(toolkit);
    llvm::sys::path::append(fatbinary, "bin", "fatbinary");
    if (!llvm::sys::fs::can_execute(fatbinary))
      return binary.emitError("no fatbinary in the CUDA toolkit '")
             << toolkit << "'";
    SmallVector<std::string> arguments = {fatbinary.str().str(), "-64"};
    SmallVector<llvm::SmallString<128>> files;
    llvm::SmallString<128> output;
    llvm::scope_exit removeFiles([&] {
      for (const auto &file : files)
        llvm::sys::fs::remove(file);
      if (!output.empty())
        llvm::sys::fs::remove(output);
    });
    for (gpu::ObjectAttr cubin : cubins) {
      auto target = cast<NVVM::NVVMTargetAttr>(cubin.getTarget());
      StringRef sm = target.getChip();
      if (!sm.consume_front("sm_"))
        return binary.emitError("cannot name chip '")
               << target.getChip() << "' to fatbinary";
      llvm::SmallString<128> &file = files.emplace_back();
      int fd;
      if (llvm::sys::fs::createTemporaryFile("amp-kernel", "cubin", fd, file))
        return binary.emitError("cannot create a temporary file");
      llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
      os << cubin.getObject().getValue();
      os.close();
      arguments.push_back(
          ("--image3=kind=elf,sm=" + sm + ",file=" + file).str());
    }
    if (llvm::sys::fs::createTemporaryFile("amp-kernel", "fatbin", output))
      return binary.emitError("cannot create a temporary file");
    arguments.push_back(("--create=" + output).str());
    SmallVector<StringRef> argumentRefs(arguments.begin(), arguments.end());
    std::string message;
    if (llvm::sys::ExecuteAndWait(fatbinary, argumentRefs, std::nullopt, {},
                                  /*SecondsToWait=*/0, /*MemoryLimit=*/0,
                                  &message) != 0)
      return binary.emitError("fatbinary failed: ") << message;
    auto contents = llvm::MemoryBuffer::getFile(output);
    if (!contents)
      return binary.emitError("cannot read fatbinary's output");
    return (*contents)->getBuffer().str();
  }

  void runOnOperation() override {
    // The binaries whose objects are all cubins, at least two.
    SmallVector<std::pair<gpu::BinaryOp, SmallVector<gpu::ObjectAttr>>> work;
    for (auto binary : getOperation().getOps<gpu::BinaryOp>()) {
      SmallVector<gpu::ObjectAttr> cubins;
      for (Attribute attr : binary.getObjects()) {
        auto object = cast<gpu::ObjectAttr>(attr);
        if (object.getFormat() != gpu::CompilationTarget::Binary ||
            !isa<NVVM::NVVMTargetAttr>(object.getTarget()))
          break;
        cubins.push_back(object);
      }
      if (cubins.size() >= 2 && cubins.size() == binary.getObjects().size())
        work.push_back({binary, std::move(cubins)});
    }
    // One fatbinary process per binary, on the context's threads.
    SmallVector<std::string> fatbins(work.size());
    LogicalResult merged = amp::parallelForEachInOrder(
        &getContext(), work.size(), [&](size_t index) {
          FailureOr<std::string> fatbin =
              createFatbin(work[index].first, work[index].second);
          if (failed(fatbin))
            return failure();
          fatbins[index] = std::move(*fatbin);
          return success();
        });
    if (failed(merged))
      return signalPassFailure();
    for (auto [item, fatbin] : llvm::zip(work, fatbins)) {
      auto &[binary, cubins] = item;
      auto object = gpu::ObjectAttr::get(
          &getContext(), cubins.front().getTarget(),
          gpu::CompilationTarget::Fatbin,
          StringAttr::get(&getContext(), fatbin),
          /*properties=*/nullptr, cubins.front().getKernels());
      binary.setObjectsAttr(ArrayAttr::get(&getContext(), {object}));
    }
  }
};
} // namespace
