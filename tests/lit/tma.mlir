// RUN: tl-opt %s --tl-infer-layouts=wgmma=true --tl-plan-pipelines=warp-specialize=false -split-input-file | FileCheck %s --check-prefix=PLAN
// RUN: tl-opt %s --tl-gpu-lowering="wgmma=true warp-specialize=false" -split-input-file | FileCheck %s
// RUN: tl-opt %s --tl-infer-layouts=wgmma=true --tl-plan-pipelines=tma=false -split-input-file | FileCheck %s --check-prefix=OFF
// OFF-NOT: tl.tma_loads
// On the wgmma path a pipelined loop whose copies can all go by TMA
// (tl.tma_loads) loads its tiles with cp.async.bulk.tensor on one mbarrier
// per rotating copy: thread 0 arms the mbarrier of an iteration's copy with
// the iteration's bytes and issues one box per swizzle-atom column block;
// every thread waits for that mbarrier's phase where the copies stood. The
// boxes read through tensor maps the kernel takes after its own parameters
// (tl.tensor_maps). Here without a producer warpgroup (warp-specialized.mlir has
// it): every thread meets at a barrier each iteration.

// A [128, 32] f16 tiles: 64-byte rows, one box of [128, 32] (64-byte
// swizzle); B [32, 128]: 256-byte rows, two boxes of [32, 64] (128-byte
// swizzle). 8 KiB each: 16 KiB an iteration.
// PLAN-LABEL: func.func @gemm_loop
// PLAN: tl.pipelined {{.*}} stages 3 attributes {tl.tma_loads, tl.wgmma_in_flight}
// CHECK-LABEL: gpu.func @gemm_loop
// CHECK-SAME: %arg3: !llvm.ptr, %arg4: !llvm.ptr
// CHECK-SAME: tl.tensor_maps = [#tl.tensor_map<param = 0, box = [128, 32], swizzle = 64>, #tl.tensor_map<param = 1, box = [32, 64], swizzle = 128>]
// Four rotating copies: four mbarriers, initialised by thread 0 before the
// barrier that precedes the prologue.
// CHECK-COUNT-4: nvvm.mbarrier.init
// CHECK: gpu.barrier
// The prologue: iterations 0 and 1 (in flight: num_stages - 1 ahead).
// CHECK: %[[BYTES:.*]] = arith.constant 16384 : i32
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %[[BYTES]]
// CHECK-COUNT-3: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK: nvvm.mbarrier.arrive.expect_tx
// CHECK-COUNT-3: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK: scf.for
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-NEXT: gpu.barrier
// CHECK: nvvm.mbarrier.arrive.expect_tx
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg3, %{{.*}}, box[
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg4, %{{.*}}, box[
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg4, %{{.*}}, box[
// CHECK-NOT: nvvm.cp.async.shared.global
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
func.func @gemm_loop(%A: memref<128x256xf16>, %B: memref<256x128xf16>, %C: memref<128x128xf32> {tl.output}) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    %c32 = arith.constant 32 : index
    %zero = arith.constant 0.0 : f32
    %a = tl.alloc_shared : memref<128x32xf16, #tl.scope<shared>>
    %b = tl.alloc_shared : memref<32x128xf16, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<128x128xf32, #tl.scope<fragment>>
    tl.fill %c, %zero : memref<128x128xf32, #tl.scope<fragment>>, f32
    tl.pipelined %c0 to %c8 stages 3 {
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

// A 4-D tensor ([batch, seq, heads, dim], attention's shape) read a [64, 64]
// region at a time: the box keeps the unit dimensions; coordinates go
// innermost first.
// PLAN-LABEL: func.func @four_dims
// PLAN: attributes {tl.tma_loads
// CHECK-LABEL: gpu.func @four_dims
// CHECK-SAME: tl.tensor_maps = [#tl.tensor_map<param = 0, box = [1, 64, 1, 64], swizzle = 128>, #tl.tensor_map<param = 1, box = [1, 64, 1, 64], swizzle = 128>]
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}} box[{{.*}}, {{.*}}, {{.*}}, {{.*}}]
func.func @four_dims(%Q: memref<2x256x4x64xf16>, %K: memref<2x256x4x64xf16>, %S: memref<64x64xf32> {tl.output}) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c64 = arith.constant 64 : index
    %zero = arith.constant 0.0 : f32
    %q = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    %k = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    %s = tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    tl.fill %s, %zero : memref<64x64xf32, #tl.scope<fragment>>, f32
    tl.pipelined %c0 to %c4 stages 2 {
    ^bb0(%j: index):
      %row = arith.muli %j, %c64 : index
      tl.copy %Q[%c1, %row, %c1, %c0] [1, 64, 1, 64] to %q[%c0, %c0] [64, 64] : memref<2x256x4x64xf16> to memref<64x64xf16, #tl.scope<shared>>
      tl.copy %K[%c1, %row, %c1, %c0] [1, 64, 1, 64] to %k[%c0, %c0] [64, 64] : memref<2x256x4x64xf16> to memref<64x64xf16, #tl.scope<shared>>
      tl.gemm %q, %k, %s {transpose_b} : memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf32, #tl.scope<fragment>>
    }
    tl.copy %s[%c0, %c0] [64, 64] to %S[%c0, %c0] [64, 64] : memref<64x64xf32, #tl.scope<fragment>> to memref<64x64xf32>
  }
  return
}

