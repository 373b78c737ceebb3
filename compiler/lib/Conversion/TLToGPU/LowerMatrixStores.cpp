//===- LowerMatrixStores.cpp - KernelLowering: stmatrix for Mma fragments -===//
//
// An Mma fragment written to a 16-bit shared tile -- a copy (copyMmaPairs),
// or an unrolled parallel loop whose body stores at the loop's own (row,
// column), as P^T and dS^T in the backward -- otherwise goes one column pair
// per store: four stores per thread for each 16x16 block of the tile.
// stmatrix.x4 (sm_90) stores the block from the same registers in one:
// register i of lane l holds row l/4, columns 2(l%4) and 2(l%4)+1 of 8x8
// matrix i, which is the mma fragment's pair, and the matrices are the
// block's quarters (rows 8(i%2), columns 8(i/2)), so register i holds slots
// 4t+2i and 4t+2i+1 of the block's first 16x8 tile t and the next. Lane l
// names row l%8 of matrix l/8: block row l%16, column 8(l/16), through the
// tile's swizzle (which moves whole 16-byte row segments). Like ldmatrix and
// mma.sync it needs the whole warp: it takes only stores at the top level of
// the unrolled code (a store under a condition in the body stays a pair), and
// no DSL condition outside a loop depends on the thread. Behind the
// lowering's `stmatrix` option (GPUCompileOptions::stmatrix).
//
//===----------------------------------------------------------------------===//
#include "KernelLowering.h"

namespace tl::gpu_lowering {

bool KernelLowering::matrixStoreReady(Value tile) {
  auto type = cast<MemRefType>(tile.getType());
  // 16-byte aligned row segments: a wgmma operand tile's atoms keep 8
  // elements together; any other tile needs rows of a multiple of 8.
  return limits.stmatrix && isShared(tile) && !layouts.count(tile) && type.getRank() >= 2 &&
         type.getElementTypeBitWidth() == 16 &&
         (wgmmaAtoms.count(tile) || type.getDimSize(type.getRank() - 1) % 8 == 0);
}

std::pair<Value, Value> KernelLowering::matrixLane(Location loc, const FragmentLayout &layout,
                                                   int64_t tileRow, int64_t tileColumn) {
  auto &b = rewriter;
  auto times = [&](Value v, int64_t c) {
    return arith::MulIOp::create(b, loc, v, index(b, loc, c)).getResult();
  };
  auto [wm, wn] = warpGrid(loc, layout);
  Value row = arith::AddIOp::create(b, loc, times(wm, layout.warpRowStep()),
                                    arith::RemUIOp::create(b, loc, lane, index(b, loc, 16)));
  Value col =
      arith::AddIOp::create(b, loc, times(wn, layout.cols / layout.warpsN),
                            times(arith::DivUIOp::create(b, loc, lane, index(b, loc, 16)), 8));
  return {add(loc, row, tileRow * layout.tileRowStep()), add(loc, col, tileColumn * 8)};
}

void KernelLowering::storeMatrix(Location loc, Value address, ArrayRef<Value> pairs) {
  auto &b = rewriter;
  SmallVector<Value, 4> registers;
  for (Value pair : pairs) { // vector<2 x 16-bit>: the lower column in the low half
    Value word = vector::BitCastOp::create(b, loc, VectorType::get({1}, b.getI32Type()), pair);
    registers.push_back(vector::ExtractOp::create(b, loc, word, ArrayRef<int64_t>{0}));
  }
  Value pointer = LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), /*addressSpace=*/3), address);
  NVVM::StMatrixOp::create(b, loc, pointer, registers, NVVM::MMALayout::row,
                           NVVM::LdStMatrixShapeAttr::get(b.getContext(), 8, 8),
                           NVVM::LdStMatrixEltType::B16);
}

void KernelLowering::storeMatrices(MutableArrayRef<UnrolledStores> copies,
                                   const FragmentLayout &layout) {
  if (!limits.stmatrix || layout.kind != FragmentLayout::Kind::Mma)
    return;
  SmallVector<MatrixBlock> blocks = takeMatrixBlocks(
      copies, layout.tilesM(), layout.tilesN(), [&](Value tile) { return matrixStoreReady(tile); });
  OpBuilder::InsertionGuard guard(rewriter);
  for (MatrixBlock &block : blocks) {
    rewriter.setInsertionPoint(block.last);
    Location loc = block.last.getLoc();
    auto [row, col] = matrixLane(loc, layout, block.tileRow, block.tileColumn);
    auto pairType = VectorType::get({2}, block.stores[0].getValue().getType());
    SmallVector<Value, 4> pairs;
    for (int64_t i = 0; i < 4; ++i)
      pairs.push_back(vector::FromElementsOp::create(
          rewriter, loc, pairType,
          ValueRange{block.stores[2 * i].getValue(), block.stores[2 * i + 1].getValue()}));
    storeMatrix(loc, sharedAddress(loc, block.tile, row, col), pairs);
    for (memref::StoreOp store : block.stores)
      rewriter.eraseOp(store);
  }
}

} // namespace tl::gpu_lowering
