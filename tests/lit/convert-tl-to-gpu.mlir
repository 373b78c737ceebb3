// RUN: tl-opt %s --tl-gpu-lowering -split-input-file | FileCheck %s
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
// The thread and block indices carry their bounds (block size, grid extent)
// for integer range analysis, which narrows the index math to 32 bits.
// CHECK: gpu.thread_id x upper_bound 128
// CHECK: gpu.dynamic_shared_memory
// CHECK: memref.view
// CHECK: gpu.block_id x upper_bound 2
// CHECK: memref.alloca() : memref<32xf32>
// CHECK: vector.load {{.*}} {alignment = 16 : i64}
// CHECK: gpu.barrier
// CHECK: nvvm.ldmatrix {{.*}}layout = #nvvm.mma_layout<row>, num = 4 : i32{{.*}} -> !llvm.struct<(i32, i32, i32, i32)>
// CHECK: nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (vector<2xf16>, vector<2xf16>, f32)
// B's rows are 128 bytes: swizzled, and the ldmatrix of later n-tile pairs
// reach it by xor-ing one lane address (ldmatrixAddress).
// CHECK: llvm.inline_asm asm_dialect = att "xor.b32 $0, $1, 32;", "=r,r" %[[LANE:[0-9]+]]
// CHECK: llvm.inline_asm asm_dialect = att "xor.b32 $0, $1, 64;", "=r,r" %[[LANE]]
// CHECK: llvm.inline_asm asm_dialect = att "xor.b32 $0, $1, 96;", "=r,r" %[[LANE]]
// CHECK: gpu.shuffle xor
// The row-wise division: one reciprocal per row this thread holds (2), then
// multiplications (shareDivisors).
// CHECK-COUNT-2: arith.divf %cst
// CHECK-NOT: arith.divf
// CHECK: arith.mulf
// CHECK-NOT: arith.divf
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
    tl.parallel [64, 64] {
    ^bb0(%i: index, %j: index):
      %x = memref.load %c[%i, %j] : memref<64x64xf32, #tl.scope<fragment>>
      %m = memref.load %r[%i] : memref<64xf32, #tl.scope<fragment>>
      %q = arith.divf %x, %m : f32
      memref.store %q, %c[%i, %j] : memref<64x64xf32, #tl.scope<fragment>>
    }
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

// -----

