// The first kernel of mma-tile-adds.mlir, alone (tlc takes one kernel a file).
func.func @tile_adds(%A: memref<128x32xf16>, %W: memref<32x64xf16>, %Acc: memref<2x256x3x64xf32>) {
  tl.kernel grid [2, 2] threads 128 {
  ^bb0(%bx: index, %by: index):
    %c0 = arith.constant 0 : index
    %c128 = arith.constant 128 : index
    tl.annotate_layout %Acc layout(#tl.index_map<(d0, d1, d2, d3) -> (d0, d1 floordiv 16, d2, d3 floordiv 8, (d1 mod 8) * 16 + ((d3 mod 8) floordiv 2) * 4 + ((d1 mod 16) floordiv 8) * 2 + d3 mod 2), [2, 16, 3, 8, 128]>) : memref<2x256x3x64xf32>
    %a = tl.alloc_shared : memref<128x32xf16, #tl.scope<shared>>
    %w = tl.alloc_shared : memref<32x64xf16, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<128x64xf32, #tl.scope<fragment>>
    tl.copy %A[%c0, %c0] [128, 32] to %a[%c0, %c0] [128, 32] : memref<128x32xf16> to memref<128x32xf16, #tl.scope<shared>>
    tl.copy %W[%c0, %c0] [32, 64] to %w[%c0, %c0] [32, 64] : memref<32x64xf16> to memref<32x64xf16, #tl.scope<shared>>
    tl.gemm %a, %w, %c {clear_accum} : memref<128x32xf16, #tl.scope<shared>>, memref<32x64xf16, #tl.scope<shared>>, memref<128x64xf32, #tl.scope<fragment>>
    %row = arith.muli %by, %c128 : index
    tl.atomic_add_tile %c[%c0, %c0] [128, 64] to %Acc[%bx, %row, %c0, %c0] [1, 128, 1, 64] : memref<128x64xf32, #tl.scope<fragment>> to memref<2x256x3x64xf32>
  }
  return
}

