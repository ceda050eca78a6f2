// REQUIRES: cuda-toolkit
// RUN: amp-opt %s -split-input-file -verify-diagnostics --amp-gpu-module-to-binary="toolkit=%cuda_toolkit format=bin"
// RUN: not amp-opt %s -split-input-file --amp-gpu-module-to-binary="toolkit=%cuda_toolkit format=cubin" 2>&1 | FileCheck %s --check-prefix=FORMAT

// FORMAT: error: unknown format 'cubin' (offloading, isa, bin or fatbin)

module attributes {gpu.container_module} {
  // expected-error @below {{the module has no target attributes}}
  gpu.module @untargeted {
    llvm.func @untargeted() attributes {nvvm.kernel} {
      llvm.return
    }
  }
}

// -----

// ptxas links the kernel alone: a call to a function no module defines
// fails, and the module says for which target.
module attributes {gpu.container_module} {
  // expected-error @below {{`ptxas` invocation failed}}
  // expected-error @below {{the module does not compile for #nvvm.target<chip = "sm_80">}}
  gpu.module @calls_missing [#nvvm.target<chip = "sm_80">] {
    llvm.func @missing(f32) -> f32
    llvm.func @calls_missing(%out: !llvm.ptr) attributes {nvvm.kernel} {
      %one = llvm.mlir.constant(1.0 : f32) : f32
      %r = llvm.call @missing(%one) : (f32) -> f32
      llvm.store %r, %out : f32, !llvm.ptr
      llvm.return
    }
  }
}