// Pipelined with 2 stages: the A and B tiles of iteration k are issued as
// cp.async groups in iteration k - 2 (two iterations in a prologue) into 3
// rotating copies each (3 * (4096 + 4096) bytes of shared memory). Where a
// copy stood, the thread waits until only the groups issued after it are
// pending and a barrier publishes the tile; the A and B copies, followed by
// the next planned copy with only index math between, leave their wait to the
// bias copy's (groups complete in order). That first wait (bias: the 3 groups
// of iteration k+1 may still be pending) is followed by the issue of
// iteration k+2: its barrier is also the one that keeps the issue from
// overwriting the copies iteration k-1 read, so the loop has no barrier of
// its own at the top. The 1-D bias copy moves in 8-byte pieces (f32 pairs):
// its dynamic offset k * 32 + 2 is known to be even, no more; the copy to a
// local buffer is not a global -> shared copy and stays synchronous.
// CHECK-LABEL: gpu.func @pipelined(
// CHECK-SAME: tl.shared_bytes = 24960
// CHECK: scf.if
// CHECK: nvvm.cp.async.shared.global {{.*}}, 16, cache = cg
// CHECK: nvvm.cp.async.commit.group
// CHECK: nvvm.cp.async.commit.group
// CHECK: nvvm.cp.async.commit.group
// CHECK: scf.for %arg{{[0-9]+}} = %c0{{[_0-9]*}} to %c8
// CHECK-NOT: gpu.barrier
// CHECK-NOT: nvvm.cp.async
// CHECK: nvvm.cp.async.wait.group 3
// CHECK-NEXT: gpu.barrier
// CHECK: nvvm.cp.async.commit.group
// CHECK: nvvm.cp.async.commit.group
// CHECK: nvvm.cp.async.shared.global {{.*}}, 8, cache = ca
// CHECK: nvvm.cp.async.commit.group
// CHECK-NOT: nvvm.cp.async
// CHECK: mma.sync
// CHECK: nvvm.cp.async.wait.group 0
// CHECK: gpu.return
func.func @pipelined(%A: memref<64x256xf16>, %B: memref<256x64xf16>, %bias: memref<256xf32>,
                     %C: memref<64x64xf32> {tl.output}) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    %cst = arith.constant 0.0 : f32
    %a = tl.alloc_shared : memref<64x32xf16, #tl.scope<shared>>
    %b = tl.alloc_shared : memref<32x64xf16, #tl.scope<shared>>
    %s = tl.alloc_shared : memref<32xf32, #tl.scope<shared>>
    %l = tl.alloc_local : memref<4xf32, #tl.scope<local>>
    %c = tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    tl.fill %c, %cst : memref<64x64xf32, #tl.scope<fragment>>, f32
    tl.pipelined %c0 to %c8 stages 2 {
    ^bb0(%k: index):
      %c32 = arith.constant 32 : index
      %c2 = arith.constant 2 : index
      %k0 = arith.muli %k, %c32 : index
      %k2 = arith.addi %k0, %c2 : index
      tl.copy %A[%c0, %k0] [64, 32] to %a[%c0, %c0] [64, 32] : memref<64x256xf16> to memref<64x32xf16, #tl.scope<shared>>
      tl.copy %B[%k0, %c0] [32, 64] to %b[%c0, %c0] [32, 64] : memref<256x64xf16> to memref<32x64xf16, #tl.scope<shared>>
      tl.copy %bias[%k2] [32] to %s[%c0] [32] : memref<256xf32> to memref<32xf32, #tl.scope<shared>>
      tl.copy %bias[%k0] [4] to %l[%c0] [4] : memref<256xf32> to memref<4xf32, #tl.scope<local>>
      tl.gemm %a, %b, %c {policy = #tl.policy<FullRow>} : memref<64x32xf16, #tl.scope<shared>>, memref<32x64xf16, #tl.scope<shared>>, memref<64x64xf32, #tl.scope<fragment>>
    }
    tl.copy %c[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf32, #tl.scope<fragment>> to memref<64x64xf32>
  }
  return
}

// -----

// B in a fragment: mma.sync cannot take it from the registers of the threads
// that hold it, so the lowering stages it through a shared tile (4096 bytes
// after the 4096 of A): each thread stores what it owns (B itself keeps the
// Row layout: nothing moves it to another fragment), a barrier, then ldmatrix
// reads it like any shared operand. Of the barriers around the two shared
// writes only that one is left: the kernel's start orders A's copy, and A's
// copy and the staging write different bytes (BarrierElision.h).
// CHECK-LABEL: gpu.func @b_fragment(
// CHECK-SAME: tl.fragment_layout = "mma"
// CHECK-SAME: tl.shared_bytes = 8192
// CHECK-NOT: gpu.barrier
// CHECK: vector.store {{.*}} : memref<64x32xf16, #gpu.address_space<workgroup>>, vector<8xf16>
// CHECK-NOT: gpu.barrier
// CHECK: memref.store {{.*}} : memref<32x64xf16, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK: nvvm.ldmatrix {{.*}}layout = #nvvm.mma_layout<col>
// CHECK: mma.sync
func.func @b_fragment(%A: memref<64x32xf16>, %B: memref<32x64xf16>, %C: memref<64x64xf32> {tl.output}) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %a = tl.alloc_shared : memref<64x32xf16, #tl.scope<shared>>
    %b = tl.alloc_fragment : memref<32x64xf16, #tl.scope<fragment>>
    %c = tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    tl.copy %A[%c0, %c0] [64, 32] to %a[%c0, %c0] [64, 32] : memref<64x32xf16> to memref<64x32xf16, #tl.scope<shared>>
    tl.copy %B[%c0, %c0] [32, 64] to %b[%c0, %c0] [32, 64] : memref<32x64xf16> to memref<32x64xf16, #tl.scope<fragment>>
    tl.gemm %a, %b, %c {policy = #tl.policy<FullRow>, clear_accum} : memref<64x32xf16, #tl.scope<shared>>, memref<32x64xf16, #tl.scope<fragment>>, memref<64x64xf32, #tl.scope<fragment>>
    tl.copy %c[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf32, #tl.scope<fragment>> to memref<64x64xf32>
  }
  return
}

