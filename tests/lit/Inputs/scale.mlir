// A tl program as dialect text: Y = 2 X through shared memory and a fragment.
func.func @scale(%X: memref<128x64xf16> {tl.name = "X"},
                 %Y: memref<128x64xf32> {tl.name = "Y", tl.output}) {
  tl.kernel grid [2] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %two = arith.constant 2.0 : f32
    %row = arith.muli %bx, %c64 : index
    %s = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    %f = tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    tl.copy %X[%row, %c0] [64, 64] to %s[%c0, %c0] [64, 64] : memref<128x64xf16> to memref<64x64xf16, #tl.scope<shared>>
    tl.copy %s[%c0, %c0] [64, 64] to %f[%c0, %c0] [64, 64] : memref<64x64xf16, #tl.scope<shared>> to memref<64x64xf32, #tl.scope<fragment>>
    tl.parallel [64, 64] {
    ^bb0(%i: index, %j: index):
      %v = memref.load %f[%i, %j] : memref<64x64xf32, #tl.scope<fragment>>
      %w = arith.mulf %v, %two : f32
      memref.store %w, %f[%i, %j] : memref<64x64xf32, #tl.scope<fragment>>
    }
    tl.copy %f[%c0, %c0] [64, 64] to %Y[%row, %c0] [64, 64] : memref<64x64xf32, #tl.scope<fragment>> to memref<128x64xf32>
  }
  return
}
