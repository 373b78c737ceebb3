// RUN: tl-opt %s --tl-plan-shared-memory -split-input-file | FileCheck %s
// tl-plan-shared-memory: byte offsets of shared tiles, reused where their
// lives do not overlap.

// Lives (top-level ops of the body): %c from its fill to its copy out, all
// the way; %a, %b and %d one after another. Placed largest first: %d (3
// rotating copies from tl-plan-pipelines: 24 KiB) at 0; %a and %b live when
// %d does not, so at 0 too; %c lives with all of them and goes past %d.
// CHECK-LABEL: func.func @reuse
// CHECK: tl.alloc_shared {tl.offset = 0 : i64} : memref<64x64xf16
// CHECK: tl.alloc_shared {tl.offset = 0 : i64} : memref<32x64xf16
// CHECK: tl.alloc_shared {tl.offset = 24576 : i64} : memref<100xf32
// CHECK: tl.alloc_shared {tl.offset = 0 : i64, tl.rotating_copies = 3 : i64} : memref<64x64xf16
func.func @reuse(%X: memref<64x64xf16>, %Y: memref<64x64xf16> {tl.output}, %Z: memref<100xf32> {tl.output}) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %one = arith.constant 1.0 : f32
    %half = arith.constant 1.0 : f16
    %a = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    %b = tl.alloc_shared : memref<32x64xf16, #tl.scope<shared>>
    %c = tl.alloc_shared : memref<100xf32, #tl.scope<shared>>
    %d = tl.alloc_shared {tl.rotating_copies = 3 : i64} : memref<64x64xf16, #tl.scope<shared>>
    tl.fill %c, %one : memref<100xf32, #tl.scope<shared>>, f32
    tl.copy %X[%c0, %c0] [64, 64] to %a[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #tl.scope<shared>>
    tl.copy %a[%c0, %c0] [64, 64] to %Y[%c0, %c0] [64, 64] : memref<64x64xf16, #tl.scope<shared>> to memref<64x64xf16>
    tl.copy %X[%c0, %c0] [32, 64] to %b[%c0, %c0] [32, 64] : memref<64x64xf16> to memref<32x64xf16, #tl.scope<shared>>
    tl.copy %b[%c0, %c0] [32, 64] to %Y[%c0, %c0] [32, 64] : memref<32x64xf16, #tl.scope<shared>> to memref<64x64xf16>
    tl.fill %d, %half : memref<64x64xf16, #tl.scope<shared>>, f16
    tl.copy %d[%c0, %c0] [64, 64] to %Y[%c0, %c0] [64, 64] : memref<64x64xf16, #tl.scope<shared>> to memref<64x64xf16>
    tl.copy %c[%c0] [100] to %Z[%c0] [100] : memref<100xf32, #tl.scope<shared>> to memref<100xf32>
  }
  return
}