// -----

// Shared tiles whose lives do not overlap share bytes: %a is dead once its
// contents reach the fragment, so %b takes its place (8192 bytes, not 16384).
// The copy into %b starts with a barrier, as every shared write does, so no
// thread overwrites %a while another still reads it (barrier elision keeps it:
// the bytes are the same).
// CHECK-LABEL: gpu.func @reuse(
// CHECK-SAME: tl.shared_bytes = 8192
// CHECK-COUNT-2: memref.view %{{.*}}[%c0{{.*}}][] {tl.shared_range = array<i64: 0, 8192>} : memref<?xi8, #gpu.address_space<workgroup>> to memref<64x64xf16
// CHECK: memref.load %view_1[
// CHECK: gpu.barrier
// CHECK: memref.store {{.*}}, %view[
func.func @reuse(%A: memref<64x64xf16>, %C: memref<64x64xf16> {tl.output}) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %a = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    %b = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    %f = tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    tl.copy %A[%c0, %c0] [64, 64] to %a[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #tl.scope<shared>>
    tl.copy %a[%c0, %c0] [64, 64] to %f[%c0, %c0] [64, 64] : memref<64x64xf16, #tl.scope<shared>> to memref<64x64xf32, #tl.scope<fragment>>
    tl.copy %f[%c0, %c0] [64, 64] to %b[%c0, %c0] [64, 64] : memref<64x64xf32, #tl.scope<fragment>> to memref<64x64xf16, #tl.scope<shared>>
    tl.copy %b[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf16, #tl.scope<shared>> to memref<64x64xf16>
  }
  return
}

// -----

// Square puts 2 x 2 warps on the tile, so two warps hold each row: after the
// quad shuffles, each warp's row partials meet in a [2, 64] shared scratch
// (512 bytes after A and B) and every thread combines them. The barrier the
// reduction puts before its scratch writes is elided: since the last barrier
// (after B's copy) threads have only read A and B.
// CHECK-LABEL: gpu.func @rows_across_warps(
// CHECK-SAME: tl.fragment_layout = "mma"
// CHECK-SAME: tl.shared_bytes = 8704
// CHECK: mma.sync
// CHECK: gpu.shuffle xor
// CHECK-NOT: gpu.barrier
// CHECK: memref.store {{.*}} : memref<2x64xf32, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK: memref.load {{.*}} : memref<2x64xf32, #gpu.address_space<workgroup>>
func.func @rows_across_warps(%A: memref<64x32xf16>, %B: memref<32x64xf16>, %R: memref<64xf32> {tl.output}) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %a = tl.alloc_shared : memref<64x32xf16, #tl.scope<shared>>
    %b = tl.alloc_shared : memref<32x64xf16, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    %r = tl.alloc_fragment : memref<64xf32, #tl.scope<fragment>>
    tl.copy %A[%c0, %c0] [64, 32] to %a[%c0, %c0] [64, 32] : memref<64x32xf16> to memref<64x32xf16, #tl.scope<shared>>
    tl.copy %B[%c0, %c0] [32, 64] to %b[%c0, %c0] [32, 64] : memref<32x64xf16> to memref<32x64xf16, #tl.scope<shared>>
    tl.gemm %a, %b, %c {policy = #tl.policy<Square>, clear_accum} : memref<64x32xf16, #tl.scope<shared>>, memref<32x64xf16, #tl.scope<shared>>, memref<64x64xf32, #tl.scope<fragment>>
    tl.reduce max %c -> %r {dim = 1 : i64} : memref<64x64xf32, #tl.scope<fragment>> -> memref<64xf32, #tl.scope<fragment>>
    tl.copy %r[%c0] [64] to %R[%c0] [64] : memref<64xf32, #tl.scope<fragment>> to memref<64xf32>
  }
  return
}

// -----

