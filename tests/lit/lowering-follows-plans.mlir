// RUN: tl-opt %s --convert-tl-to-gpu -split-input-file -verify-diagnostics | FileCheck %s
// convert-tl-to-gpu follows what the planning passes recorded, also when
// written by hand, and says which pass is missing when there is nothing to
// follow.

// A gemm kernel told to keep its accumulator in the Row layout: the lowering
// follows (scalar multiply-adds, no mma.sync), with the shared tiles where
// the offsets say.
// CHECK-LABEL: gpu.func @row_by_hand
// CHECK-SAME: tl.fragment_layout = "row: by hand"
// CHECK-SAME: tl.shared_bytes = 8192
// CHECK: memref.view {{.*}}[%c4096{{.*}}] {tl.shared_range = array<i64: 4096, 8192>}
// CHECK-NOT: mma.sync
// CHECK: gpu.return
func.func @row_by_hand(%A: memref<64x32xf16>, %B: memref<32x64xf16>, %C: memref<64x64xf32> {tl.output}) {
  tl.kernel grid [1] threads 128 attributes {tl.fragment_layout = "row: by hand"} {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %a = tl.alloc_shared {tl.offset = 4096 : i64} : memref<64x32xf16, #tl.scope<shared>>
    %b = tl.alloc_shared {tl.offset = 0 : i64} : memref<32x64xf16, #tl.scope<shared>>
    %c = tl.alloc_fragment {tl.layout = #tl.row<split = 1>} : memref<64x64xf32, #tl.scope<fragment>>
    tl.copy %A[%c0, %c0] [64, 32] to %a[%c0, %c0] [64, 32] : memref<64x32xf16> to memref<64x32xf16, #tl.scope<shared>>
    tl.copy %B[%c0, %c0] [32, 64] to %b[%c0, %c0] [32, 64] : memref<32x64xf16> to memref<32x64xf16, #tl.scope<shared>>
    tl.gemm %a, %b, %c {clear_accum} : memref<64x32xf16, #tl.scope<shared>>, memref<32x64xf16, #tl.scope<shared>>, memref<64x64xf32, #tl.scope<fragment>>
    tl.copy %c[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf32, #tl.scope<fragment>> to memref<64x64xf32>
  }
  return
}

// -----

func.func @no_layouts(%X: memref<64x64xf32>, %Y: memref<64x64xf32> {tl.output}) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{'tl.alloc_fragment' op has no fragment layout: run tl-infer-layouts before the lowering}}
    %f = tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    tl.copy %X[%c0, %c0] [64, 64] to %f[%c0, %c0] [64, 64] : memref<64x64xf32> to memref<64x64xf32, #tl.scope<fragment>>
    tl.copy %f[%c0, %c0] [64, 64] to %Y[%c0, %c0] [64, 64] : memref<64x64xf32, #tl.scope<fragment>> to memref<64x64xf32>
  }
  return
}

// -----

func.func @no_offsets(%X: memref<64xf32>, %Y: memref<64xf32> {tl.output}) {
  tl.kernel grid [1] threads 64 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{'tl.alloc_shared' op has no place in shared memory: run tl-plan-shared-memory before the lowering}}
    %s = tl.alloc_shared : memref<64xf32, #tl.scope<shared>>
    tl.copy %X[%c0] [64] to %s[%c0] [64] : memref<64xf32> to memref<64xf32, #tl.scope<shared>>
    tl.copy %s[%c0] [64] to %Y[%c0] [64] : memref<64xf32, #tl.scope<shared>> to memref<64xf32>
  }
  return
}

// -----

// An Mma layout whose warp grid does not match the kernel's 4 warps.
func.func @wrong_warps(%A: memref<64x32xf16>, %B: memref<32x64xf16>, %C: memref<64x64xf32> {tl.output}) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %a = tl.alloc_shared {tl.offset = 0 : i64} : memref<64x32xf16, #tl.scope<shared>>
    %b = tl.alloc_shared {tl.offset = 4096 : i64} : memref<32x64xf16, #tl.scope<shared>>
    // expected-error @+1 {{'tl.alloc_fragment' op cannot take #tl.mma<warps = [2, 1]> with 4 warps: the fragment must split into 16x8 tiles per warp}}
    %c = tl.alloc_fragment {tl.layout = #tl.mma<warps = [2, 1]>} : memref<64x64xf32, #tl.scope<fragment>>
    tl.gemm %a, %b, %c {clear_accum} : memref<64x32xf16, #tl.scope<shared>>, memref<32x64xf16, #tl.scope<shared>>, memref<64x64xf32, #tl.scope<fragment>>
    tl.copy %c[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf32, #tl.scope<fragment>> to memref<64x64xf32>
  }
  return
}

