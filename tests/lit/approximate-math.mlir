// RUN: tl-opt %s --tl-approximate-math | FileCheck %s
// tl-approximate-math, on thread-level code: exp2/log2 (exp and log through
// them) as the PTX approximations, f16 through f32, abs and sqrt as LLVM
// intrinsics.

// CHECK-LABEL: gpu.func @math
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"(%arg0) : (f32) -> f32
// CHECK: %[[LOG2E:.*]] = arith.constant 1.44269502 : f32
// CHECK: %[[X:.*]] = arith.mulf %arg0, %[[LOG2E]] : f32
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"(%[[X]]) : (f32) -> f32
// CHECK: %[[L:.*]] = llvm.call_intrinsic "llvm.nvvm.lg2.approx.ftz.f"(%arg0) : (f32) -> f32
// CHECK: %[[LN2:.*]] = arith.constant 0.693147182 : f32
// CHECK: arith.mulf %[[L]], %[[LN2]] : f32
// CHECK: %[[H:.*]] = arith.extf %arg1 : f16 to f32
// CHECK: %[[E:.*]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"(%[[H]]) : (f32) -> f32
// CHECK: arith.truncf %[[E]] : f32 to f16
// CHECK: llvm.call_intrinsic "llvm.fabs.f32"
// CHECK: llvm.call_intrinsic "llvm.sqrt.f32"
// CHECK-NOT: math.
// CHECK: gpu.return
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @math(%x: f32, %h: f16, %out: memref<6xf32>, %hout: memref<1xf16>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c3 = arith.constant 3 : index
      %c4 = arith.constant 4 : index
      %a = math.exp2 %x : f32
      %b = math.exp %x : f32
      %c = math.log %x : f32
      %d = math.exp2 %h : f16
      %e = math.absf %x : f32
      %f = math.sqrt %x : f32
      memref.store %a, %out[%c0] : memref<6xf32>
      memref.store %b, %out[%c1] : memref<6xf32>
      memref.store %c, %out[%c2] : memref<6xf32>
      memref.store %d, %hout[%c0] : memref<1xf16>
      memref.store %e, %out[%c3] : memref<6xf32>
      memref.store %f, %out[%c4] : memref<6xf32>
      gpu.return
    }
  }
}
