// RUN: tl-opt %s --tl-infer-layouts --convert-tl-to-gpu | FileCheck %s
// use_swizzle (tl.swizzle_panel on the kernel): the block indices the body
// sees are the launch position p = y * gx + x walked down panels of 4 block
// rows: y' = f + (p % (4 * gx)) % r and x' = (p % (4 * gx)) / r, with f the
// panel's first row and r its rows: 4, or 10 % 4 = 2 in the last panel
// (rows 8 and 9). Every divisor is a constant (the ops stay pure).
// CHECK-LABEL: gpu.func @swizzled
// CHECK-DAG: %[[X:.*]] = gpu.block_id x
// CHECK-DAG: %[[Y:.*]] = gpu.block_id y
// CHECK-DAG: %[[C5:.*]] = arith.constant 5 : index
// CHECK: %[[ROW:.*]] = arith.muli %[[Y]], %[[C5]]
// CHECK: %[[P:.*]] = arith.addi %[[ROW]], %[[X]]
// CHECK: %[[C20:.*]] = arith.constant 20 : index
// CHECK: %[[PANEL:.*]] = arith.divui %[[P]], %[[C20]]
// CHECK: %[[FIRST:.*]] = arith.muli %[[PANEL]]
// CHECK: %[[WITHIN:.*]] = arith.remui %[[P]], %[[C20]]
// CHECK: %[[R4:.*]] = arith.remui %[[WITHIN]]
// CHECK: %[[D4:.*]] = arith.divui %[[WITHIN]]
// CHECK: %[[C8:.*]] = arith.constant 8 : index
// CHECK: %[[FULL:.*]] = arith.cmpi ult, %[[FIRST]], %[[C8]]
// CHECK: %[[C2:.*]] = arith.constant 2 : index
// CHECK: %[[R2:.*]] = arith.remui %[[WITHIN]], %[[C2]]
// CHECK: %[[YR:.*]] = arith.select %[[FULL]], %[[R4]], %[[R2]]
// CHECK: %[[D2:.*]] = arith.divui %[[WITHIN]], %[[C2]]
// CHECK: %[[XS:.*]] = arith.select %[[FULL]], %[[D4]], %[[D2]]
// CHECK: arith.addi %[[FIRST]], %[[YR]]
func.func @swizzled(%A: memref<640x320xf32>, %B: memref<640x320xf32> {tl.output}) {
  tl.kernel grid [5, 10] threads 128 attributes {tl.swizzle_panel = 4 : i64} {
  ^bb0(%bx: index, %by: index):
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %row = arith.muli %by, %c64 : index
    %col = arith.muli %bx, %c64 : index
    %f = tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    tl.copy %A[%row, %col] [64, 64] to %f[%c0, %c0] [64, 64] : memref<640x320xf32> to memref<64x64xf32, #tl.scope<fragment>>
    tl.copy %f[%c0, %c0] [64, 64] to %B[%row, %col] [64, 64] : memref<64x64xf32, #tl.scope<fragment>> to memref<640x320xf32>
  }
  return
}