// A pipelined body that starts with its planned copy (offsets from the
// induction variable and outside values only), and a copy from a tensor the
// loop also writes: that one stays synchronous (issued early, it would miss
// the write), so exactly one copy goes asynchronous.
// CHECK-LABEL: gpu.func @copy_first(
// CHECK: scf.for
// CHECK: nvvm.cp.async.wait.group 0
// CHECK-NEXT: gpu.barrier
// CHECK: nvvm.cp.async.commit.group
// CHECK-NOT: nvvm.cp.async.shared.global
// CHECK: nvvm.cp.async.wait.group 0
// CHECK: gpu.return
func.func @copy_first(%A: memref<8x64xf16>, %W: memref<8x64xf16>, %C: memref<8x64xf16> {tl.output}) {
  tl.kernel grid [1] threads 64 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    %a = tl.alloc_shared : memref<64xf16, #tl.scope<shared>>
    %w = tl.alloc_shared : memref<64xf16, #tl.scope<shared>>
    tl.pipelined %c0 to %c8 stages 1 {
    ^bb0(%k: index):
      tl.copy %A[%k, %c0] [1, 64] to %a[%c0] [64] : memref<8x64xf16> to memref<64xf16, #tl.scope<shared>>
      tl.copy %W[%k, %c0] [1, 64] to %w[%c0] [64] : memref<8x64xf16> to memref<64xf16, #tl.scope<shared>>
      tl.copy %a[%c0] [64] to %C[%k, %c0] [1, 64] : memref<64xf16, #tl.scope<shared>> to memref<8x64xf16>
      tl.copy %a[%c0] [64] to %W[%k, %c0] [1, 64] : memref<64xf16, #tl.scope<shared>> to memref<8x64xf16>
    }
  }
  return
}

// -----

// No gemm, 32-row fragments, 128 threads: the Row layout splits each row over
// 4 adjacent threads (8 columns each), so that every thread works. A thread's
// segment of a row loads as one 16-byte vector, guarded by the tensor's end
// (40 rows: block 1's last 24 rows read zeros); the row sums combine the 4
// segments by xor shuffles (offsets 2, 1), and the first thread of each row
// writes the 1-D result.
// CHECK-LABEL: gpu.func @split_rows(
// CHECK-SAME: tl.fragment_layout = "row: no gemm"
// CHECK: memref.alloca() : memref<1x8xf16>
// CHECK: memref.alloca() : memref<1x8xf32>
// CHECK: memref.alloca() : memref<1xf32>
// CHECK: scf.if
// CHECK: vector.load {{.*}} : memref<40x64xf16>, vector<8xf16>
// CHECK: gpu.shuffle xor {{.*}}, %c2_i32
// CHECK: gpu.shuffle xor {{.*}}, %c1_i32
// CHECK: arith.remui %{{.*}}, %c4
// CHECK: arith.cmpi eq
// CHECK: scf.if
// CHECK: memref.store {{.*}} : memref<40xf32>
// CHECK: gpu.return
func.func @split_rows(%X: memref<40x64xf16>, %S: memref<40xf32> {tl.output}) {
  tl.kernel grid [2] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c32 = arith.constant 32 : index
    %row = arith.muli %bx, %c32 : index
    %x = tl.alloc_fragment : memref<32x32xf16, #tl.scope<fragment>>
    %acc = tl.alloc_fragment : memref<32x32xf32, #tl.scope<fragment>>
    %sum = tl.alloc_fragment : memref<32xf32, #tl.scope<fragment>>
    tl.copy %X[%row, %c32] [32, 32] to %x[%c0, %c0] [32, 32] : memref<40x64xf16> to memref<32x32xf16, #tl.scope<fragment>>
    tl.parallel [32, 32] {
    ^bb0(%i: index, %j: index):
      %v = memref.load %x[%i, %j] : memref<32x32xf16, #tl.scope<fragment>>
      %w = arith.extf %v : f16 to f32
      %p = arith.mulf %w, %w : f32
      memref.store %p, %acc[%i, %j] : memref<32x32xf32, #tl.scope<fragment>>
    }
    tl.reduce sum %acc -> %sum {dim = 1 : i64} : memref<32x32xf32, #tl.scope<fragment>> -> memref<32xf32, #tl.scope<fragment>>
    tl.copy %sum[%c0] [32] to %S[%row] [32] : memref<32xf32, #tl.scope<fragment>> to memref<40xf32>
  }
  return
}

// -----

