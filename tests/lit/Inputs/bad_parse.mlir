func.func @broken(%X: memref<128x64xf16>) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    tl.frobnicate %X : memref<128x64xf16>
  }
  return
}
