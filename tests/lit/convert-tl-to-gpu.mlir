// RUN: tl-opt %s --convert-tl-to-gpu -split-input-file | FileCheck %s
// The GPU lowering: a gpu.module kernel, shared tiles in dynamic shared
// memory, fragments in per-thread arrays. A gemm whose tile splits into
// m16n8 warp tiles takes the mma.sync path; one that does not falls back to
// the Row layout.

// CHECK-LABEL: gpu.module @mma_kernels
// CHECK: gpu.func @mma(
// CHECK-SAME: kernel
// CHECK-SAME: tl.fragment_layout = "mma"
// CHECK-SAME: tl.grid = array<i64: 2>
// CHECK-SAME: tl.shared_bytes = 8192
// CHECK: gpu.dynamic_shared_memory
// CHECK: memref.view
// CHECK: memref.alloca() : memref<32xf32>
// CHECK: vector.load {{.*}} {alignment = 16 : i64}
// CHECK: gpu.barrier
// CHECK: llvm.call_intrinsic "llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.b16"
// CHECK: llvm.inline_asm asm_dialect = att "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// CHECK: gpu.shuffle xor
// CHECK: gpu.return
func.func @mma(%A: memref<128x32xf16>, %B: memref<32x64xf16>,
               %C: memref<128x64xf32> {tl.output}, %R: memref<128xf32> {tl.output}) {
  tl.kernel grid [2] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %row = arith.muli %bx, %c64 : index
    %a = tl.alloc_shared : memref<64x32xf16, #tl.scope<shared>>
    %b = tl.alloc_shared : memref<32x64xf16, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    %r = tl.alloc_fragment : memref<64xf32, #tl.scope<fragment>>
    tl.copy %A[%row, %c0] [64, 32] to %a[%c0, %c0] [64, 32] : memref<128x32xf16> to memref<64x32xf16, #tl.scope<shared>>
    tl.copy %B[%c0, %c0] [32, 64] to %b[%c0, %c0] [32, 64] : memref<32x64xf16> to memref<32x64xf16, #tl.scope<shared>>
    tl.gemm %a, %b, %c {policy = #tl.policy<FullRow>, clear_accum} : memref<64x32xf16, #tl.scope<shared>>, memref<32x64xf16, #tl.scope<shared>>, memref<64x64xf32, #tl.scope<fragment>>
    tl.reduce max %c -> %r {dim = 1 : i64} : memref<64x64xf32, #tl.scope<fragment>> -> memref<64xf32, #tl.scope<fragment>>
    tl.copy %c[%c0, %c0] [64, 64] to %C[%row, %c0] [64, 64] : memref<64x64xf32, #tl.scope<fragment>> to memref<128x64xf32>
    tl.copy %r[%c0] [64] to %R[%row] [64] : memref<64xf32, #tl.scope<fragment>> to memref<128xf32>
  }
  return
}

// -----

// 24 rows do not split into 16-row warp tiles: Row layout, scalar gemm.
// CHECK-LABEL: gpu.func @rows(
// CHECK-SAME: tl.fragment_layout = "row: gemm tile does not split into m16n8 tiles per warp (convert-tl-to-gpu.mlir:{{[0-9]+}})"
// CHECK-NOT: mma.sync
// CHECK: gpu.return
func.func @rows(%A: memref<24x16xf16>, %C: memref<24x24xf32> {tl.output}) {
  tl.kernel grid [1] threads 64 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %a = tl.alloc_shared : memref<24x16xf16, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<24x24xf32, #tl.scope<fragment>>
    tl.copy %A[%c0, %c0] [24, 16] to %a[%c0, %c0] [24, 16] : memref<24x16xf16> to memref<24x16xf16, #tl.scope<shared>>
    tl.gemm %a, %a, %c {transpose_b, clear_accum} : memref<24x16xf16, #tl.scope<shared>>, memref<24x16xf16, #tl.scope<shared>>, memref<24x24xf32, #tl.scope<fragment>>
    tl.copy %c[%c0, %c0] [24, 24] to %C[%c0, %c0] [24, 24] : memref<24x24xf32, #tl.scope<fragment>> to memref<24x24xf32>
  }
  return
}
