// RUN: tl-opt %s --tl-gpu-lowering=wgmma=true -split-input-file | FileCheck %s
// RUN: tl-opt %s --tl-gpu-lowering="target=sm_80" -split-input-file | FileCheck %s --check-prefix=SM80
// RUN: tlc %S/Inputs/mma-tile-adds-ptx.mlir --target=sm_90a --emit=ptx -o - | FileCheck %s --check-prefix=PTX
// RUN: tlc %S/Inputs/mma-tile-adds-ptx.mlir --target=sm_80 --emit=ptx -o - | FileCheck %s --check-prefix=PTX80
// A gemm accumulator added into a tensor laid out in accumulator tile order
// (the eDSL's make_mma_tile_layout(4, 1, 3)): on sm_90 and sm_90a each
// thread adds each of its 16x8 tiles with one red.global.add.v4.f32 (64 x 64
// over 128 threads: 8 tiles a thread), at the address of the tile's first
// element, inside the tensor or not at all. sm_80 has no vector reductions:
// an atomic add per element, through the same layout.
// CHECK-LABEL: gpu.func @tile_adds
// CHECK-COUNT-8: llvm.inline_asm has_side_effects asm_dialect = att "red.global.add.v4.f32 [$0], {$1, $2, $3, $4};", "l,f,f,f,f,~{memory}"
// CHECK-NOT: memref.atomic_rmw
// CHECK: gpu.return
// SM80-LABEL: gpu.func @tile_adds
// SM80-NOT: red.global.add.v4
// SM80-COUNT-32: memref.atomic_rmw addf
// SM80-NOT: red.global.add.v4
// SM80: gpu.return
// PTX: .version 8.1
// PTX-COUNT-8: red.global.add.v4.f32
// PTX-NOT: atom.global
// PTX80: .version 8.0
// PTX80-NOT: .v4.f32
// PTX80: atom.global.add.f32
func.func @tile_adds(%A: memref<64x32xf16>, %W: memref<32x64xf16>, %Acc: memref<2x128x3x64xf32>) {
  tl.kernel grid [2, 2] threads 128 {
  ^bb0(%bx: index, %by: index):
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    tl.annotate_layout %Acc layout(#tl.index_map<(d0, d1, d2, d3) -> (d0, d1 floordiv 16, d2, d3 floordiv 8, (d1 mod 8) * 16 + ((d3 mod 8) floordiv 2) * 4 + ((d1 mod 16) floordiv 8) * 2 + d3 mod 2), [2, 8, 3, 8, 128]>) : memref<2x128x3x64xf32>
    %a = tl.alloc_shared : memref<64x32xf16, #tl.scope<shared>>
    %w = tl.alloc_shared : memref<32x64xf16, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    tl.copy %A[%c0, %c0] [64, 32] to %a[%c0, %c0] [64, 32] : memref<64x32xf16> to memref<64x32xf16, #tl.scope<shared>>
    tl.copy %W[%c0, %c0] [32, 64] to %w[%c0, %c0] [32, 64] : memref<32x64xf16> to memref<32x64xf16, #tl.scope<shared>>
    tl.gemm %a, %w, %c {clear_accum} : memref<64x32xf16, #tl.scope<shared>>, memref<32x64xf16, #tl.scope<shared>>, memref<64x64xf32, #tl.scope<fragment>>
    %row = arith.muli %by, %c64 : index
    tl.atomic_add_tile %c[%c0, %c0] [64, 64] to %Acc[%bx, %row, %c0, %c0] [1, 64, 1, 64] : memref<64x64xf32, #tl.scope<fragment>> to memref<2x128x3x64xf32>
  }
  return
}

// -----

// A region whose rows may start inside a 16-row tile (an offset of 8 rows a
// block), or a tensor in another order, keeps the element adds.
// CHECK-LABEL: gpu.func @not_tile_aligned
// CHECK-NOT: red.global.add.v4
// CHECK: memref.atomic_rmw addf
// CHECK-LABEL: gpu.func @other_order
// CHECK-NOT: red.global.add.v4
// CHECK: memref.atomic_rmw addf
func.func @not_tile_aligned(%A: memref<64x32xf16>, %W: memref<32x64xf16>, %Acc: memref<2x128x3x64xf32>) {
  tl.kernel grid [2, 2] threads 128 {
  ^bb0(%bx: index, %by: index):
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    tl.annotate_layout %Acc layout(#tl.index_map<(d0, d1, d2, d3) -> (d0, d1 floordiv 16, d2, d3 floordiv 8, (d1 mod 8) * 16 + ((d3 mod 8) floordiv 2) * 4 + ((d1 mod 16) floordiv 8) * 2 + d3 mod 2), [2, 8, 3, 8, 128]>) : memref<2x128x3x64xf32>
    %a = tl.alloc_shared : memref<64x32xf16, #tl.scope<shared>>
    %w = tl.alloc_shared : memref<32x64xf16, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    tl.copy %A[%c0, %c0] [64, 32] to %a[%c0, %c0] [64, 32] : memref<64x32xf16> to memref<64x32xf16, #tl.scope<shared>>
    tl.copy %W[%c0, %c0] [32, 64] to %w[%c0, %c0] [32, 64] : memref<32x64xf16> to memref<32x64xf16, #tl.scope<shared>>
    tl.gemm %a, %w, %c {clear_accum} : memref<64x32xf16, #tl.scope<shared>>, memref<32x64xf16, #tl.scope<shared>>, memref<64x64xf32, #tl.scope<fragment>>
    %row = arith.muli %by, %c8 : index
    tl.atomic_add_tile %c[%c0, %c0] [64, 64] to %Acc[%bx, %row, %c0, %c0] [1, 64, 1, 64] : memref<64x64xf32, #tl.scope<fragment>> to memref<2x128x3x64xf32>
  }
  return
}
func.func @other_order(%A: memref<64x32xf16>, %W: memref<32x64xf16>, %Acc: memref<2x128x3x64xf32>) {
  tl.kernel grid [2, 2] threads 128 {
  ^bb0(%bx: index, %by: index):
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    tl.annotate_layout %Acc layout(#tl.index_map<(d0, d1, d2, d3) -> (d0, d1 floordiv 8, d2, d3 floordiv 8, d3 mod 2, (d1 mod 8) * 4 + (d3 mod 8) floordiv 2), [2, 16, 3, 8, 2, 32]>) : memref<2x128x3x64xf32>
    %a = tl.alloc_shared : memref<64x32xf16, #tl.scope<shared>>
    %w = tl.alloc_shared : memref<32x64xf16, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    tl.copy %A[%c0, %c0] [64, 32] to %a[%c0, %c0] [64, 32] : memref<64x32xf16> to memref<64x32xf16, #tl.scope<shared>>
    tl.copy %W[%c0, %c0] [32, 64] to %w[%c0, %c0] [32, 64] : memref<32x64xf16> to memref<32x64xf16, #tl.scope<shared>>
    tl.gemm %a, %w, %c {clear_accum} : memref<64x32xf16, #tl.scope<shared>>, memref<32x64xf16, #tl.scope<shared>>, memref<64x64xf32, #tl.scope<fragment>>
    %row = arith.muli %by, %c64 : index
    tl.atomic_add_tile %c[%c0, %c0] [64, 64] to %Acc[%bx, %row, %c0, %c0] [1, 64, 1, 64] : memref<64x64xf32, #tl.scope<fragment>> to memref<2x128x3x64xf32>
  }
  return
}
