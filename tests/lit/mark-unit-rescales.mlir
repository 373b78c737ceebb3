// RUN: tl-opt %s --tl-infer-layouts --tl-mark-unit-rescales -split-input-file | FileCheck %s
// RUN: tl-opt %s --tl-infer-layouts=wgmma=true --tl-mark-unit-rescales -split-input-file | FileCheck %s --check-prefixes=CHECK,WGMMA
// RUN: tl-opt %s --tl-mark-unit-rescales -split-input-file | FileCheck %s --check-prefix=NOLAYOUTS
// tl-mark-unit-rescales: online softmax's rescale `acc(i, j) *= s(i)` of an
// accumulator (mma or wgmma layout) by a row fragment of it is marked
// tl.unit_rescale (either operand order); a division, a square, or a
// kernel whose fragments took the Row layout is not.
// Without tl-infer-layouts' layouts nothing is marked.

// CHECK-LABEL: func.func @rescale
// WGMMA: tl.fragment_layout = "wgmma"
// CHECK: tl.parallel [64, 64] attributes {tl.unit_rescale}
// CHECK: tl.parallel [64, 64] attributes {tl.unit_rescale}
// CHECK: tl.parallel [64, 64] {
// CHECK: arith.divf
// CHECK: tl.parallel [64, 64] {
// CHECK: arith.mulf %[[X:.*]], %[[X]]
// NOLAYOUTS-NOT: tl.unit_rescale
func.func @rescale(%A: memref<64x32xf16>, %B: memref<32x64xf16>, %C: memref<64x64xf32> {tl.output}) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %a = tl.alloc_shared : memref<64x32xf16, #tl.scope<shared>>
    %b = tl.alloc_shared : memref<32x64xf16, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    %s = tl.alloc_fragment : memref<64xf32, #tl.scope<fragment>>
    tl.copy %A[%c0, %c0] [64, 32] to %a[%c0, %c0] [64, 32] : memref<64x32xf16> to memref<64x32xf16, #tl.scope<shared>>
    tl.copy %B[%c0, %c0] [32, 64] to %b[%c0, %c0] [32, 64] : memref<32x64xf16> to memref<32x64xf16, #tl.scope<shared>>
    tl.gemm %a, %b, %c {policy = #tl.policy<FullRow>, clear_accum} : memref<64x32xf16, #tl.scope<shared>>, memref<32x64xf16, #tl.scope<shared>>, memref<64x64xf32, #tl.scope<fragment>>
    tl.reduce max %c -> %s {dim = 1 : i64} : memref<64x64xf32, #tl.scope<fragment>> -> memref<64xf32, #tl.scope<fragment>>
    tl.parallel [64, 64] {
    ^bb0(%i: index, %j: index):
      %x = memref.load %c[%i, %j] : memref<64x64xf32, #tl.scope<fragment>>
      %f = memref.load %s[%i] : memref<64xf32, #tl.scope<fragment>>
      %y = arith.mulf %f, %x : f32
      memref.store %y, %c[%i, %j] : memref<64x64xf32, #tl.scope<fragment>>
    }
    tl.parallel [64, 64] {
    ^bb0(%i: index, %j: index):
      %f = memref.load %s[%i] : memref<64xf32, #tl.scope<fragment>>
      %x = memref.load %c[%i, %j] : memref<64x64xf32, #tl.scope<fragment>>
      %y = arith.mulf %x, %f : f32
      memref.store %y, %c[%i, %j] : memref<64x64xf32, #tl.scope<fragment>>
    }
    tl.parallel [64, 64] {
    ^bb0(%i: index, %j: index):
      %x = memref.load %c[%i, %j] : memref<64x64xf32, #tl.scope<fragment>>
      %f = memref.load %s[%i] : memref<64xf32, #tl.scope<fragment>>
      %y = arith.divf %x, %f : f32
      memref.store %y, %c[%i, %j] : memref<64x64xf32, #tl.scope<fragment>>
    }
    tl.parallel [64, 64] {
    ^bb0(%i: index, %j: index):
      %x = memref.load %c[%i, %j] : memref<64x64xf32, #tl.scope<fragment>>
      %y = arith.mulf %x, %x : f32
      memref.store %y, %c[%i, %j] : memref<64x64xf32, #tl.scope<fragment>>
    }
    tl.copy %c[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf32, #tl.scope<fragment>> to memref<64x64xf32>
  }
  return
}

// -----

// No gemm: the fragments take the Row layout, and the same loop is not marked.
// CHECK-LABEL: func.func @row_layout
// CHECK-NOT: tl.unit_rescale
func.func @row_layout(%X: memref<64x64xf32>, %S: memref<64xf32>, %C: memref<64x64xf32> {tl.output}) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c = tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    %s = tl.alloc_fragment : memref<64xf32, #tl.scope<fragment>>
    tl.copy %X[%c0, %c0] [64, 64] to %c[%c0, %c0] [64, 64] : memref<64x64xf32> to memref<64x64xf32, #tl.scope<fragment>>
    tl.copy %S[%c0] [64] to %s[%c0] [64] : memref<64xf32> to memref<64xf32, #tl.scope<fragment>>
    tl.parallel [64, 64] {
    ^bb0(%i: index, %j: index):
      %x = memref.load %c[%i, %j] : memref<64x64xf32, #tl.scope<fragment>>
      %f = memref.load %s[%i] : memref<64xf32, #tl.scope<fragment>>
      %y = arith.mulf %f, %x : f32
      memref.store %y, %c[%i, %j] : memref<64x64xf32, #tl.scope<fragment>>
    }
    tl.copy %c[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf32, #tl.scope<fragment>> to memref<64x64xf32>
  }
  return
}
