// RUN: tl-opt %s --tl-infer-layouts -split-input-file | FileCheck %s
// tl-infer-layouts: every fragment's layout as an attribute, the kernel's
// summary with the reason for a fallback.

// A gemm's accumulator takes the mma.sync layout (FullRow: 4 warps down the
// rows); its row max follows as the row-vector layout.
// CHECK-LABEL: func.func @gemm_rows
// CHECK: tl.kernel {{.*}} attributes {tl.fragment_layout = "mma"}
// CHECK: tl.alloc_fragment {tl.layout = #tl.mma<warps = [4, 1]>} : memref<64x64xf32
// CHECK: tl.alloc_fragment {tl.layout = #tl.mma_row<warps = [4, 1]>} : memref<64xf32
func.func @gemm_rows(%A: memref<64x32xf16>, %B: memref<32x64xf16>, %R: memref<64xf32> {tl.output}) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %a = tl.alloc_shared : memref<64x32xf16, #tl.scope<shared>>
    %b = tl.alloc_shared : memref<32x64xf16, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    %r = tl.alloc_fragment : memref<64xf32, #tl.scope<fragment>>
    tl.copy %A[%c0, %c0] [64, 32] to %a[%c0, %c0] [64, 32] : memref<64x32xf16> to memref<64x32xf16, #tl.scope<shared>>
    tl.copy %B[%c0, %c0] [32, 64] to %b[%c0, %c0] [32, 64] : memref<32x64xf16> to memref<32x64xf16, #tl.scope<shared>>
    tl.gemm %a, %b, %c {policy = #tl.policy<FullRow>, clear_accum} : memref<64x32xf16, #tl.scope<shared>>, memref<32x64xf16, #tl.scope<shared>>, memref<64x64xf32, #tl.scope<fragment>>
    tl.reduce max %c -> %r {dim = 1 : i64} : memref<64x64xf32, #tl.scope<fragment>> -> memref<64xf32, #tl.scope<fragment>>
    tl.copy %r[%c0] [64] to %R[%c0] [64] : memref<64xf32, #tl.scope<fragment>> to memref<64xf32>
  }
  return
}

// -----

// The Square policy splits 8 warps 2 x 4 over a 64x64 accumulator.
// CHECK-LABEL: func.func @gemm_square
// CHECK: tl.alloc_fragment {tl.layout = #tl.mma<warps = [2, 4]>}
func.func @gemm_square(%A: memref<64x32xf16>, %B: memref<32x64xf16>, %C: memref<64x64xf32> {tl.output}) {
  tl.kernel grid [1] threads 256 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %a = tl.alloc_shared : memref<64x32xf16, #tl.scope<shared>>
    %b = tl.alloc_shared : memref<32x64xf16, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    tl.copy %A[%c0, %c0] [64, 32] to %a[%c0, %c0] [64, 32] : memref<64x32xf16> to memref<64x32xf16, #tl.scope<shared>>
    tl.copy %B[%c0, %c0] [32, 64] to %b[%c0, %c0] [32, 64] : memref<32x64xf16> to memref<32x64xf16, #tl.scope<shared>>
    tl.gemm %a, %b, %c {clear_accum} : memref<64x32xf16, #tl.scope<shared>>, memref<32x64xf16, #tl.scope<shared>>, memref<64x64xf32, #tl.scope<fragment>>
    tl.copy %c[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf32, #tl.scope<fragment>> to memref<64x64xf32>
  }
  return
}

// -----

// No gemm: the Row layout, rows split over threads where the fragment has
// fewer rows than the block has threads (32 rows, 128 threads: 4 a row).
// CHECK-LABEL: func.func @no_gemm
// CHECK: tl.kernel {{.*}} attributes {tl.fragment_layout = "row: no gemm"}
// CHECK: tl.alloc_fragment {tl.layout = #tl.row<split = 4>} : memref<32x64xf32
func.func @no_gemm(%X: memref<32x64xf32>, %Y: memref<32x64xf32> {tl.output}) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %f = tl.alloc_fragment : memref<32x64xf32, #tl.scope<fragment>>
    tl.copy %X[%c0, %c0] [32, 64] to %f[%c0, %c0] [32, 64] : memref<32x64xf32> to memref<32x64xf32, #tl.scope<fragment>>
    tl.copy %f[%c0, %c0] [32, 64] to %Y[%c0, %c0] [32, 64] : memref<32x64xf32, #tl.scope<fragment>> to memref<32x64xf32>
  }
  return
}

// -----

// A gemm whose tile does not split into m16n8 tiles per warp: every fragment
// falls back to Row, and the reason names the gemm's line.
// CHECK-LABEL: func.func @odd_tile
// CHECK: tl.fragment_layout = "row: gemm tile does not split into m16n8 tiles per warp (infer-layouts.mlir:[[#@LINE+10]])"
// CHECK: tl.alloc_fragment {tl.layout = #tl.row<split = 1>}
func.func @odd_tile(%A: memref<24x32xf16>, %B: memref<32x8xf16>, %C: memref<24x8xf32> {tl.output}) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %a = tl.alloc_shared : memref<24x32xf16, #tl.scope<shared>>
    %b = tl.alloc_shared : memref<32x8xf16, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<24x8xf32, #tl.scope<fragment>>
    tl.copy %A[%c0, %c0] [24, 32] to %a[%c0, %c0] [24, 32] : memref<24x32xf16> to memref<24x32xf16, #tl.scope<shared>>
    tl.gemm %a, %b, %c {clear_accum} : memref<24x32xf16, #tl.scope<shared>>, memref<32x8xf16, #tl.scope<shared>>, memref<24x8xf32, #tl.scope<fragment>>
    tl.copy %c[%c0, %c0] [24, 8] to %C[%c0, %c0] [24, 8] : memref<24x8xf32, #tl.scope<fragment>> to memref<24x8xf32>
  }
  return
}