// -----

// expected-error @+1 {{a row layout's split must be a power of two from 1 to 32, got 3}}
func.func @bad_split(%X: memref<64xf32>) attributes {bad = #tl.row<split = 3>} {
  return
}

// -----

// A plan that puts a tile on bytes a gemm left in flight still reads
// (tl-plan-shared-memory keeps such a gemm's operands live to its wait):
// writing it before the wait is refused.
func.func @shared_write_same_bytes(%A: memref<64x64xf16>, %B: memref<64x64xf16>, %C: memref<64x64xf32> {tl.output}) {
  tl.kernel grid [1] threads 128 attributes {tl.fragment_layout = "wgmma"} {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %a = tl.alloc_shared {tl.offset = 0 : i64} : memref<64x64xf16, #tl.scope<shared>>
    %b = tl.alloc_shared {tl.offset = 8192 : i64} : memref<64x64xf16, #tl.scope<shared>>
    %p = tl.alloc_shared {tl.offset = 8192 : i64} : memref<64x64xf16, #tl.scope<shared>>
    %c = tl.alloc_fragment {tl.layout = #tl.wgmma<warps = [4, 1]>} : memref<64x64xf32, #tl.scope<fragment>>
    %d = tl.alloc_fragment {tl.layout = #tl.wgmma<warps = [4, 1]>} : memref<64x64xf32, #tl.scope<fragment>>
    tl.copy %A[%c0, %c0] [64, 64] to %a[%c0, %c0] [64, 64] {tl.tma_copy} : memref<64x64xf16> to memref<64x64xf16, #tl.scope<shared>>
    tl.copy %B[%c0, %c0] [64, 64] to %b[%c0, %c0] [64, 64] {tl.tma_copy} : memref<64x64xf16> to memref<64x64xf16, #tl.scope<shared>>
    tl.gemm %a, %b, %d {clear_accum} : memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf32, #tl.scope<fragment>>
    // expected-note @+1 {{the gemm left in flight (wg_wait = -1)}}
    tl.gemm %a, %b, %c {clear_accum, wg_wait = -1 : i64} : memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf32, #tl.scope<fragment>>
    tl.parallel [64, 64] {
    ^bb0(%i: index, %j: index):
      %v = memref.load %d[%i, %j] : memref<64x64xf32, #tl.scope<fragment>>
      %h = arith.truncf %v : f32 to f16
      // expected-error @+1 {{writes shared memory that a gemm in flight reads: wait_wgmma first}}
      memref.store %h, %p[%i, %j] : memref<64x64xf16, #tl.scope<shared>>
    }
    tl.wait_wgmma 0
    tl.copy %c[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf32, #tl.scope<fragment>> to memref<64x64xf32>
  }
  return
}

// -----

// An element store outside a parallel loop into a tile the gemm in flight
// reads: refused too.
func.func @store_into_operand(%A: memref<64x64xf16>, %B: memref<64x64xf16>, %C: memref<64x64xf32> {tl.output}) {
  tl.kernel grid [1] threads 128 attributes {tl.fragment_layout = "wgmma"} {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %h = arith.constant 1.0 : f16
    %a = tl.alloc_shared {tl.offset = 0 : i64} : memref<64x64xf16, #tl.scope<shared>>
    %b = tl.alloc_shared {tl.offset = 8192 : i64} : memref<64x64xf16, #tl.scope<shared>>
    %c = tl.alloc_fragment {tl.layout = #tl.wgmma<warps = [4, 1]>} : memref<64x64xf32, #tl.scope<fragment>>
    tl.copy %A[%c0, %c0] [64, 64] to %a[%c0, %c0] [64, 64] {tl.tma_copy} : memref<64x64xf16> to memref<64x64xf16, #tl.scope<shared>>
    tl.copy %B[%c0, %c0] [64, 64] to %b[%c0, %c0] [64, 64] {tl.tma_copy} : memref<64x64xf16> to memref<64x64xf16, #tl.scope<shared>>
    // expected-note @+1 {{the gemm left in flight (wg_wait = -1)}}
    tl.gemm %a, %b, %c {clear_accum, wg_wait = -1 : i64} : memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf32, #tl.scope<fragment>>
    // expected-error @+1 {{writes shared memory that a gemm in flight reads: wait_wgmma first}}
    memref.store %h, %b[%c0, %c0] : memref<64x64xf16, #tl.scope<shared>>
    tl.wait_wgmma 0
    tl.copy %c[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf32, #tl.scope<fragment>> to memref<64x64xf32>
  }
  return
}
