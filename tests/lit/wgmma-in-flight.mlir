// RUN: tl-opt %s --tl-infer-layouts=wgmma=true --tl-plan-pipelines -split-input-file | FileCheck %s --check-prefix=PLAN
// RUN: tl-opt %s --tl-gpu-lowering=wgmma=true -split-input-file | FileCheck %s
// A pipelined loop on the wgmma path whose gemm reads only the loop's
// rotating tiles, and whose accumulator nothing else in the loop touches,
// leaves each iteration's wgmma batch in flight: the gemm waits for the
// previous batch only (wait_group 1), the loop's tile wait also fences the
// async proxy (so the gemm needs no barrier of its own), loads go
// num_stages - 1 iterations ahead, and the loop ends with wait_group 0.
// (A's rows here are 520 bytes apart, which TMA cannot stride: the loads stay
// cp.async, in 8-byte pieces. tma.mlir has the TMA loop.)

// PLAN-LABEL: func.func @gemm_loop
// PLAN: tl.alloc_shared {tl.rotating_copies = 4 : i64}
// PLAN: tl.alloc_shared {tl.rotating_copies = 4 : i64}
// PLAN: tl.pipelined {{.*}} stages 3 attributes {tl.wgmma_in_flight}
// PLAN-NOT: tl.tma_loads
// CHECK-LABEL: gpu.func @gemm_loop
// CHECK-NOT: nvvm.cp.async.bulk.tensor
// The prologue: two iterations ahead, two groups (A, B) each.
// CHECK-COUNT-4: nvvm.cp.async.commit.group
// CHECK: scf.for
// The tiles of iteration k: two groups (k + 1's) may still be in flight.
// CHECK: nvvm.cp.async.wait.group 2
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: gpu.barrier
// CHECK: nvvm.cp.async.commit.group
// CHECK: nvvm.cp.async.commit.group
// CHECK-NOT: gpu.barrier
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: gpu.barrier
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK-NOT: gpu.barrier
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NEXT: nvvm.cp.async.wait.group 0
func.func @gemm_loop(%A: memref<128x260xf16>, %B: memref<256x128xf16>, %C: memref<128x128xf32> {tl.output}) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    %c32 = arith.constant 32 : index
    %a = tl.alloc_shared : memref<128x32xf16, #tl.scope<shared>>
    %b = tl.alloc_shared : memref<32x128xf16, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<128x128xf32, #tl.scope<fragment>>
    %zero = arith.constant 0.0 : f32
    tl.fill %c, %zero : memref<128x128xf32, #tl.scope<fragment>>, f32
    tl.pipelined %c0 to %c8 stages 3 {
    ^bb0(%k: index):
      %k0 = arith.muli %k, %c32 : index
      tl.copy %A[%c0, %k0] [128, 32] to %a[%c0, %c0] [128, 32] : memref<128x260xf16> to memref<128x32xf16, #tl.scope<shared>>
      tl.copy %B[%k0, %c0] [32, 128] to %b[%c0, %c0] [32, 128] : memref<256x128xf16> to memref<32x128xf16, #tl.scope<shared>>
      tl.gemm %a, %b, %c : memref<128x32xf16, #tl.scope<shared>>, memref<32x128xf16, #tl.scope<shared>>, memref<128x128xf32, #tl.scope<fragment>>
    }
    tl.copy %c[%c0, %c0] [128, 128] to %C[%c0, %c0] [128, 128] : memref<128x128xf32, #tl.scope<fragment>> to memref<128x128xf32>
  }
  return
}

// -----

// The accumulator is read inside the loop (a running copy out): each batch
// must be finished before the copy, so the gemm waits for it (wait_group 0).
// Its tiles are the loop's TMA loads' (async-proxy writes, waited for on
// their mbarrier): the loop fences what was written before it once, and the
// gemm needs no proxy fence and barrier of its own.
// PLAN-LABEL: func.func @accumulator_read_in_loop
// PLAN: tl.pipelined {{.*}} stages 3 attributes {tl.tma_loads} {
// CHECK-LABEL: gpu.func @accumulator_read_in_loop
// CHECK: nvvm.fence.proxy
// CHECK-NEXT: gpu.barrier
// CHECK: scf.for
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-NEXT: gpu.barrier
// CHECK-NOT: nvvm.fence.proxy
// CHECK-NOT: gpu.barrier
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NOT: nvvm.wgmma.wait.group.sync.aligned 1
func.func @accumulator_read_in_loop(%A: memref<128x256xf16>, %B: memref<256x128xf16>, %C: memref<128x128xf32> {tl.output}) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    %c32 = arith.constant 32 : index
    %a = tl.alloc_shared : memref<128x32xf16, #tl.scope<shared>>
    %b = tl.alloc_shared : memref<32x128xf16, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<128x128xf32, #tl.scope<fragment>>
    %zero = arith.constant 0.0 : f32
    tl.fill %c, %zero : memref<128x128xf32, #tl.scope<fragment>>, f32
    tl.pipelined %c0 to %c8 stages 3 {
    ^bb0(%k: index):
      %k0 = arith.muli %k, %c32 : index
      tl.copy %A[%c0, %k0] [128, 32] to %a[%c0, %c0] [128, 32] : memref<128x256xf16> to memref<128x32xf16, #tl.scope<shared>>
      tl.copy %B[%k0, %c0] [32, 128] to %b[%c0, %c0] [32, 128] : memref<256x128xf16> to memref<32x128xf16, #tl.scope<shared>>
      tl.gemm %a, %b, %c : memref<128x32xf16, #tl.scope<shared>>, memref<32x128xf16, #tl.scope<shared>>, memref<128x128xf32, #tl.scope<fragment>>
      tl.copy %c[%c0, %c0] [128, 128] to %C[%c0, %c0] [128, 128] : memref<128x128xf32, #tl.scope<fragment>> to memref<128x128xf32>
    }
  }
  return
}