// -----

// The registers counted are those of the fragments live at once (one warp:
// each 64x64 f32 accumulator takes 128 registers a thread, 256 both): one
// after the other, the gemms take mma.sync.
// CHECK-LABEL: func.func @one_after_the_other
// CHECK: tl.kernel {{.*}} attributes {tl.fragment_layout = "mma"}
func.func @one_after_the_other(%A: memref<64x32xf16>, %B: memref<32x64xf16>, %C: memref<64x64xf32> {tl.output}, %D: memref<64x64xf32> {tl.output}) {
  tl.kernel grid [1] threads 32 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %a = tl.alloc_shared : memref<64x32xf16, #tl.scope<shared>>
    %b = tl.alloc_shared : memref<32x64xf16, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    %d = tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    tl.copy %A[%c0, %c0] [64, 32] to %a[%c0, %c0] [64, 32] : memref<64x32xf16> to memref<64x32xf16, #tl.scope<shared>>
    tl.copy %B[%c0, %c0] [32, 64] to %b[%c0, %c0] [32, 64] : memref<32x64xf16> to memref<32x64xf16, #tl.scope<shared>>
    tl.gemm %a, %b, %c {clear_accum} : memref<64x32xf16, #tl.scope<shared>>, memref<32x64xf16, #tl.scope<shared>>, memref<64x64xf32, #tl.scope<fragment>>
    tl.copy %c[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf32, #tl.scope<fragment>> to memref<64x64xf32>
    tl.gemm %a, %b, %d {clear_accum} : memref<64x32xf16, #tl.scope<shared>>, memref<32x64xf16, #tl.scope<shared>>, memref<64x64xf32, #tl.scope<fragment>>
    tl.copy %d[%c0, %c0] [64, 64] to %D[%c0, %c0] [64, 64] : memref<64x64xf32, #tl.scope<fragment>> to memref<64x64xf32>
  }
  return
}

// -----

// Both live at once (the first read after the second gemm): 256 registers,
// Row.
// CHECK-LABEL: func.func @both_live
// CHECK: tl.fragment_layout = "row: Mma fragments need 256 registers per thread at once
func.func @both_live(%A: memref<64x32xf16>, %B: memref<32x64xf16>, %C: memref<64x64xf32> {tl.output}, %D: memref<64x64xf32> {tl.output}) {
  tl.kernel grid [1] threads 32 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %a = tl.alloc_shared : memref<64x32xf16, #tl.scope<shared>>
    %b = tl.alloc_shared : memref<32x64xf16, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    %d = tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    tl.copy %A[%c0, %c0] [64, 32] to %a[%c0, %c0] [64, 32] : memref<64x32xf16> to memref<64x32xf16, #tl.scope<shared>>
    tl.copy %B[%c0, %c0] [32, 64] to %b[%c0, %c0] [32, 64] : memref<32x64xf16> to memref<32x64xf16, #tl.scope<shared>>
    tl.gemm %a, %b, %c {clear_accum} : memref<64x32xf16, #tl.scope<shared>>, memref<32x64xf16, #tl.scope<shared>>, memref<64x64xf32, #tl.scope<fragment>>
    tl.gemm %a, %b, %d {clear_accum} : memref<64x32xf16, #tl.scope<shared>>, memref<32x64xf16, #tl.scope<shared>>, memref<64x64xf32, #tl.scope<fragment>>
    tl.copy %c[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf32, #tl.scope<fragment>> to memref<64x64xf32>
    tl.copy %d[%c0, %c0] [64, 64] to %D[%c0, %c0] [64, 64] : memref<64x64xf32, #tl.scope<fragment>> to memref<64x64xf32>
  }
  return
}

// -----

// A value carried across a loop's iterations (accumulated by a gemm that
// does not clear it, all its uses in the loop) lives through the whole loop,
// beside what the body makes anew before it: 256 registers, Row.
// CHECK-LABEL: func.func @carried_through_loop
// CHECK: tl.fragment_layout = "row: Mma fragments need 256 registers per thread at once
func.func @carried_through_loop(%A: memref<64x32xf16>, %B: memref<32x64xf16>, %C: memref<64x64xf32> {tl.output}, %D: memref<64x64xf32> {tl.output}) {
  tl.kernel grid [1] threads 32 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %a = tl.alloc_shared : memref<64x32xf16, #tl.scope<shared>>
    %b = tl.alloc_shared : memref<32x64xf16, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    %d = tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    tl.copy %A[%c0, %c0] [64, 32] to %a[%c0, %c0] [64, 32] : memref<64x32xf16> to memref<64x32xf16, #tl.scope<shared>>
    tl.copy %B[%c0, %c0] [32, 64] to %b[%c0, %c0] [32, 64] : memref<32x64xf16> to memref<32x64xf16, #tl.scope<shared>>
    scf.for %k = %c0 to %c4 step %c1 {
      tl.gemm %a, %b, %d {clear_accum} : memref<64x32xf16, #tl.scope<shared>>, memref<32x64xf16, #tl.scope<shared>>, memref<64x64xf32, #tl.scope<fragment>>
      tl.copy %d[%c0, %c0] [64, 64] to %D[%c0, %c0] [64, 64] : memref<64x64xf32, #tl.scope<fragment>> to memref<64x64xf32>
      tl.gemm %a, %b, %c : memref<64x32xf16, #tl.scope<shared>>, memref<32x64xf16, #tl.scope<shared>>, memref<64x64xf32, #tl.scope<fragment>>
      tl.copy %c[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf32, #tl.scope<fragment>> to memref<64x64xf32>
    }
  }
  return
}
