func.func @k(%A: memref<64x64xf32>, %B: memref<64x64xf32> {tl.output}) {
  tl.kernel grid [1] threads 32 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    tl.annotate_layout %A layout(#tl.index_map<(d0, d1) -> (d0 floordiv 0, d1), [64, 64]>) : memref<64x64xf32>
    tl.copy %A[%c0, %c0] [64, 64] to %B[%c0, %c0] [64, 64] : memref<64x64xf32> to memref<64x64xf32>
  }
  return
}
