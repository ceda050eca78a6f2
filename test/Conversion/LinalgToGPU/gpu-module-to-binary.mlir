// REQUIRES: cuda-toolkit
// RUN: amp-opt %s --amp-gpu-module-to-binary="toolkit=%cuda_toolkit format=isa" | FileCheck %s
// RUN: amp-opt %s --amp-gpu-module-to-binary="toolkit=%cuda_toolkit format=isa" -mlir-disable-threading | FileCheck %s
// RUN: amp-opt %s --amp-gpu-module-to-binary="toolkit=%cuda_toolkit format=bin" | FileCheck %s --check-prefix=CUBIN

// Every gpu.module becomes a gpu.binary of the same name, in module order,
// with one object per target in the targets' order (compiled on the
// context's threads, or one by one: the same output).
// CHECK-NOT: gpu.module
// CHECK:     gpu.binary @first [#gpu.object<#nvvm.target<chip = "sm_80">, {{.*}}assembly = "{{.*}}.target sm_80{{.*}}.entry first
// CHECK:     gpu.binary @second [#gpu.object<#nvvm.target<chip = "sm_80">, {{.*}}assembly = "{{.*}}.target sm_80{{.*}}.entry second{{.*}}">, #gpu.object<#nvvm.target<chip = "sm_90", features = "+ptx80">, {{.*}}assembly = "{{.*}}.target sm_90{{.*}}.entry second
// CHECK:     gpu.binary @third [#gpu.object<#nvvm.target<chip = "sm_90", features = "+ptx80">, {{.*}}assembly = "{{.*}}.entry third
// CHECK-NOT: gpu.module

// ptxas's cubins: ELF images (magic 0x7F 'E' 'L' 'F').
// CUBIN: gpu.binary @first [#gpu.object<#nvvm.target<chip = "sm_80">, {{.*}}bin = "\7FELF
// CUBIN: gpu.binary @second [#gpu.object<#nvvm.target<chip = "sm_80">, {{.*}}bin = "\7FELF{{.*}}">, #gpu.object<#nvvm.target<chip = "sm_90", features = "+ptx80">, {{.*}}bin = "\7FELF
// CUBIN: gpu.binary @third

module attributes {gpu.container_module} {
  gpu.module @first [#nvvm.target<chip = "sm_80">] {
    llvm.func @first(%out: !llvm.ptr) attributes {nvvm.kernel} {
      %one = llvm.mlir.constant(1.0 : f32) : f32
      llvm.store %one, %out : f32, !llvm.ptr
      llvm.return
    }
  }
  gpu.module @second [#nvvm.target<chip = "sm_80">,
                      #nvvm.target<chip = "sm_90", features = "+ptx80">] {
    llvm.func @second(%out: !llvm.ptr) attributes {nvvm.kernel} {
      %two = llvm.mlir.constant(2.0 : f32) : f32
      llvm.store %two, %out : f32, !llvm.ptr
      llvm.return
    }
  }
  gpu.module @third [#nvvm.target<chip = "sm_90", features = "+ptx80">] {
    llvm.func @third(%out: !llvm.ptr) attributes {nvvm.kernel} {
      %three = llvm.mlir.constant(3.0 : f32) : f32
      llvm.store %three, %out : f32, !llvm.ptr
      llvm.return
    }
  }
}
