// RUN: tl-opt %s --tl-gpu-lowering="wgmma=true low-word-descriptors=true" | FileCheck %s
// RUN: tl-opt %s --tl-gpu-lowering="wgmma=true" | FileCheck %s --check-prefix=OFF
// The `low-word-descriptors` option (lowerGemmWgmma): a wgmma descriptor is
// its gemm's start, made each iteration through an opaque 32-bit move in a
// loop, plus each step's constant added to the low word (i32), then joined
// with the constant high word. By default the start is a 64-bit value and
// the steps 64-bit adds. (The kernel is wgmma-in-flight.mlir's first.)

// CHECK-LABEL: gpu.func @gemm_loop
// CHECK: scf.for
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "mov.b32 $0, $1;", "=r,r" {{.*}} : (i32) -> i32
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "mov.b32 $0, $1;", "=r,r" {{.*}} : (i32) -> i32
// CHECK: %[[LOW:.*]] = arith.addi %{{.*}}, %{{.*}} : i32
// CHECK: %[[WIDE:.*]] = arith.extui %[[LOW]] : i32 to i64
// CHECK: arith.ori %[[WIDE]], %{{.*}} : i64
// CHECK: nvvm.wgmma.mma_async
// CHECK-NOT: "=l,l"
// OFF-LABEL: gpu.func @gemm_loop
// OFF: llvm.inline_asm has_side_effects asm_dialect = att "mov.b64 $0, $1;", "=l,l" {{.*}} : (i64) -> i64
// OFF-NOT: "=r,r"
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
