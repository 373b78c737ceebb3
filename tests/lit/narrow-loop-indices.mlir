// RUN: tl-opt %s --pass-pipeline='builtin.module(gpu.module(tl-narrow-loop-indices))' | FileCheck %s
// Outermost scf.for loops whose bounds integer range analysis proves to fit
// 32 bits (a step past the upper bound included) count in i32; the body reads
// the index as the counter's unsigned cast. Loops it cannot bound, and loops
// nested in another, keep their index counter.

gpu.module @narrow {
  // CHECK-LABEL: gpu.func @bounded_by_block_index
  // CHECK: %[[UB:.*]] = arith.addi
  // CHECK: %[[LB32:.*]] = arith.index_castui %{{.*}} : index to i32
  // CHECK: %[[UB32:.*]] = arith.index_castui %[[UB]] : index to i32
  // CHECK: %[[STEP32:.*]] = arith.index_castui %{{.*}} : index to i32
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

  // A bound the analysis cannot see (a dynamic size), or one within a step of
  // 2^31 - 1: the loop stays as it is.
  // CHECK-LABEL: gpu.func @unbounded
  // CHECK-NOT: index_castui
  // CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
  // CHECK-NOT: index_castui
  // CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
  // CHECK-NOT: index_castui
  // CHECK: gpu.return
  gpu.func @unbounded(%a: memref<?xf32>) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %big = arith.constant 2147483646 : index
    %n = memref.dim %a, %c0 : memref<?xf32>
    %one = arith.constant 1.0 : f32
    scf.for %k = %c0 to %n step %c1 {
      memref.store %one, %a[%k] : memref<?xf32>
    }
    scf.for %k = %c0 to %big step %c2 {
      memref.store %one, %a[%k] : memref<?xf32>
    }
    gpu.return
  }
}