// A global -> shared copy before a pipelined loop (a forward's Q tile) goes
// asynchronous: its cp.async group is committed where it stands, the loop's
// prologue commits the first tile's group behind it, and one wait leaves
// only that prologue group pending (wait_group 1) before the loop starts.
// The copy whose tile an op reads before the loop stays synchronous.
// CHECK-LABEL: gpu.func @entry_copy(
// CHECK: vector.load {{.*}} : memref<64x64xf16>, vector<8xf16>
// CHECK: gpu.barrier
// CHECK: nvvm.cp.async.shared.global {{.*}}, 16, cache = {{ *}}cg
// CHECK-NOT: scf.if
// CHECK: nvvm.cp.async.commit.group
// CHECK-NOT: nvvm.cp.async.wait.group
// CHECK: nvvm.cp.async.commit.group
// CHECK-NEXT: nvvm.cp.async.wait.group 1
// CHECK-NEXT: gpu.barrier
// CHECK: scf.for
func.func @entry_copy(%A: memref<64x64xf16>, %B: memref<256x64xf16>, %R: memref<64xf16>,
                      %C: memref<64x64xf32> {tl.output}) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %cst = arith.constant 0.0 : f32
    %r = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    %a = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    %b = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    tl.copy %A[%c0, %c0] [64, 64] to %r[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #tl.scope<shared>>
    tl.copy %r[%c0, %c0] [1, 64] to %R[%c0] [64] : memref<64x64xf16, #tl.scope<shared>> to memref<64xf16>
    tl.copy %A[%c0, %c0] [64, 64] to %a[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #tl.scope<shared>>
    tl.fill %c, %cst : memref<64x64xf32, #tl.scope<fragment>>, f32
    tl.pipelined %c0 to %c4 stages 1 {
    ^bb0(%k: index):
      %c64 = arith.constant 64 : index
      %k0 = arith.muli %k, %c64 : index
      tl.copy %B[%k0, %c0] [64, 64] to %b[%c0, %c0] [64, 64] : memref<256x64xf16> to memref<64x64xf16, #tl.scope<shared>>
      tl.gemm %a, %b, %c {policy = #tl.policy<FullRow>} : memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf32, #tl.scope<fragment>>
    }
    tl.copy %c[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf32, #tl.scope<fragment>> to memref<64x64xf32>
  }
  return
}

// -----

// Row splitting falls back to one thread a row where a 1-D fragment is
// written inside a 2-D parallel loop (each of a row's threads would see only
// its own columns): a 32x32 tile on 128 threads keeps 1-row storage of 32
// columns.
// CHECK-LABEL: gpu.func @no_split(
// CHECK-SAME: tl.fragment_layout = "row: no gemm"
// CHECK: memref.alloca() : memref<1x32xf32>
// CHECK: memref.alloca() : memref<1xf32>
// CHECK-NOT: gpu.shuffle
// CHECK: gpu.return
func.func @no_split(%X: memref<32x32xf32>, %S: memref<32xf32> {tl.output}) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %x = tl.alloc_fragment : memref<32x32xf32, #tl.scope<fragment>>
    %m = tl.alloc_fragment : memref<32xf32, #tl.scope<fragment>>
    tl.copy %X[%c0, %c0] [32, 32] to %x[%c0, %c0] [32, 32] : memref<32x32xf32> to memref<32x32xf32, #tl.scope<fragment>>
    tl.copy %X[%c0, %c0] [32, 1] to %m[%c0] [32] : memref<32x32xf32> to memref<32xf32, #tl.scope<fragment>>
    tl.parallel [32, 32] {
    ^bb0(%i: index, %j: index):
      %v = memref.load %x[%i, %j] : memref<32x32xf32, #tl.scope<fragment>>
      %w = memref.load %m[%i] : memref<32xf32, #tl.scope<fragment>>
      %y = arith.maximumf %v, %w : f32
      memref.store %y, %m[%i] : memref<32xf32, #tl.scope<fragment>>
    }
    tl.copy %m[%c0] [32] to %S[%c0] [32] : memref<32xf32, #tl.scope<fragment>> to memref<32xf32>
  }
  return
}

// -----

