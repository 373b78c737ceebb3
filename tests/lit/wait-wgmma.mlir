// RUN: tl-opt %s --tl-gpu-lowering=wgmma=true -split-input-file -verify-diagnostics | FileCheck %s
// A gemm with wg_wait = -1 stays in flight on the wgmma path: its batch is
// committed but not waited for, register work on other fragments runs while
// the tensor cores do, and tl.wait_wgmma waits (wait_group N) and then puts
// the results in the accumulator's registers.

// CHECK-LABEL: gpu.func @overlap
// The first gemm completes where it stands.
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// The second is committed, not waited for.
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: nvvm.wgmma.wait.group
// The parallel loop on the first gemm's accumulator runs before the wait.
// CHECK: arith.mulf
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: llvm.extractvalue
func.func @overlap(%A: memref<64x64xf16>, %B: memref<64x64xf16>,
                   %C: memref<64x64xf32> {tl.output}, %D: memref<64x64xf32> {tl.output}) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %two = arith.constant 2.0 : f32
    %a = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    %b = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    %d = tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    tl.copy %A[%c0, %c0] [64, 64] to %a[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #tl.scope<shared>>
    tl.copy %B[%c0, %c0] [64, 64] to %b[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #tl.scope<shared>>
    tl.gemm %a, %b, %d {clear_accum} : memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf32, #tl.scope<fragment>>
    tl.gemm %a, %b, %c {clear_accum, wg_wait = -1} : memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf32, #tl.scope<fragment>>
    tl.parallel [64, 64] {
    ^bb0(%i: index, %j: index):
      %v = memref.load %d[%i, %j] : memref<64x64xf32, #tl.scope<fragment>>
      %w = arith.mulf %v, %two : f32
      memref.store %w, %d[%i, %j] : memref<64x64xf32, #tl.scope<fragment>>
    }
    tl.wait_wgmma 0
    tl.copy %c[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf32, #tl.scope<fragment>> to memref<64x64xf32>
    tl.copy %d[%c0, %c0] [64, 64] to %D[%c0, %c0] [64, 64] : memref<64x64xf32, #tl.scope<fragment>> to memref<64x64xf32>
  }
  return
}

// -----

// Reading the accumulator before the wait is an error at that line.
func.func @read_before_wait(%A: memref<64x64xf16>, %B: memref<64x64xf16>, %C: memref<64x64xf32> {tl.output}) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %a = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    %b = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    tl.copy %A[%c0, %c0] [64, 64] to %a[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #tl.scope<shared>>
    tl.copy %B[%c0, %c0] [64, 64] to %b[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #tl.scope<shared>>
    // expected-note @+1 {{the gemm left in flight (wg_wait = -1)}}
    tl.gemm %a, %b, %c {clear_accum, wg_wait = -1} : memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf32, #tl.scope<fragment>>
    // expected-error @+1 {{touches a fragment of a gemm still in flight: wait_wgmma first}}
    tl.copy %c[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf32, #tl.scope<fragment>> to memref<64x64xf32>
    tl.wait_wgmma 0
  }
  return
}

// -----

// Writing shared memory while the gemm reads its tiles is an error.
func.func @shared_write_in_flight(%A: memref<64x64xf16>, %B: memref<64x64xf16>, %C: memref<64x64xf32> {tl.output}) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %a = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    %b = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    tl.copy %A[%c0, %c0] [64, 64] to %a[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #tl.scope<shared>>
    tl.copy %B[%c0, %c0] [64, 64] to %b[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #tl.scope<shared>>
    // expected-note @+1 {{the gemm left in flight (wg_wait = -1)}}
    tl.gemm %a, %b, %c {clear_accum, wg_wait = -1} : memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf32, #tl.scope<fragment>>
    // expected-error @+1 {{runs while a gemm is in flight; only register work on other fragments, writes to shared bytes no gemm in flight reads, tile adds into global memory and more gemms may (wait_wgmma first)}}
    tl.copy %A[%c0, %c0] [64, 64] to %a[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #tl.scope<shared>>
    tl.wait_wgmma 0
    tl.copy %c[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf32, #tl.scope<fragment>> to memref<64x64xf32>
  }
  return
}

// -----

// A gemm left in flight needs a wait after it in its block.
func.func @no_wait(%A: memref<64x64xf16>, %B: memref<64x64xf16>, %C: memref<64x64xf32> {tl.output}) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %a = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    %b = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    tl.copy %A[%c0, %c0] [64, 64] to %a[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #tl.scope<shared>>
    tl.copy %B[%c0, %c0] [64, 64] to %b[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #tl.scope<shared>>
    // expected-error @+1 {{gemm left in flight (wg_wait = -1) with no wait_wgmma after it in its block}}
    tl.gemm %a, %b, %c {clear_accum, wg_wait = -1} : memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf32, #tl.scope<fragment>>
  }
  return
}

// -----

// The wait belongs in the gemm's block: here it is inside an if.
func.func @wait_elsewhere(%A: memref<64x64xf16>, %B: memref<64x64xf16>, %C: memref<64x64xf32> {tl.output}) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %flag = arith.cmpi eq, %bx, %c0 : index
    %a = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    %b = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    tl.copy %A[%c0, %c0] [64, 64] to %a[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #tl.scope<shared>>
    tl.copy %B[%c0, %c0] [64, 64] to %b[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #tl.scope<shared>>
    // expected-note @+1 {{the gemm left in flight (wg_wait = -1)}}
    tl.gemm %a, %b, %c {clear_accum, wg_wait = -1} : memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf32, #tl.scope<fragment>>
    scf.if %flag {
      // expected-error @+1 {{waits for a gemm left in flight in another block}}
      tl.wait_wgmma 0
    }
    tl.wait_wgmma 0
    tl.copy %c[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf32, #tl.scope<fragment>> to memref<64x64xf32>
  }
  return
}

// -----

// Element writes to a shared tile the gemm in flight does not read run
// before the wait (the staged backward's P^T while dP^T runs).
// CHECK-LABEL: gpu.func @shared_write_elsewhere
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: nvvm.wgmma.wait.group
// CHECK: vector.store {{.*}}#gpu.address_space<workgroup>>
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
func.func @shared_write_elsewhere(%A: memref<64x64xf16>, %B: memref<64x64xf16>, %C: memref<64x64xf32> {tl.output}) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %a = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    %b = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    %p = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    %d = tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    tl.copy %A[%c0, %c0] [64, 64] to %a[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #tl.scope<shared>>
    tl.copy %B[%c0, %c0] [64, 64] to %b[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #tl.scope<shared>>
    tl.gemm %a, %b, %d {clear_accum} : memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf32, #tl.scope<fragment>>
    tl.gemm %a, %b, %c {clear_accum, wg_wait = -1} : memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf32, #tl.scope<fragment>>
    tl.parallel [64, 64] {
    ^bb0(%i: index, %j: index):
      %v = memref.load %d[%i, %j] : memref<64x64xf32, #tl.scope<fragment>>
      %e = math.exp2 %v : f32
      %h = arith.truncf %e : f32 to f16
      memref.store %h, %p[%i, %j] : memref<64x64xf16, #tl.scope<shared>>
    }
    tl.wait_wgmma 0
    tl.copy %c[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf32, #tl.scope<fragment>> to memref<64x64xf32>
  }
  return
}

// -----

// A fragment's copy to a shared tile no gemm in flight reads runs while one
// is in flight (the staged backward's dQ tile with dq_first), and so does a
// tile's add into global memory; a copy to the tile the gemm reads does not.
// CHECK-LABEL: gpu.func @copy_beside_flight
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: nvvm.wgmma.wait.group.sync.aligned
// CHECK: gpu.barrier
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
func.func @copy_beside_flight(%A: memref<64x64xf16>, %B: memref<64x64xf16>, %C: memref<64x64xf32> {tl.output}, %D: memref<64x64xf32> {tl.output}) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %zero = arith.constant 0.0 : f32
    %a = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    %b = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    %s = tl.alloc_shared : memref<64x64xf32, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    %d = tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    tl.copy %A[%c0, %c0] [64, 64] to %a[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #tl.scope<shared>>
    tl.copy %B[%c0, %c0] [64, 64] to %b[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #tl.scope<shared>>
    tl.gemm %a, %b, %d {clear_accum} : memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf32, #tl.scope<fragment>>
    tl.gemm %a, %b, %c {clear_accum, wg_wait = -1} : memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf32, #tl.scope<fragment>>
    tl.copy %d[%c0, %c0] [64, 64] to %s[%c0, %c0] [64, 64] : memref<64x64xf32, #tl.scope<fragment>> to memref<64x64xf32, #tl.scope<shared>>
    tl.atomic_add_tile %s[%c0, %c0] [64, 64] to %D[%c0, %c0] [64, 64] : memref<64x64xf32, #tl.scope<shared>> to memref<64x64xf32>
    tl.wait_wgmma 0
    tl.copy %c[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf32, #tl.scope<fragment>> to memref<64x64xf32>
  }
  return
}

// -----

func.func @copy_into_flight(%A: memref<64x64xf16>, %B: memref<64x64xf16>, %C: memref<64x64xf32> {tl.output}) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %a = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    %b = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    %d = tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    tl.copy %A[%c0, %c0] [64, 64] to %a[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #tl.scope<shared>>
    tl.copy %B[%c0, %c0] [64, 64] to %b[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #tl.scope<shared>>
    tl.gemm %a, %b, %d {clear_accum} : memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf32, #tl.scope<fragment>>
    // expected-note @+1 {{the gemm left in flight (wg_wait = -1)}}
    tl.gemm %a, %b, %c {clear_accum, wg_wait = -1} : memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf32, #tl.scope<fragment>>
    // expected-error @+1 {{runs while a gemm is in flight; only register work on other fragments, writes to shared bytes no gemm in flight reads, tile adds into global memory and more gemms may (wait_wgmma first)}}
    tl.copy %d[%c0, %c0] [64, 64] to %b[%c0, %c0] [64, 64] : memref<64x64xf32, #tl.scope<fragment>> to memref<64x64xf16, #tl.scope<shared>>
    tl.wait_wgmma 0
    tl.copy %c[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf32, #tl.scope<fragment>> to memref<64x64xf32>
  }
  return
}
