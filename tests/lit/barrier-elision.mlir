// RUN: tl-opt %s --tl-gpu-lowering -split-input-file | FileCheck %s
// Barrier elision (BarrierElision.h) on the barriers the GPU lowering puts
// around shared writes.

// A loop body has no barrier before it that orders the iteration before: the
// barrier before the write of %s stays (the last iteration read %s), and so
// does the one after it (the reads follow). Inside a branch the enclosing
// barrier counts: since the barrier after %s's write, threads have read %s
// and written C, and the branch reads A and writes %t, so its leading barrier
// goes; the barrier after it stays (the reads of %t follow). Were the branch
// to read C, the barrier would stay: it also orders global memory.
// CHECK-LABEL: gpu.func @loop_and_branch(
// CHECK: scf.for
// CHECK-NEXT: gpu.barrier
// CHECK: vector.store {{.*}} : memref<64xf16, #gpu.address_space<workgroup>>, vector<8xf16>
// CHECK: gpu.barrier
// CHECK: memref.load {{.*}} : memref<64xf16, #gpu.address_space<workgroup>>
// CHECK: scf.if
// CHECK-NOT: gpu.barrier
// CHECK: memref.store {{.*}} : memref<64xf32, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK: memref.load {{.*}} : memref<64xf32, #gpu.address_space<workgroup>>
// CHECK: gpu.return
func.func @loop_and_branch(%A: memref<8x64xf16>, %C: memref<8x64xf32> {tl.output}) {
  tl.kernel grid [1] threads 64 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    %c1 = arith.constant 1 : index
    %s = tl.alloc_shared : memref<64xf16, #tl.scope<shared>>
    %t = tl.alloc_shared : memref<64xf32, #tl.scope<shared>>
    scf.for %k = %c0 to %c8 step %c1 {
      tl.copy %A[%k, %c0] [1, 64] to %s[%c0] [64] : memref<8x64xf16> to memref<64xf16, #tl.scope<shared>>
      %odd = arith.remui %k, %c8 : index
      %branch = arith.cmpi ne, %odd, %c0 : index
      tl.parallel [64] {
      ^bb0(%i: index):
        %x = memref.load %s[%i] : memref<64xf16, #tl.scope<shared>>
        %y = arith.extf %x : f16 to f32
        memref.store %y, %C[%k, %i] : memref<8x64xf32>
      }
      scf.if %branch {
        tl.parallel [64] {
        ^bb0(%i: index):
          %x = memref.load %A[%k, %i] : memref<8x64xf16>
          %y = arith.extf %x : f16 to f32
          memref.store %y, %t[%i] : memref<64xf32, #tl.scope<shared>>
        }
      }
      tl.parallel [64] {
      ^bb0(%i: index):
        %j = arith.subi %c8, %c1 : index
        %x = memref.load %t[%i] : memref<64xf32, #tl.scope<shared>>
        memref.store %x, %C[%j, %i] : memref<8x64xf32>
      }
    }
  }
  return
}

// -----

// Two writes of one tile with reads between keep the barrier between; the
// kernel's start needs none before the first write.
// CHECK-LABEL: gpu.func @same_tile(
// CHECK-NOT: gpu.barrier
// CHECK: memref.store {{.*}} : memref<64xf32, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK: memref.load {{.*}} : memref<64xf32, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK: memref.store {{.*}} : memref<64xf32, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK: memref.load {{.*}} : memref<64xf32, #gpu.address_space<workgroup>>
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
func.func @same_tile(%A: memref<64xf32>, %C: memref<2x64xf32> {tl.output}) {
  tl.kernel grid [1] threads 64 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %t = tl.alloc_shared : memref<64xf32, #tl.scope<shared>>
    tl.parallel [64] {
    ^bb0(%i: index):
      %x = memref.load %A[%i] : memref<64xf32>
      memref.store %x, %t[%i] : memref<64xf32, #tl.scope<shared>>
    }
    tl.parallel [64] {
    ^bb0(%i: index):
      %j = arith.subi %c1, %c1 : index
      %r = arith.subi %c1, %i : index
      %x = memref.load %t[%i] : memref<64xf32, #tl.scope<shared>>
      memref.store %x, %C[%j, %i] : memref<2x64xf32>
    }
    tl.parallel [64] {
    ^bb0(%i: index):
      %x = memref.load %A[%i] : memref<64xf32>
      %y = arith.addf %x, %x : f32
      memref.store %y, %t[%i] : memref<64xf32, #tl.scope<shared>>
    }
    tl.parallel [64] {
    ^bb0(%i: index):
      %x = memref.load %t[%i] : memref<64xf32, #tl.scope<shared>>
      memref.store %x, %C[%c1, %i] : memref<2x64xf32>
    }
  }
  return
}

