// RUN: tl-opt %s --tl-plan-pipelines -split-input-file | FileCheck %s
// tl-plan-pipelines: the copies that go asynchronous, recorded in the IR.

// Of a pipelined body's two global -> shared copies, the one from a tensor
// the loop also writes stays synchronous (issued early, it would miss the
// write). The other moves 64 f16 a row in 16-byte pieces and its tile gets
// stages + 1 = 2 rotating copies. The copy before the loop, whose tile the
// loop reads, is issued ahead of it; the loop waits for it.
// CHECK-LABEL: func.func @pipelined
// CHECK: %[[Q:.*]] = tl.alloc_shared : memref<64xf16
// CHECK: %[[A:.*]] = tl.alloc_shared {tl.rotating_copies = 2 : i64} : memref<64xf16
// CHECK: %[[W:.*]] = tl.alloc_shared : memref<64xf16
// CHECK: tl.copy %arg0{{.*}} to %[[Q]]{{.*}} {tl.async_entry_copy = 16 : i64}
// CHECK: tl.pipelined {{.*}} stages 1 attributes {tl.waits_entry_copies}
// CHECK: tl.copy %arg1{{.*}} to %[[A]]{{.*}} {tl.async_copy = 16 : i64}
// CHECK: tl.copy %arg2{{.*}} to %[[W]]
// CHECK-NOT: tl.async
func.func @pipelined(%Q: memref<64xf16>, %A: memref<8x64xf16>, %W: memref<8x64xf16>, %C: memref<8x64xf16> {tl.output}) {
  tl.kernel grid [1] threads 64 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    %q = tl.alloc_shared : memref<64xf16, #tl.scope<shared>>
    %a = tl.alloc_shared : memref<64xf16, #tl.scope<shared>>
    %w = tl.alloc_shared : memref<64xf16, #tl.scope<shared>>
    tl.copy %Q[%c0] [64] to %q[%c0] [64] : memref<64xf16> to memref<64xf16, #tl.scope<shared>>
    tl.pipelined %c0 to %c8 stages 1 {
    ^bb0(%k: index):
      tl.copy %A[%k, %c0] [1, 64] to %a[%c0] [64] : memref<8x64xf16> to memref<64xf16, #tl.scope<shared>>
      tl.copy %W[%k, %c0] [1, 64] to %w[%c0] [64] : memref<8x64xf16> to memref<64xf16, #tl.scope<shared>>
      tl.copy %a[%c0] [64] to %C[%k, %c0] [1, 64] : memref<64xf16, #tl.scope<shared>> to memref<8x64xf16>
      tl.copy %q[%c0] [64] to %C[%k, %c0] [1, 64] : memref<64xf16, #tl.scope<shared>> to memref<8x64xf16>
      tl.copy %a[%c0] [64] to %W[%k, %c0] [1, 64] : memref<64xf16, #tl.scope<shared>> to memref<8x64xf16>
    }
  }
  return
}

// -----

// num_stages 0 is a plain loop: nothing is planned.
// CHECK-LABEL: func.func @plain
// CHECK-NOT: tl.async_copy
// CHECK-NOT: tl.rotating_copies
// CHECK: return
func.func @plain(%A: memref<8x64xf16>, %C: memref<8x64xf16> {tl.output}) {
  tl.kernel grid [1] threads 64 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    %a = tl.alloc_shared : memref<64xf16, #tl.scope<shared>>
    tl.pipelined %c0 to %c8 stages 0 {
    ^bb0(%k: index):
      tl.copy %A[%k, %c0] [1, 64] to %a[%c0] [64] : memref<8x64xf16> to memref<64xf16, #tl.scope<shared>>
      tl.copy %a[%c0] [64] to %C[%k, %c0] [1, 64] : memref<64xf16, #tl.scope<shared>> to memref<8x64xf16>
    }
  }
  return
}

// -----

// The loop adds into its copy's source tensor (tl.atomic_add declares a
// write of it): issued early, the copy would miss the add, so it stays
// synchronous. The decision reads the ops' declared memory effects.
// CHECK-LABEL: func.func @source_written
// CHECK-NOT: tl.async_copy
// CHECK: return
func.func @source_written(%A: memref<8x64xf32>, %C: memref<8x64xf32> {tl.output}) {
  tl.kernel grid [1] threads 64 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    %one = arith.constant 1.0 : f32
    %a = tl.alloc_shared : memref<64xf32, #tl.scope<shared>>
    tl.pipelined %c0 to %c8 stages 1 {
    ^bb0(%k: index):
      tl.copy %A[%k, %c0] [1, 64] to %a[%c0] [64] : memref<8x64xf32> to memref<64xf32, #tl.scope<shared>>
      tl.copy %a[%c0] [64] to %C[%k, %c0] [1, 64] : memref<64xf32, #tl.scope<shared>> to memref<8x64xf32>
      tl.atomic_add %A[%k, %c0], %one : memref<8x64xf32>, f32
    }
  }
  return
}
