// A causal-style loop for narrow-loop-indices.mlir's tlc RUN: key blocks
// up to two past the block's own, a mask comparing row and column indices.
func.func @masked_loop(%C: memref<640x64xf32> {tl.output}) {
  tl.kernel grid [8] threads 64 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c64 = arith.constant 64 : index
    %one = arith.constant 1.0 : f32
    %zero = arith.constant 0.0 : f32
    %end = arith.addi %bx, %c2 : index
    scf.for %k = %c0 to %end step %c1 {
      tl.parallel [64] {
      ^bb0(%i: index):
        %rowBase = arith.muli %bx, %c64 : index
        %row = arith.addi %rowBase, %i : index
        %colBase = arith.muli %k, %c64 : index
        %col = arith.addi %colBase, %c2 : index
        %keep = arith.cmpi ule, %row, %col : index
        %v = arith.select %keep, %one, %zero : f32
        %r = arith.addi %colBase, %i : index
        memref.store %v, %C[%r, %i] : memref<640x64xf32>
      }
    }
  }
  return
}
