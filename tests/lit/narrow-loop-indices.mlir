// RUN: tl-opt %s --pass-pipeline='builtin.module(gpu.module(tl-narrow-loop-indices))' | FileCheck %s
// RUN: tlc %S/Inputs/narrow-loop-kernel.mlir --emit=llvm --target=sm_90a -o - | FileCheck %s --check-prefix=LLVM
// Outermost scf.for loops whose bounds integer range analysis proves to fit
// 32 bits (the counter one step past its last value included, everything
// non-negative) count in i32; the body reads the index as the counter's
// unsigned cast. Loops it cannot bound, and loops nested in another, keep
// their index counter.

// Through the whole pipeline (tlc): the thread and block indices reach LLVM
// with their ranges (the block size, the grid), and a loop whose bounds
// derive from the block index counts in i32, its mask compare in 32 bits.
// (Without tl-narrow-loop-indices the counter is an i64 phi.)
// LLVM: call range(i32 0, 64) i32 @llvm.nvvm.read.ptx.sreg.tid.x()
// LLVM: call range(i32 0, 8) i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
// LLVM-NOT: phi i64
// LLVM: phi i32
// LLVM-NOT: phi i64
// LLVM: icmp {{.*}}ugt i32
// LLVM-NOT: phi i64
// LLVM: ret void

gpu.module @narrow {
  // CHECK-LABEL: gpu.func @bounded_by_block_index
  // CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
  // CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
  // CHECK: %[[UB:.*]] = arith.addi
  // CHECK: %[[LB32:.*]] = arith.index_castui %[[C0]] : index to i32
  // CHECK: %[[UB32:.*]] = arith.index_castui %[[UB]] : index to i32
  // CHECK: %[[STEP32:.*]] = arith.index_castui %[[C1]] : index to i32
  // CHECK: scf.for %[[K:.*]] = %[[LB32]] to %[[UB32]] step %[[STEP32]] iter_args(%[[ACC:.*]] = %{{.*}}) -> (f32) : i32 {
  // CHECK-NEXT: %[[KI:.*]] = arith.index_castui %[[K]] : i32 to index
  // CHECK-NEXT: memref.load %{{.*}}[%[[KI]]]
  // The inner loop, nested, keeps its index counter.
  // CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args
  // CHECK-NOT: : i32
  // CHECK: scf.yield
  gpu.func @bounded_by_block_index(%a: memref<?xf32>, %out: memref<1xf32>) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c16 = arith.constant 16 : index
    %zero = arith.constant 0.0 : f32
    %bid = gpu.block_id x upper_bound 64
    %ub = arith.addi %bid, %c16 : index
    %sum = scf.for %k = %c0 to %ub step %c1 iter_args(%acc = %zero) -> (f32) {
      %x = memref.load %a[%k] : memref<?xf32>
      %inner = scf.for %j = %c0 to %c4 step %c1 iter_args(%acc2 = %acc) -> (f32) {
        %y = arith.addf %acc2, %x : f32
        scf.yield %y : f32
      }
      scf.yield %inner : f32
    }
    memref.store %sum, %out[%c0] : memref<1xf32>
    gpu.return
  }

  // The edge: counting up to 2^31 - 2 by 2, the exit test's last counter is
  // 2^31 - 1, which fits. The loop keeps its unsigned compare and its
  // attributes. A loop under an scf.if (no loop around it) is narrowed too.
  // CHECK-LABEL: gpu.func @edge_and_attributes
  // CHECK: scf.for unsigned %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} : i32 {
  // CHECK: } {my.note}
  // CHECK: scf.if
  // CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} : i32 {
  gpu.func @edge_and_attributes(%a: memref<?xf32>, %flag: i1) kernel {
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %c8 = arith.constant 8 : index
    %edge = arith.constant 2147483646 : index
    %one = arith.constant 1.0 : f32
    scf.for unsigned %k = %c0 to %edge step %c2 {
      memref.store %one, %a[%k] : memref<?xf32>
    } {my.note}
    scf.if %flag {
      scf.for %k = %c0 to %c8 step %c2 {
        memref.store %one, %a[%k] : memref<?xf32>
      }
    }
    gpu.return
  }

  // Left as they are: a bound the analysis cannot see (a dynamic size); an
  // exit test that would compute 2^31 (up to 2^31 - 1 by 2); a negative
  // lower bound; a step that may be 0.
  // CHECK-LABEL: gpu.func @unbounded
  // CHECK-NOT: index_castui
  // CHECK-COUNT-4: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
  // CHECK-NOT: index_castui
  // CHECK: gpu.return
  gpu.func @unbounded(%a: memref<?xf32>) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c8 = arith.constant 8 : index
    %minus1 = arith.constant -1 : index
    %big = arith.constant 2147483647 : index
    %n = memref.dim %a, %c0 : memref<?xf32>
    %one = arith.constant 1.0 : f32
    scf.for %k = %c0 to %n step %c1 {
      memref.store %one, %a[%k] : memref<?xf32>
    }
    scf.for %k = %c0 to %big step %c2 {
      memref.store %one, %a[%k] : memref<?xf32>
    }
    scf.for %k = %minus1 to %c8 step %c1 {
      memref.store %one, %a[%c0] : memref<?xf32>
    }
    %tid = gpu.thread_id x upper_bound 4
    scf.for %k = %c0 to %c8 step %tid {
      memref.store %one, %a[%k] : memref<?xf32>
    }
    gpu.return
  }
}
