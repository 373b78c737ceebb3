// RUN: tl-opt %s --tl-infer-layouts=wgmma=true --tl-plan-pipelines --tl-plan-shared-memory -split-input-file | FileCheck %s --check-prefix=PLAN
// RUN: tl-opt %s --tl-gpu-lowering=wgmma=true -split-input-file | FileCheck %s
// sm_90a: a kernel whose every gemm reads shared tiles gets wgmma
// accumulators (#tl.wgmma: warpgroups hold 64-row blocks), its operand tiles
// 1024-byte aligned offsets, and each gemm becomes wgmma.mma_async through
// shared-memory descriptors: one per 64-row block, N chunk and k step of 16.

// PLAN-LABEL: func.func @two_warpgroups
// PLAN: tl.fragment_layout = "wgmma"
// PLAN: tl.alloc_shared {tl.offset = 0 : i64}
// PLAN: tl.alloc_shared {tl.offset = 16384 : i64}
// PLAN: tl.alloc_fragment {tl.layout = #tl.wgmma<warps = [8, 1]>}
// CHECK-LABEL: gpu.func @two_warpgroups
// (The tiles' loads are TMA copies, tma-copies.mlir: each waits on its mbarrier.)
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: nvvm.wgmma.fence.aligned
// 128 rows over 2 warpgroups: one block each; N = 128: one chunk; K = 64:
// four k steps. A as stored is K-major (row), B as stored MN-major (row).
// The first k step of a clear_accum gemm ignores the accumulator (scale-d
// zero).
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 16>, D[<f32>, <zero>], A[<f16>, <one>, <row>], B[<f16>, <one>, <row>]
// CHECK-COUNT-3: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <row>]
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
func.func @two_warpgroups(%A: memref<128x64xf16>, %B: memref<64x128xf16>, %C: memref<128x128xf32> {tl.output}) {
  tl.kernel grid [1] threads 256 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %a = tl.alloc_shared : memref<128x64xf16, #tl.scope<shared>>
    %b = tl.alloc_shared : memref<64x128xf16, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<128x128xf32, #tl.scope<fragment>>
    tl.copy %A[%c0, %c0] [128, 64] to %a[%c0, %c0] [128, 64] : memref<128x64xf16> to memref<128x64xf16, #tl.scope<shared>>
    tl.copy %B[%c0, %c0] [64, 128] to %b[%c0, %c0] [64, 128] : memref<64x128xf16> to memref<64x128xf16, #tl.scope<shared>>
    tl.gemm %a, %b, %c {clear_accum} : memref<128x64xf16, #tl.scope<shared>>, memref<64x128xf16, #tl.scope<shared>>, memref<128x128xf32, #tl.scope<fragment>>
    tl.copy %c[%c0, %c0] [128, 128] to %C[%c0, %c0] [128, 128] : memref<128x128xf32, #tl.scope<fragment>> to memref<128x128xf32>
  }
  return
}

// -----

// Transposed operands swap the majors: A MN-major (col), B K-major (col).
// 32-byte rows (K = 16) take the 32-byte swizzle atom: one k step.
// PLAN-LABEL: func.func @transposed
// PLAN: tl.alloc_shared {tl.offset = 0 : i64} : memref<16x64xbf16
// PLAN: tl.alloc_shared {tl.offset = 2048 : i64} : memref<64x16xbf16
// CHECK-LABEL: gpu.func @transposed
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 64, k = 16>, D[<f32>, <zero>], A[<bf16>, <one>, <col>], B[<bf16>, <one>, <col>]
// CHECK-NOT: nvvm.wgmma.mma_async
func.func @transposed(%A: memref<16x64xbf16>, %B: memref<64x16xbf16>, %C: memref<64x64xf32> {tl.output}) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %a = tl.alloc_shared : memref<16x64xbf16, #tl.scope<shared>>
    %b = tl.alloc_shared : memref<64x16xbf16, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    tl.copy %A[%c0, %c0] [16, 64] to %a[%c0, %c0] [16, 64] : memref<16x64xbf16> to memref<16x64xbf16, #tl.scope<shared>>
    tl.copy %B[%c0, %c0] [64, 16] to %b[%c0, %c0] [64, 16] : memref<64x16xbf16> to memref<64x16xbf16, #tl.scope<shared>>
    tl.gemm %a, %b, %c {transpose_a, transpose_b, clear_accum} : memref<16x64xbf16, #tl.scope<shared>>, memref<64x16xbf16, #tl.scope<shared>>, memref<64x64xf32, #tl.scope<fragment>>
    tl.copy %c[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf32, #tl.scope<fragment>> to memref<64x64xf32>
  }
  return
}