// -----

// One stage leaves no iteration to overlap with: the batch is waited for.
// PLAN-LABEL: func.func @one_stage
// PLAN: tl.pipelined {{.*}} stages 1 attributes {tl.tma_loads} {
// CHECK-LABEL: gpu.func @one_stage
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NOT: nvvm.wgmma.wait.group.sync.aligned 1
func.func @one_stage(%A: memref<128x256xf16>, %B: memref<256x128xf16>, %C: memref<128x128xf32> {tl.output}) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    %c32 = arith.constant 32 : index
    %a = tl.alloc_shared : memref<128x32xf16, #tl.scope<shared>>
    %b = tl.alloc_shared : memref<32x128xf16, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<128x128xf32, #tl.scope<fragment>>
    %zero = arith.constant 0.0 : f32
    tl.fill %c, %zero : memref<128x128xf32, #tl.scope<fragment>>, f32
    tl.pipelined %c0 to %c8 stages 1 {
    ^bb0(%k: index):
      %k0 = arith.muli %k, %c32 : index
      tl.copy %A[%c0, %k0] [128, 32] to %a[%c0, %c0] [128, 32] : memref<128x256xf16> to memref<128x32xf16, #tl.scope<shared>>
      tl.copy %B[%k0, %c0] [32, 128] to %b[%c0, %c0] [32, 128] : memref<256x128xf16> to memref<32x128xf16, #tl.scope<shared>>
      tl.gemm %a, %b, %c : memref<128x32xf16, #tl.scope<shared>>, memref<32x128xf16, #tl.scope<shared>>, memref<128x128xf32, #tl.scope<fragment>>
    }
    tl.copy %c[%c0, %c0] [128, 128] to %C[%c0, %c0] [128, 128] : memref<128x128xf32, #tl.scope<fragment>> to memref<128x128xf32>
  }
  return
}

// -----

// A gemm in a TMA loop that reads a tile the loop body writes itself (here a
// fill; the staged backward's P and dS) fences and publishes it before its
// wgmma; the one reading only the loads' tiles does not.
// CHECK-LABEL: gpu.func @operand_written_in_loop
// CHECK: scf.for
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-NOT: nvvm.fence.proxy
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvvm.fence.proxy
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: nvvm.wgmma.fence.aligned
func.func @operand_written_in_loop(%A: memref<128x256xf16>, %B: memref<256x128xf16>, %C: memref<128x128xf32> {tl.output}) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    %c32 = arith.constant 32 : index
    %a = tl.alloc_shared : memref<128x32xf16, #tl.scope<shared>>
    %b = tl.alloc_shared : memref<32x128xf16, #tl.scope<shared>>
    %p = tl.alloc_shared : memref<128x32xf16, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<128x128xf32, #tl.scope<fragment>>
    %zero = arith.constant 0.0 : f32
    %half = arith.constant 0.5 : f16
    tl.fill %c, %zero : memref<128x128xf32, #tl.scope<fragment>>, f32
    tl.pipelined %c0 to %c8 stages 1 {
    ^bb0(%k: index):
      %k0 = arith.muli %k, %c32 : index
      tl.copy %A[%c0, %k0] [128, 32] to %a[%c0, %c0] [128, 32] : memref<128x256xf16> to memref<128x32xf16, #tl.scope<shared>>
      tl.copy %B[%k0, %c0] [32, 128] to %b[%c0, %c0] [32, 128] : memref<256x128xf16> to memref<32x128xf16, #tl.scope<shared>>
      tl.gemm %a, %b, %c : memref<128x32xf16, #tl.scope<shared>>, memref<32x128xf16, #tl.scope<shared>>, memref<128x128xf32, #tl.scope<fragment>>
      tl.fill %p, %half : memref<128x32xf16, #tl.scope<shared>>, f16
      tl.gemm %p, %b, %c : memref<128x32xf16, #tl.scope<shared>>, memref<32x128xf16, #tl.scope<shared>>, memref<128x128xf32, #tl.scope<fragment>>
    }
    tl.copy %c[%c0, %c0] [128, 128] to %C[%c0, %c0] [128, 128] : memref<128x128xf32, #tl.scope<fragment>> to memref<128x128xf32>
  }
  return
}