// -----

// A source TMA cannot stride (rows 520 bytes apart) keeps the whole loop on
// cp.async.
// PLAN-LABEL: func.func @odd_stride
// PLAN-NOT: tl.tma_loads
// CHECK-LABEL: gpu.func @odd_stride
// CHECK-NOT: nvvm.cp.async.bulk.tensor
// CHECK-NOT: tl.tensor_maps
// CHECK: gpu.return
func.func @odd_stride(%A: memref<128x260xf16>, %B: memref<256x128xf16>, %C: memref<128x128xf32> {tl.output}) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    %c32 = arith.constant 32 : index
    %zero = arith.constant 0.0 : f32
    %a = tl.alloc_shared : memref<128x32xf16, #tl.scope<shared>>
    %b = tl.alloc_shared : memref<32x128xf16, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<128x128xf32, #tl.scope<fragment>>
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

// A TMA loop inside another loop initialises its mbarriers again each time
// round: after the loop, once every thread is past its last wait, thread 0
// invalidates them (initialising a valid mbarrier is undefined), and
// tl-check-sync's phase proof follows init, use and inval round after round.
// PLAN-LABEL: func.func @nested
// PLAN: tl.pipelined {{.*}} attributes {tl.tma_loads, tl.wgmma_in_flight}
// CHECK-LABEL: gpu.func @nested
// CHECK: scf.for
// CHECK-COUNT-3: nvvm.mbarrier.init
// CHECK: scf.for
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: gpu.barrier
// CHECK: scf.if
// CHECK-COUNT-3: nvvm.mbarrier.inval
func.func @nested(%A: memref<128x256xf16>, %B: memref<256x128xf16>, %C: memref<128x128xf32> {tl.output}) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    %c64 = arith.constant 64 : index
    %zero = arith.constant 0.0 : f32
    %a = tl.alloc_shared : memref<128x64xf16, #tl.scope<shared>>
    %b = tl.alloc_shared : memref<64x128xf16, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<128x128xf32, #tl.scope<fragment>>
    tl.fill %c, %zero : memref<128x128xf32, #tl.scope<fragment>>, f32
    scf.for %r = %c0 to %c3 step %c1 {
      tl.pipelined %c0 to %c4 stages 2 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c64 : index
        tl.copy %A[%c0, %k0] [128, 64] to %a[%c0, %c0] [128, 64] : memref<128x256xf16> to memref<128x64xf16, #tl.scope<shared>>
        tl.copy %B[%k0, %c0] [64, 128] to %b[%c0, %c0] [64, 128] : memref<256x128xf16> to memref<64x128xf16, #tl.scope<shared>>
        tl.gemm %a, %b, %c : memref<128x64xf16, #tl.scope<shared>>, memref<64x128xf16, #tl.scope<shared>>, memref<128x128xf32, #tl.scope<fragment>>
      }
    }
    tl.copy %c[%c0, %c0] [128, 128] to %C[%c0, %c0] [128, 128] : memref<128x128xf32, #tl.scope<fragment>> to memref<128x128xf32>
  }
  return
}