// Row splitting needs every fragment access to be the loop's own element: a
// read of column 0 of each row keeps one thread a row (whole 64-column rows).
// CHECK-LABEL: gpu.func @colzero(
// CHECK: memref.alloca() : memref<1x64xf32>
// CHECK-NOT: gpu.shuffle
// CHECK: gpu.return
func.func @colzero(%X: memref<64x64xf32>, %Y: memref<64x64xf32> {tl.output}) {
  tl.kernel grid [2] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c32 = arith.constant 32 : index
    %row = arith.muli %bx, %c32 : index
    %x = tl.alloc_fragment : memref<32x64xf32, #tl.scope<fragment>>
    %y = tl.alloc_fragment : memref<32x64xf32, #tl.scope<fragment>>
    tl.copy %X[%row, %c0] [32, 64] to %x[%c0, %c0] [32, 64] : memref<64x64xf32> to memref<32x64xf32, #tl.scope<fragment>>
    tl.parallel [32, 64] {
    ^bb0(%i: index, %j: index):
      %v = memref.load %x[%i, %j] : memref<32x64xf32, #tl.scope<fragment>>
      %f = memref.load %x[%i, %c0] : memref<32x64xf32, #tl.scope<fragment>>
      %p = arith.subf %v, %f : f32
      memref.store %p, %y[%i, %j] : memref<32x64xf32, #tl.scope<fragment>>
    }
    tl.copy %y[%c0, %c0] [32, 64] to %Y[%row, %c0] [32, 64] : memref<32x64xf32, #tl.scope<fragment>> to memref<64x64xf32>
  }
  return
}

// -----

// Divisors that are themselves shared quotients (m = x / s, then x / m and
// s / m): each group's reciprocal takes the current divisor.
// CHECK-LABEL: gpu.func @divchain(
// CHECK: arith.divf %cst
// CHECK: arith.mulf
// CHECK: gpu.return
func.func @divchain(%A: memref<64x32xf16>, %B: memref<32x64xf16>, %R: memref<64xf32>,
               %C: memref<64x64xf32> {tl.output}) {
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
    tl.parallel [64, 64] {
    ^bb0(%i: index, %j: index):
      %x = memref.load %c[%i, %j] : memref<64x64xf32, #tl.scope<fragment>>
      %s = memref.load %r[%i] : memref<64xf32, #tl.scope<fragment>>
      %m = arith.divf %x, %s : f32
      %p = arith.divf %x, %m : f32
      %q = arith.divf %s, %m : f32
      %t = arith.addf %p, %q : f32
      memref.store %t, %c[%i, %j] : memref<64x64xf32, #tl.scope<fragment>>
    }
    tl.copy %c[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf32, #tl.scope<fragment>> to memref<64x64xf32>
  }
  return
}

// -----

