func.func @bad(%X: memref<128x64xf16>, %Y: memref<128x64xf32> {tl.output}) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %s = tl.alloc_shared : memref<64x32xf16, #tl.scope<shared>>
    tl.copy %X[%c0, %c0] [64, 64] to %s[%c0, %c0] [64, 64] : memref<128x64xf16> to memref<64x32xf16, #tl.scope<shared>>
  }
  return
}
