func.func @k(%A: memref<64xf32>, %B: memref<64xf32> {tl.output}) {
  tl.kernel grid [1] threads 32 {
  ^bb0(%bx: index):
    tl.kernel grid [1] threads 32 {
    ^bb0(%by: index):
      %c0 = arith.constant 0 : index
      tl.copy %A[%c0] [64] to %B[%c0] [64] : memref<64xf32> to memref<64xf32>
    }
  }
  return
}