// An entry copy whose tile nothing in the loop reads stays synchronous (its
// bytes are not reserved up to the loop, so a tile used in between could share
// them while an asynchronous copy is in flight): only %a's copy goes cp.async.
// CHECK-LABEL: gpu.func @entry_dead(
// CHECK-COUNT-8: vector.load %arg{{[01]}}
// CHECK-NOT: vector.load %arg0
// CHECK: nvvm.cp.async.commit.group
// CHECK: nvvm.cp.async.commit.group
// CHECK-NEXT: nvvm.cp.async.wait.group 1
func.func @entry_dead(%A: memref<64x64xf16>, %B: memref<256x64xf16>, %R: memref<64x64xf16> {tl.output},
                      %C: memref<64x64xf32> {tl.output}) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %cst = arith.constant 0.0 : f32
    %t = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    %u = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    %a = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    %b = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    tl.copy %A[%c0, %c0] [64, 64] to %t[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #tl.scope<shared>>
    tl.copy %B[%c0, %c0] [64, 64] to %u[%c0, %c0] [64, 64] : memref<256x64xf16> to memref<64x64xf16, #tl.scope<shared>>
    tl.copy %u[%c0, %c0] [64, 64] to %R[%c0, %c0] [64, 64] : memref<64x64xf16, #tl.scope<shared>> to memref<64x64xf16>
    tl.copy %A[%c0, %c0] [64, 64] to %a[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #tl.scope<shared>>
    tl.fill %c, %cst : memref<64x64xf32, #tl.scope<fragment>>, f32
    tl.pipelined %c0 to %c4 stages 1 {
    ^bb0(%k: index):
      %c64 = arith.constant 64 : index
      %k0 = arith.muli %k, %c64 : index
      tl.copy %B[%k0, %c0] [64, 64] to %b[%c0, %c0] [64, 64] : memref<256x64xf16> to memref<64x64xf16, #tl.scope<shared>>
      tl.gemm %a, %b, %c {policy = #tl.policy<FullRow>} : memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf32, #tl.scope<fragment>>
    }
    tl.copy %c[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf32, #tl.scope<fragment>> to memref<64x64xf32>
  }
  return
}

// -----

// An element a parallel loop writes to a tensor with an index-map layout goes
// through the map, as copies and atomics do.
// CHECK-LABEL: gpu.func @layout_store(
// CHECK: memref.reinterpret_cast %arg1 to offset: [0], sizes: [8, 8]
// CHECK: memref.store {{.*}} : memref<8x8xf32>
// CHECK-NOT: memref.store {{.*}}, %arg1[
// CHECK: gpu.return
func.func @layout_store(%X: memref<8x8xf32>, %Y: memref<8x8xf32> {tl.output}) {
  tl.kernel grid [1] threads 64 {
  ^bb0(%bx: index):
    tl.annotate_layout %Y layout(#tl.index_map<(d0, d1) -> (d1, d0), [8, 8]>) : memref<8x8xf32>
    tl.parallel [8, 8] {
    ^bb0(%i: index, %j: index):
      %v = memref.load %X[%i, %j] : memref<8x8xf32>
      memref.store %v, %Y[%i, %j] : memref<8x8xf32>
    }
  }
  return
}

// -----

// Column pairs of an Mma accumulator (elements 2i, 2i+1 of a thread: one row,
// columns c and c+1, c even) move as one 2-element store: in a parallel loop
// the accumulator drives, the body's store to a shared tile at the loop's own
// element (PairedStores.h), and in the copy of the accumulator to global
// memory (converted to f16 on the way, guarded per pair). 64 x 64 over 128
// threads: 16 pairs each.
// CHECK-LABEL: gpu.func @column_pairs(
// CHECK-COUNT-16: vector.store {{.*}} : memref<64x64xf16, #gpu.address_space<workgroup>>, vector<2xf16>
// CHECK-NOT: memref.store {{.*}} : memref<64x64xf16, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK-COUNT-16: vector.store {{.*}} {alignment = 4 : i64} : memref<64x64xf16>, vector<2xf16>
// CHECK-NOT: memref.store {{.*}} : memref<64x64xf16>
// CHECK: gpu.return
func.func @column_pairs(%A: memref<64x32xf16>, %B: memref<32x64xf16>,
                        %C: memref<64x64xf16> {tl.output}, %D: memref<64x64xf16> {tl.output}) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %a = tl.alloc_shared : memref<64x32xf16, #tl.scope<shared>>
    %b = tl.alloc_shared : memref<32x64xf16, #tl.scope<shared>>
    %t = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    tl.copy %A[%c0, %c0] [64, 32] to %a[%c0, %c0] [64, 32] : memref<64x32xf16> to memref<64x32xf16, #tl.scope<shared>>
    tl.copy %B[%c0, %c0] [32, 64] to %b[%c0, %c0] [32, 64] : memref<32x64xf16> to memref<32x64xf16, #tl.scope<shared>>
    tl.gemm %a, %b, %c {policy = #tl.policy<FullRow>, clear_accum} : memref<64x32xf16, #tl.scope<shared>>, memref<32x64xf16, #tl.scope<shared>>, memref<64x64xf32, #tl.scope<fragment>>
    tl.parallel [64, 64] {
    ^bb0(%i: index, %j: index):
      %x = memref.load %c[%i, %j] : memref<64x64xf32, #tl.scope<fragment>>
      %y = arith.truncf %x : f32 to f16
      memref.store %y, %t[%i, %j] : memref<64x64xf16, #tl.scope<shared>>
    }
    tl.copy %c[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf32, #tl.scope<fragment>> to memref<64x64xf16>
    tl.copy %t[%c0, %c0] [64, 64] to %D[%c0, %c0] [64, 64] : memref<64x64xf16, #tl.scope<shared>> to memref<64x64xf16>
  }
  return
}

// -----

// Online softmax's rescale `acc(i, j) *= s(i)` (s a row fragment of the Mma
// accumulator) is skipped when every factor the warp holds is exactly 1: a
// warp vote over the thread's 2 row factors (FullRow: 16 rows a warp) guards
// the unrolled multiplies.
// A loop of any other shape (here a division) runs unguarded.
// CHECK-LABEL: gpu.func @unit_scale(
// CHECK: mma.sync
// CHECK-COUNT-2: arith.cmpf une, {{.*}}, %cst
// CHECK: %[[ANY:.*]] = nvvm.vote.sync any %{{.*}}, %{{.*}} -> i1
// CHECK-NEXT: scf.if %[[ANY]] {
// CHECK-COUNT-32: arith.mulf
// CHECK: }
// CHECK-NOT: nvvm.vote.sync
// CHECK: arith.divf
// CHECK: gpu.return
func.func @unit_scale(%A: memref<64x32xf16>, %B: memref<32x64xf16>, %S: memref<64xf32>,
                      %C: memref<64x64xf32> {tl.output}) {
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
      %x = memref.load %c[%i, %j] : memref<64x64xf32, #tl.scope<fragment>>
      %f = memref.load %s[%i] : memref<64xf32, #tl.scope<fragment>>
      %y = arith.divf %x, %f : f32
      memref.store %y, %c[%i, %j] : memref<64x64xf32, #tl.scope<fragment>>
    }
    tl.copy %c[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf32, #tl.scope<fragment>> to memref<64x64xf32>
  }
  return
}

// -----

// bf16 operands: nvvm.mma.sync takes their pairs as i32 words (f16 pairs as
// vector<2xf16>), with the multiplicand type named.
// CHECK-LABEL: gpu.func @mma_bf16(
// CHECK: nvvm.ldmatrix
// CHECK: nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>{{.*}} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
func.func @mma_bf16(%A: memref<64x32xbf16>, %B: memref<32x64xbf16>, %C: memref<64x64xf32> {tl.output}) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %a = tl.alloc_shared : memref<64x32xbf16, #tl.scope<shared>>
    %b = tl.alloc_shared : memref<32x64xbf16, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    tl.copy %A[%c0, %c0] [64, 32] to %a[%c0, %c0] [64, 32] : memref<64x32xbf16> to memref<64x32xbf16, #tl.scope<shared>>
    tl.copy %B[%c0, %c0] [32, 64] to %b[%c0, %c0] [32, 64] : memref<32x64xbf16> to memref<32x64xbf16, #tl.scope<shared>>
    tl.gemm %a, %b, %c {policy = #tl.policy<FullRow>, clear_accum} : memref<64x32xbf16, #tl.scope<shared>>, memref<32x64xbf16, #tl.scope<shared>>, memref<64x64xf32, #tl.scope<fragment>>
    tl.copy %c[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf32, #tl.scope<fragment>> to memref<64x64xf32>
  }
  return
}

// -----

// A copy that goes element by element (here through an index-map layout and
// from f32 to f16) issues a batch of 8 loads per thread before their stores,
// so that they wait out the memory's latency together: 64 x 64 over 128
// threads is 4 batches, a loop stepping 1024 elements.
// CHECK-LABEL: gpu.func @batched_copy(
// CHECK: scf.for %{{.*}} = %{{.*}} to %c4096 step %c1024
// CHECK-COUNT-8: memref.load %reinterpret_cast
// CHECK-NOT: memref.store
// CHECK: arith.truncf
// CHECK-COUNT-8: memref.store {{.*}} : memref<64x64xf16>
// CHECK-NOT: memref.load
// CHECK: gpu.return
func.func @batched_copy(%X: memref<64x64xf32>, %Y: memref<64x64xf16> {tl.output}) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    tl.annotate_layout %X layout(#tl.index_map<(d0, d1) -> (d1, d0), [64, 64]>) : memref<64x64xf32>
    tl.copy %X[%c0, %c0] [64, 64] to %Y[%c0, %c0] [64, 64] : memref<64x64xf32> to memref<64x64xf16>
  }
  return
}