// -----

// A in registers (a fragment of C's rows, as attention's P): RS wgmma. The
// fragment takes C's wgmma layout over [M, K]; each k step of 16 reads four
// 32-bit registers of element pairs (a0..a3), through inline PTX (the NVVM
// dialect has no register-A wgmma), B through its descriptor.
// PLAN-LABEL: func.func @a_in_registers
// PLAN: tl.fragment_layout = "wgmma"
// PLAN: tl.alloc_fragment {tl.layout = #tl.wgmma<warps = [4, 1]>} : memref<64x32xf16
// CHECK-LABEL: gpu.func @a_in_registers
// CHECK-NOT: nvvm.mma.sync
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: llvm.inline_asm has_side_effects {{.*}}wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{.*}}}, {$32, $33, $34, $35}, $36, p, 1, 1, 1;
// CHECK-SAME: "=f,{{.*}},r,r,r,r,l,0,
// CHECK: llvm.inline_asm has_side_effects {{.*}}wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
func.func @a_in_registers(%A: memref<64x32xf16>, %B: memref<32x64xf16>, %C: memref<64x64xf32> {tl.output}) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %a = tl.alloc_fragment : memref<64x32xf16, #tl.scope<fragment>>
    %b = tl.alloc_shared : memref<32x64xf16, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    tl.copy %A[%c0, %c0] [64, 32] to %a[%c0, %c0] [64, 32] : memref<64x32xf16> to memref<64x32xf16, #tl.scope<fragment>>
    tl.copy %B[%c0, %c0] [32, 64] to %b[%c0, %c0] [32, 64] : memref<32x64xf16> to memref<32x64xf16, #tl.scope<shared>>
    tl.gemm %a, %b, %c {policy = #tl.policy<FullRow>, clear_accum} : memref<64x32xf16, #tl.scope<fragment>>, memref<32x64xf16, #tl.scope<shared>>, memref<64x64xf32, #tl.scope<fragment>>
    tl.copy %c[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf32, #tl.scope<fragment>> to memref<64x64xf32>
  }
  return
}

// -----

// A gemm that says no_wgmma keeps the whole kernel on mma.sync.
// PLAN-LABEL: func.func @declined
// PLAN: tl.fragment_layout = "mma"
// CHECK-LABEL: gpu.func @declined
// CHECK-NOT: nvvm.wgmma
// CHECK: nvvm.mma.sync
func.func @declined(%A: memref<64x32xf16>, %B: memref<32x64xf16>, %C: memref<64x64xf32> {tl.output}) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %a = tl.alloc_shared : memref<64x32xf16, #tl.scope<shared>>
    %b = tl.alloc_shared : memref<32x64xf16, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    tl.copy %A[%c0, %c0] [64, 32] to %a[%c0, %c0] [64, 32] : memref<64x32xf16> to memref<64x32xf16, #tl.scope<shared>>
    tl.copy %B[%c0, %c0] [32, 64] to %b[%c0, %c0] [32, 64] : memref<32x64xf16> to memref<32x64xf16, #tl.scope<shared>>
    tl.gemm %a, %b, %c {no_wgmma, clear_accum} : memref<64x32xf16, #tl.scope<shared>>, memref<32x64xf16, #tl.scope<shared>>, memref<64x64xf32, #tl.scope<fragment>>
    tl.copy %c[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf32, #tl.scope<fragment>> to memref<64x64xf32>
  }
  return
}

// -----