// -----

// A barrier also orders global memory: the second loop reads the C rows other
// threads wrote, so the barrier before its shared write stays.
// CHECK-LABEL: gpu.func @global_order(
// CHECK: memref.store {{.*}} : memref<2x64xf32>
// CHECK: gpu.barrier
// CHECK: memref.load {{.*}} : memref<2x64xf32>
// CHECK: memref.store {{.*}} : memref<64xf32, #gpu.address_space<workgroup>>
func.func @global_order(%A: memref<64xf32>, %C: memref<2x64xf32> {tl.output}) {
  tl.kernel grid [1] threads 64 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c63 = arith.constant 63 : index
    %t = tl.alloc_shared : memref<64xf32, #tl.scope<shared>>
    tl.parallel [64] {
    ^bb0(%i: index):
      %x = memref.load %A[%i] : memref<64xf32>
      memref.store %x, %C[%c0, %i] : memref<2x64xf32>
    }
    tl.parallel [64] {
    ^bb0(%i: index):
      %r = arith.subi %c63, %i : index
      %x = memref.load %C[%c0, %r] : memref<2x64xf32>
      memref.store %x, %t[%i] : memref<64xf32, #tl.scope<shared>>
    }
    tl.parallel [64] {
    ^bb0(%i: index):
      %x = memref.load %t[%i] : memref<64xf32, #tl.scope<shared>>
      memref.store %x, %C[%c1, %i] : memref<2x64xf32>
    }
  }
  return
}

// -----

// A cp.async issue after a barrier is ordered by it against earlier accesses
// (the copy cannot start sooner): the entry copy into %a, whose bytes %r had
// (planShared reuses them once %r is dead), keeps the barrier after the
// threads' reads of %r.
// CHECK-LABEL: gpu.func @issue_after_reads(
// CHECK: vector.load {{.*}} : memref<64x256xf16, #gpu.address_space<workgroup>>, vector<8xf16>
// CHECK-NOT: nvvm.cp.async.shared.global
// CHECK: gpu.barrier
// CHECK: nvvm.cp.async.shared.global
func.func @issue_after_reads(%A: memref<64x64xf16>, %A2: memref<64x256xf16>, %B: memref<256x64xf16>,
                             %R: memref<256xf16>, %C: memref<64x64xf32> {tl.output}) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %c40 = arith.constant 40 : index
    %cst = arith.constant 0.0 : f32
    %r = tl.alloc_shared : memref<64x256xf16, #tl.scope<shared>>
    %a = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    %b = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    tl.copy %A2[%c0, %c0] [64, 256] to %r[%c0, %c0] [64, 256] : memref<64x256xf16> to memref<64x256xf16, #tl.scope<shared>>
    tl.copy %r[%c40, %c0] [1, 256] to %R[%c0] [256] : memref<64x256xf16, #tl.scope<shared>> to memref<256xf16>
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

// Likewise for the source: the pipeline's copies read X, which the threads
// wrote just before, so the barrier before the prologue stays.
// CHECK-LABEL: gpu.func @issue_after_source_writes(
// CHECK: memref.store {{.*}} : memref<256x64xf16>
// CHECK-NOT: nvvm.cp.async.shared.global
// CHECK: gpu.barrier
// CHECK: nvvm.cp.async.shared.global
func.func @issue_after_source_writes(%X: memref<256x64xf16> {tl.output}, %C: memref<64x64xf32> {tl.output}) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %cst = arith.constant 0.0 : f32
    %one = arith.constant 1.0 : f16
    %b = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    tl.parallel [256, 64] {
    ^bb0(%i: index, %j: index):
      memref.store %one, %X[%i, %j] : memref<256x64xf16>
    }
    tl.fill %c, %cst : memref<64x64xf32, #tl.scope<fragment>>, f32
    tl.pipelined %c0 to %c4 stages 1 {
    ^bb0(%k: index):
      %c64 = arith.constant 64 : index
      %k0 = arith.muli %k, %c64 : index
      tl.copy %X[%k0, %c0] [64, 64] to %b[%c0, %c0] [64, 64] : memref<256x64xf16> to memref<64x64xf16, #tl.scope<shared>>
      tl.gemm %b, %b, %c {policy = #tl.policy<FullRow>} : memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf32, #tl.scope<fragment>>
    }
    tl.copy %c[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf32, #tl.scope<fragment>> to memref<64x64xf32>
  }
  return
}