// A 64-row accumulator in two warpgroups: too few rows for one 64-row block
// each, so the warpgroups split the columns (warps = [4, 2]: four warps
// along M in each warpgroup, two warpgroups along N). Each issues m64n64
// wgmmas for its half of N; warpgroup g = warp / 4 starts its B descriptor
// at column 64 * (g % 2): one atom column block (64 x 128 bytes) further.
// PLAN-LABEL: func.func @columns_split
// PLAN: tl.fragment_layout = "wgmma"
// PLAN: tl.alloc_fragment {tl.layout = #tl.wgmma<warps = [4, 2]>} : memref<64x128xf32
// CHECK-LABEL: gpu.func @columns_split
// CHECK: %[[WARP:.*]] = arith.divui %{{.*}}, %c32
// CHECK: %[[GROUP:.*]] = arith.divui %[[WARP]], %c4
// CHECK: %[[GN:.*]] = arith.remui %[[GROUP]], %c2
// CHECK: arith.muli %[[GN]], %c8192
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 64, k = 16>, D[<f32>, <zero>], A[<f16>, <one>, <row>], B[<f16>, <one>, <row>]
// CHECK-COUNT-3: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 64, k = 16>, D[<f32>, <one>]
// CHECK-NOT: nvvm.wgmma.mma_async
// The copy out places each thread's slots as the wgmma wrote them: warp row
// (group / 2) * 4 + warp % 4 (16 rows each), column block group % 2 (64
// columns each; KernelLowering::warpGrid).
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: %[[G:.*]] = arith.divui %[[WARP]], %c4
// CHECK: %[[W:.*]] = arith.remui %[[WARP]], %c4
// CHECK: %[[GM:.*]] = arith.divui %[[G]], %c2
// CHECK: %[[GM4:.*]] = arith.muli %[[GM]], %c4
// CHECK: %[[WM:.*]] = arith.addi %[[GM4]], %[[W]]
// CHECK: %[[WN:.*]] = arith.remui %[[G]], %c2
// CHECK: arith.muli %[[WM]], %c16
// CHECK: arith.muli %[[WN]], %c64
func.func @columns_split(%A: memref<64x64xf16>, %B: memref<64x128xf16>, %C: memref<64x128xf32> {tl.output}) {
  tl.kernel grid [1] threads 256 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %a = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    %b = tl.alloc_shared : memref<64x128xf16, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<64x128xf32, #tl.scope<fragment>>
    tl.copy %A[%c0, %c0] [64, 64] to %a[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #tl.scope<shared>>
    tl.copy %B[%c0, %c0] [64, 128] to %b[%c0, %c0] [64, 128] : memref<64x128xf16> to memref<64x128xf16, #tl.scope<shared>>
    tl.gemm %a, %b, %c {clear_accum} : memref<64x64xf16, #tl.scope<shared>>, memref<64x128xf16, #tl.scope<shared>>, memref<64x128xf32, #tl.scope<fragment>>
    tl.copy %c[%c0, %c0] [64, 128] to %C[%c0, %c0] [64, 128] : memref<64x128xf32, #tl.scope<fragment>> to memref<64x128xf32>
  }
  return
}

// -----

// Split so, an MN-major B of 64 columns would start warpgroup 1's descriptor
// inside a 128-byte swizzle atom, which a descriptor cannot: no split fits,
// and the kernel stays on mma.sync.
// PLAN-LABEL: func.func @columns_split_refused
// PLAN: tl.fragment_layout = "mma"
// CHECK-LABEL: gpu.func @columns_split_refused
// CHECK-NOT: nvvm.wgmma
// CHECK: nvvm.mma.sync
func.func @columns_split_refused(%A: memref<64x64xf16>, %B: memref<64x64xf16>, %C: memref<64x64xf32> {tl.output}) {
  tl.kernel grid [1] threads 256 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %a = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    %b = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    tl.copy %A[%c0, %c0] [64, 64] to %a[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #tl.scope<shared>>
    tl.copy %B[%c0, %c0] [64, 64] to %b[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #tl.scope<shared>>
    tl.gemm %a, %b, %c {clear_accum} : memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf32, #tl.scope<fragment>>
    tl.copy %c[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf32, #tl.scope<fragment>> to memref<64x64xf32>
  }
  return
}
