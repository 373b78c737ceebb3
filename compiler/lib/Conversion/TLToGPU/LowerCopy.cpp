//===- LowerCopy.cpp - KernelLowering: fills and copies -------------------===//
//
// tl.fill and tl.copy: between fragments and memory (by the fragment's
// layout: 16-byte row segments, Mma column pairs, or element by element),
// and between memories (16-byte pieces where aligned, entry copies as
// cp.async). tl.atomic_add_tile where it does not go by TMA: element by
// element, as the copies that have no faster way.
//
//===----------------------------------------------------------------------===//
#include "KernelLowering.h"

namespace tl::gpu_lowering {
namespace {

/// The dimensions of a region whose extent is not 1, in order.
SmallVector<unsigned> spannedDims(ArrayRef<int64_t> sizes) {
  SmallVector<unsigned> spanned;
  for (auto [d, size] : llvm::enumerate(sizes))
    if (size != 1)
      spanned.push_back(d);
  return spanned;
}

} // namespace

LogicalResult KernelLowering::lowerFill(FillOp op) {
  Location loc = op.getLoc();
  Value buffer = op.getBuffer(), value = op.getValue();
  if (isFragment(buffer)) {
    const Fragment &fragment = fragments.find(buffer)->second;
    auto type = cast<MemRefType>(fragment.storage.getType());
    if (fragment.layout.kind == FragmentLayout::Kind::Row) {
      buildLoops(rewriter, loc, type.getShape(), [&](OpBuilder &b, Location loc, ValueRange ivs) {
        memref::StoreOp::create(b, loc, value, fragment.storage, ivs);
      });
    } else {
      // One store per slot: constant indices keep Mma storage in registers
      // (a loop LLVM only partly unrolls would leave it in local memory).
      // A wgmma accumulator's slots each take the value through an opaque
      // move, here: were they constants, LLVM would materialise them where
      // the first wgmma reads them, after its wgmma.fence (when it unrolls
      // a short loop), and ptxas would serialise the wgmma (C7519).
      bool opaque = fragment.layout.warpgroup && type.getElementType().isF32();
      for (int64_t slot = 0; slot < type.getNumElements(); ++slot) {
        Value slotValue = value;
        if (opaque)
          slotValue = opaqueMove(loc, value);
        memref::StoreOp::create(rewriter, loc, slotValue, fragment.storage,
                                ValueRange{index(rewriter, loc, slot)});
      }
    }
  } else if (isShared(buffer)) {
    barrier(loc);
    forSpread(loc, cast<MemRefType>(buffer.getType()).getShape(),
              [&](OpBuilder &b, Location loc, ValueRange ivs) {
                memref::StoreOp::create(b, loc, value, buffer, ivs);
              });
    barrier(loc);
  } else {
    buildLoops(rewriter, loc, cast<MemRefType>(buffer.getType()).getShape(),
               [&](OpBuilder &b, Location loc, ValueRange ivs) {
                 memref::StoreOp::create(b, loc, value, buffer, ivs);
               });
  }
  rewriter.eraseOp(op);
  return success();
}

int64_t KernelLowering::rowVectorWidth(CopyOp op, Value fragment) {
  const FragmentLayout &layout = fragments.find(fragment)->second.layout;
  if (layout.kind != FragmentLayout::Kind::Row || layout.split == 1 || layout.cols == 0 ||
      isFragment(op.getSrc()) == isFragment(op.getDst()))
    return 0;
  int64_t width = vectorWidth(op);
  return width && layout.colsPerThread() % width == 0 ? width : 0;
}

void KernelLowering::copyRowVectors(CopyOp op, Value fragment, int64_t width) {
  Location loc = op.getLoc();
  Value src = op.getSrc(), dst = op.getDst();
  Value memory = fragment == src ? dst : src;
  const Fragment &f = fragments.find(fragment)->second;
  auto vectorType = VectorType::get({width}, cast<MemRefType>(src.getType()).getElementType());
  Value colStart = rowSegmentStart(rewriter, loc, f.layout);
  forOwnedRows(
      loc, f.layout.rows,
      [&](OpBuilder &b, Location loc, Value r, Value row) {
        for (int64_t v = 0; v < f.layout.colsPerThread() / width; ++v) {
          Value col = arith::AddIOp::create(b, loc, colStart, index(b, loc, v * width));
          bool toMemory = memory == dst;
          SmallVector<Value> at =
              regionIndices(b, loc, toMemory ? op.getDstOffsets() : op.getSrcOffsets(),
                            toMemory ? op.getDstSizes() : op.getSrcSizes(), ValueRange{row, col});
          auto slot = [&](int64_t e) {
            return SmallVector<Value>{r, index(b, loc, v * width + e)};
          };
          if (toMemory) {
            SmallVector<Value> elements;
            for (int64_t e = 0; e < width; ++e)
              elements.push_back(memref::LoadOp::create(b, loc, f.storage, slot(e)));
            Value vector = vector::FromElementsOp::create(b, loc, vectorType, elements);
            storeVector(b, loc, vector, memory, at, llvm::MaybeAlign(16));
            continue;
          }
          Value vector = loadVector(b, loc, vectorType, memory, at, llvm::MaybeAlign(16));
          for (int64_t e = 0; e < width; ++e)
            memref::StoreOp::create(b, loc,
                                    vector::ExtractOp::create(b, loc, vector, ArrayRef<int64_t>{e}),
                                    f.storage, slot(e));
        }
      },
      f.layout.split);
}

bool KernelLowering::mmaPairs(CopyOp op, Value fragment) {
  Value dst = op.getDst();
  if (fragment != op.getSrc() || isFragment(dst) || isLocal(dst) || layouts.count(dst) ||
      fragments.find(fragment)->second.layout.kind != FragmentLayout::Kind::Mma)
    return false;
  auto type = cast<MemRefType>(dst.getType());
  auto fragmentType = cast<MemRefType>(fragment.getType());
  return fragmentType.getRank() == 2 && op.getDstSizes().back() == fragmentType.getDimSize(1) &&
         type.getDimSize(type.getRank() - 1) % 2 == 0 &&
         knownDivisor(op.getDstOffsets().back()) % 2 == 0;
}

void KernelLowering::copyMmaPairs(CopyOp op, Value fragment) {
  Location loc = op.getLoc();
  Value dst = op.getDst();
  const Fragment &f = fragments.find(fragment)->second;
  Type element = cast<MemRefType>(dst.getType()).getElementType();
  auto alignment =
      llvm::MaybeAlign(2 * cast<MemRefType>(dst.getType()).getElementTypeBitWidth() / 8);
  bool crossed = pairsConflict(dst);
  Type slotType = cast<MemRefType>(f.storage.getType()).getElementType();
  std::optional<CrossedPairBases> bases;
  if (crossed && producerReduce && dst == producerReduce->tile)
    bases = crossedPairBases(loc, op, f.layout);
  if (bases) {
    Value isOdd = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::ne,
        arith::AndIOp::create(rewriter, loc, lane, index(rewriter, loc, 4)),
        index(rewriter, loc, 0)); // the row's parity: quad (lane / 4) & 1
    // A shared pointer a base, and a constant element offset from it a store
    // (a GEP LLVM folds into the store's address).
    auto sharedPtr = LLVM::LLVMPointerType::get(rewriter.getContext(), 3);
    auto pointer = [&](Value elementBase) {
      return LLVM::IntToPtrOp::create(rewriter, loc, sharedPtr,
                                      sharedElementAddress(loc, dst, elementBase))
          .getResult();
    };
    SmallVector<Value, 4> firstPointers, secondPointers;
    for (int64_t j = 0; j < 4; ++j) {
      firstPointers.push_back(pointer(bases->first[j]));
      secondPointers.push_back(pointer(bases->second[j]));
    }
    auto store = [&](Value value, Value base, int64_t constant) {
      Value at = LLVM::GEPOp::create(rewriter, loc, sharedPtr, rewriter.getF32Type(), base,
                                     ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(constant)});
      LLVM::StoreOp::create(rewriter, loc, value, at, /*alignment=*/4);
    };
    for (int64_t slot = 0; slot < f.layout.count(); slot += 2) {
      auto [row, col] = mmaSlotOffset(f.layout, slot);
      int64_t j = (col % 32) / 8, constant = row * 32 + (col / 32) * bases->tileRows * 32;
      Value slots = vector::LoadOp::create(rewriter, loc, VectorType::get({2}, slotType),
                                           f.storage, ValueRange{index(rewriter, loc, slot)});
      Value pair = convertFloat(rewriter, loc, slots, element);
      Value first = vector::ExtractOp::create(rewriter, loc, pair, ArrayRef<int64_t>{0});
      Value second = vector::ExtractOp::create(rewriter, loc, pair, ArrayRef<int64_t>{1});
      // As storeCrossedPair: the odd rows' second element first.
      store(arith::SelectOp::create(rewriter, loc, isOdd, second, first), firstPointers[j],
            constant);
      store(arith::SelectOp::create(rewriter, loc, isOdd, first, second), secondPointers[j],
            constant);
    }
    return;
  }
  // Pairs of 16x8 tiles by stmatrix where it can (LowerMatrixStores.cpp).
  int64_t tilesN = f.layout.tilesN();
  int64_t matrixTiles =
      matrixStoreReady(dst) && !crossed && knownDivisor(op.getDstOffsets().back()) % 8 == 0
          ? tilesN - tilesN % 2
          : 0;
  for (int64_t tileRow = 0; tileRow < f.layout.tilesM(); ++tileRow) {
    for (int64_t tileColumn = 0; tileColumn < matrixTiles; tileColumn += 2) {
      auto [row, col] = matrixLane(loc, f.layout, tileRow, tileColumn);
      SmallVector<Value> at =
          regionIndices(rewriter, loc, op.getDstOffsets(), op.getDstSizes(), ValueRange{row, col});
      // Each pair loaded and converted as one vector (one cvt.rn.f16x2.f32
      // from f32), as the pair stores below.
      SmallVector<Value, 4> pairs;
      for (int64_t slot = (tileRow * tilesN + tileColumn) * 4, end = slot + 8; slot < end;
           slot += 2)
        pairs.push_back(
            convertFloat(rewriter, loc,
                         vector::LoadOp::create(rewriter, loc, VectorType::get({2}, slotType),
                                                f.storage, ValueRange{index(rewriter, loc, slot)}),
                         element));
      storeMatrix(loc, sharedAddress(loc, dst, at), pairs);
    }
  }
  auto [rowBase, colBase] = mmaBases(loc, f.layout);
  for (int64_t slot = 0; slot < f.layout.count(); slot += 2) {
    if ((slot / 4) % tilesN < matrixTiles)
      continue;
    auto [row, col] = mmaSlotOffset(f.layout, slot);
    SmallVector<Value> at =
        regionIndices(rewriter, loc, op.getDstOffsets(), op.getDstSizes(),
                      ValueRange{add(loc, rowBase, row), add(loc, colBase, col)});
    Value slots = vector::LoadOp::create(rewriter, loc, VectorType::get({2}, slotType), f.storage,
                                         ValueRange{index(rewriter, loc, slot)});
    Value pair = convertFloat(rewriter, loc, slots, element);
    if (crossed)
      storeCrossedPair(loc, pair, dst, at);
    else
      storeVector(rewriter, loc, pair, dst, at, alignment);
  }
}

bool KernelLowering::pairsConflict(Value tile) {
  return isShared(tile) && cast<MemRefType>(tile.getType()).getElementTypeBitWidth() == 32 &&
         wgmmaAtoms.lookup(tile) == 128;
}

void KernelLowering::storeCrossedPair(Location loc, Value pair, Value tile, ArrayRef<Value> at) {
  auto element = [&](int64_t e) {
    return vector::ExtractOp::create(rewriter, loc, pair, ArrayRef<int64_t>{e}).getResult();
  };
  Value first = element(0), second = element(1);
  Value odd = arith::AndIOp::create(rewriter, loc, at[at.size() - 2], index(rewriter, loc, 1));
  Value isOdd =
      arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ne, odd, index(rewriter, loc, 0));
  SmallVector<Value> earlierAt(at), laterAt(at);
  earlierAt.back() = arith::AddIOp::create(rewriter, loc, at.back(), odd);
  laterAt.back() = arith::SubIOp::create(rewriter, loc, add(loc, at.back(), 1), odd);
  memref::StoreOp::create(
      rewriter, loc, arith::SelectOp::create(rewriter, loc, isOdd, second, first), tile, earlierAt);
  memref::StoreOp::create(
      rewriter, loc, arith::SelectOp::create(rewriter, loc, isOdd, first, second), tile, laterAt);
}

std::optional<KernelLowering::CrossedPairBases>
KernelLowering::crossedPairBases(Location loc, CopyOp op, const FragmentLayout &layout) {
  // The identity: in a 128-byte atom of 32-bit elements, element (r, c) is at
  //   (c / 32) * rows * 32 + r * 32 + ((c % 32) ^ (4 * (r % 8))).
  // A thread's pairs sit at r = rowBase + R, c = colStart + 2 (lane % 4) + C,
  // with rowBase = wm * warpRowStep + lane / 4, colStart = wn * cols / warpsN
  // and constants R % 8 == 0, C % 8 == 0. With warpRowStep % 8 == 0, r % 8 is
  // q = lane / 4 for every pair; with colStart % 32 == 0 the XOR splits over
  // the bits 2 (lane % 4) and C % 32 occupy (1-2 and 3-4):
  //   (2 (lane % 4) ^ 4 (q & 1)) + ((C % 32) ^ 4 (q & 6)).
  // So a pair's element is one of four per-thread bases (C % 32 / 8) plus
  // R * 32 + (C / 32) * rows * 32, and a crossed pair's odd rows (q odd) add
  // 1 to the first store and 0 to the second.
  Value dst = op.getDst();
  auto type = cast<MemRefType>(dst.getType());
  if (type.getRank() != 2 || layout.kind != FragmentLayout::Kind::Mma ||
      wgmmaAtoms.lookup(dst) != 128 || type.getElementTypeBitWidth() != 32 ||
      layout.warpRowStep() % 8 || layout.tileRowStep() % 8 || type.getDimSize(1) % 32 ||
      (layout.warpsN > 1 && (layout.cols / layout.warpsN) % 32) ||
      llvm::to_vector(op.getDstSizes()) != llvm::to_vector(type.getShape()))
    return std::nullopt;
  for (Value offset : op.getDstOffsets())
    if (getConstantIntValue(offset) != 0)
      return std::nullopt;
  auto &b = rewriter;
  int64_t rows = type.getDimSize(0);
  auto [rowBase, colBase] = mmaBases(loc, layout);
  Value quad = arith::DivUIOp::create(b, loc, lane, index(b, loc, 4));
  // colBase = colStart + 2 (lane % 4), colStart a multiple of 32.
  Value pair = arith::RemUIOp::create(b, loc, colBase, index(b, loc, 8));
  Value colStart = arith::SubIOp::create(b, loc, colBase, pair);
  Value oddRow = arith::AndIOp::create(b, loc, quad, index(b, loc, 1));
  Value low = arith::XOrIOp::create(b, loc, pair,
                                    arith::MulIOp::create(b, loc, oddRow, index(b, loc, 4)));
  Value high = arith::MulIOp::create(
      b, loc, arith::AndIOp::create(b, loc, quad, index(b, loc, 6)), index(b, loc, 4));
  Value base = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, rowBase, index(b, loc, 32)), low);
  base = arith::AddIOp::create(
      b, loc, base,
      arith::MulIOp::create(b, loc, arith::DivUIOp::create(b, loc, colStart, index(b, loc, 32)),
                            index(b, loc, rows * 32)));
  Value firstBase = arith::AddIOp::create(b, loc, base, oddRow);
  Value secondBase = arith::SubIOp::create(b, loc, add(loc, base, 1), oddRow);
  CrossedPairBases bases;
  bases.tileRows = rows;
  for (int64_t j = 0; j < 4; ++j) {
    Value chunk = arith::XOrIOp::create(b, loc, index(b, loc, 8 * j), high);
    bases.first.push_back(arith::AddIOp::create(b, loc, firstBase, chunk));
    bases.second.push_back(arith::AddIOp::create(b, loc, secondBase, chunk));
  }
  return bases;
}

bool KernelLowering::sameMmaFragments(CopyOp op) {
  if (!isFragment(op.getSrc()) || !isFragment(op.getDst()))
    return false;
  const FragmentLayout &from = fragments.find(op.getSrc())->second.layout;
  const FragmentLayout &to = fragments.find(op.getDst())->second.layout;
  return from.kind == FragmentLayout::Kind::Mma && from == to && from.count() % 2 == 0 &&
         cast<MemRefType>(op.getSrc().getType()).getShape() ==
             cast<MemRefType>(op.getDst().getType()).getShape();
}

void KernelLowering::copySameMmaFragments(CopyOp op) {
  Location loc = op.getLoc();
  const Fragment &from = fragments.find(op.getSrc())->second;
  const Fragment &to = fragments.find(op.getDst())->second;
  Type fromType = cast<MemRefType>(from.storage.getType()).getElementType();
  Type toType = cast<MemRefType>(to.storage.getType()).getElementType();
  for (int64_t slot = 0; slot < from.layout.count(); slot += 2) {
    Value at = index(rewriter, loc, slot);
    Value pair = vector::LoadOp::create(rewriter, loc, VectorType::get({2}, fromType), from.storage,
                                        ValueRange{at});
    vector::StoreOp::create(rewriter, loc, convertFloat(rewriter, loc, pair, toType), to.storage,
                            ValueRange{at});
  }
}

LogicalResult KernelLowering::checkWholeFragment(Operation *op, StringRef verb, Value buffer,
                                                 OperandRange offsets, ArrayRef<int64_t> sizes) {
  auto type = cast<MemRefType>(buffer.getType());
  for (auto [offset, size, dim] : llvm::zip(offsets, sizes, type.getShape())) {
    std::optional<int64_t> c = getConstantIntValue(offset);
    if (!c || *c != 0 || size != dim)
      return op->emitOpError() << verb << " part of a fragment; the GPU lowering " << verb
                               << " whole fragments only";
  }
  if (type.getRank() > 1 && type.getDimSize(0) == 1)
    return op->emitOpError() << verb
                             << " a fragment whose first extent is 1; the GPU lowering "
                                "distributes fragments by their first dimension";
  return success();
}

int64_t KernelLowering::vectorWidth(CopyOp op) {
  Value src = op.getSrc(), dst = op.getDst();
  auto srcType = cast<MemRefType>(src.getType()), dstType = cast<MemRefType>(dst.getType());
  if (srcType.getElementType() != dstType.getElementType() || layouts.count(src) ||
      layouts.count(dst) || isLocal(src) || isLocal(dst))
    return 0;
  int64_t bytes = srcType.getElementTypeBitWidth() / 8;
  if (bytes == 0 || 16 % bytes)
    return 0;
  int64_t width = 16 / bytes;
  // A piece that starts inside the tensor then ends inside it: each piece
  // is guarded by its first element.
  auto aligned = [&](MemRefType type, OperandRange offsets, ArrayRef<int64_t> sizes) {
    int64_t last = type.getRank() - 1;
    return sizes[last] != 1 && sizes[last] % width == 0 && type.getDimSize(last) % width == 0 &&
           knownDivisor(offsets[last]) % width == 0;
  };
  if (!aligned(srcType, op.getSrcOffsets(), op.getSrcSizes()) ||
      !aligned(dstType, op.getDstOffsets(), op.getDstSizes()))
    return 0;
  return width;
}

LogicalResult KernelLowering::lowerCopy(CopyOp op) {
  waitReduceReads(op.getLoc(), op.getDst());
  waitProducerReduceRead(op.getLoc(), op.getDst());
  if (tlDialect(op).getTmaCopyAttrHelper().isAttrPresent(op))
    return lowerTmaCopy(op);
  Location loc = op.getLoc();
  Value src = op.getSrc(), dst = op.getDst();
  SmallVector<int64_t> extents = nonUnitExtents(op.getSrcSizes());
  // A shared tile's writes are fenced by barriers on both sides, but for the
  // tile handed to the producer warpgroup: nothing else reads it, its
  // previous reads (the producer's boxes) are waited for above, and each
  // thread hands its writes over itself (lowerAtomicAddTile).
  bool writesShared =
      isShared(dst) && !(producerReduce && dst == producerReduce->tile && producerReduce->k);
  if (writesShared)
    barrier(loc);
  if (auto entry = pipelines.entryCopies.find(op.getOperation());
      entry != pipelines.entryCopies.end()) {
    // Waited for after the prologue of the loop it precedes (PipelinePlan.h).
    issuePieces(op, op.getSrcOffsets(), dst, entry->second);
    NVVM::CpAsyncCommitGroupOp::create(rewriter, loc);
    rewriter.eraseOp(op);
    return success();
  }
  if (isFragment(src) || isFragment(dst)) {
    Value fragment = isFragment(dst) ? dst : src;
    for (Value side : {src, dst})
      if (isFragment(side) &&
          failed(checkWholeFragment(op, "copies", side,
                                    side == src ? op.getSrcOffsets() : op.getDstOffsets(),
                                    side == src ? op.getSrcSizes() : op.getDstSizes())))
        return failure();
    ArrayRef<int64_t> shape = cast<MemRefType>(fragment.getType()).getShape();
    const FragmentLayout &layout = fragments.find(fragment)->second.layout;
    if (int64_t width = rowVectorWidth(op, fragment)) {
      copyRowVectors(op, fragment, width);
      if (writesShared)
        barrier(loc);
      rewriter.eraseOp(op);
      return success();
    }
    if (sameMmaFragments(op)) {
      copySameMmaFragments(op);
      rewriter.eraseOp(op);
      return success();
    }
    if (mmaPairs(op, fragment)) {
      copyMmaPairs(op, fragment);
      if (writesShared)
        barrier(loc);
      rewriter.eraseOp(op);
      return success();
    }
    // A replicated row vector is written out by one of its holders only.
    Value writer = isFragment(dst) ? Value() : rowWriter(loc, layout);
    forOwned(loc, layout, shape,
             [&](OpBuilder &b, Location loc, const Owned &owned, ValueRange full) {
               auto [from, to] = regionPairIndices(b, loc, op, squeezeIndices(shape, full));
               Value value = load(b, loc, src, from, &owned);
               if (!writer) {
                 store(b, loc, value, dst, to, &owned);
                 return;
               }
               scf::IfOp::create(b, loc, writer, [&](OpBuilder &b, Location loc) {
                 store(b, loc, value, dst, to, &owned);
                 scf::YieldOp::create(b, loc);
               });
             });
  } else if (isLocal(src) || isLocal(dst)) {
    buildLoops(rewriter, loc, extents, [&](OpBuilder &b, Location loc, ValueRange s) {
      SmallVector<Value> from = regionIndices(b, loc, op.getSrcOffsets(), op.getSrcSizes(), s);
      SmallVector<Value> to = regionIndices(b, loc, op.getDstOffsets(), op.getDstSizes(), s);
      store(b, loc, load(b, loc, src, from, nullptr), dst, to, nullptr);
    });
  } else if (int64_t width = vectorWidth(op)) {
    // 16-byte accesses along the contiguous last dimension.
    SmallVector<int64_t> vectors(extents);
    vectors.back() /= width;
    Type element = cast<MemRefType>(src.getType()).getElementType();
    auto vectorType = VectorType::get({width}, element);
    forSpread(loc, vectors, [&](OpBuilder &b, Location loc, ValueRange v) {
      SmallVector<Value> s(v);
      s.back() = arith::MulIOp::create(b, loc, s.back(), index(b, loc, width));
      SmallVector<Value> from = regionIndices(b, loc, op.getSrcOffsets(), op.getSrcSizes(), s);
      SmallVector<Value> to = regionIndices(b, loc, op.getDstOffsets(), op.getDstSizes(), s);
      Value value = loadVector(b, loc, vectorType, src, from, llvm::MaybeAlign(16));
      storeVector(b, loc, value, dst, to, llvm::MaybeAlign(16));
    });
  } else {
    // Element by element (a layout, another type or a ragged width): a
    // batch of loads, then their stores.
    forSpreadBatched(
        loc, extents, [&](OpBuilder &b, Location loc, ArrayRef<SmallVector<Value>> batch) {
          SmallVector<Value> values;
          for (const SmallVector<Value> &s : batch)
            values.push_back(load(b, loc, src,
                                  regionIndices(b, loc, op.getSrcOffsets(), op.getSrcSizes(), s),
                                  nullptr));
          for (auto [s, value] : llvm::zip(batch, values))
            store(b, loc, value, dst,
                  regionIndices(b, loc, op.getDstOffsets(), op.getDstSizes(), s), nullptr);
        });
  }
  if (writesShared)
    barrier(loc);
  rewriter.eraseOp(op);
  return success();
}

LogicalResult KernelLowering::lowerAtomicAddTile(AtomicAddTileOp op) {
  if (producerReduce && op.getSrc() == producerReduce->tile) {
    // Handed to the producer: each thread's writes of the tile reach the
    // copy engine (a proxy fence), then it arrives on `full`.
    Location loc = op.getLoc();
    fenceProxyAsync(loc);
    NVVM::MBarrierArriveOp::create(
        rewriter, loc, /*res=*/Type(),
        mbarrierAddress(loc, producerReduce->full, index(rewriter, loc, 0)),
        /*count=*/Value());
    rewriter.eraseOp(op);
    return success();
  }
  if (tlDialect(op).getTmaCopyAttrHelper().isAttrPresent(op))
    return lowerTmaReduce(op);
  Location loc = op.getLoc();
  Value src = op.getSrc(), dst = op.getDst();
  if (isFragment(src)) {
    if (failed(checkWholeFragment(op, "adds", src, op.getSrcOffsets(), op.getSrcSizes())))
      return failure();
    if (mmaTileAdds(op)) {
      addMmaTiles(op);
      rewriter.eraseOp(op);
      return success();
    }
    ArrayRef<int64_t> shape = cast<MemRefType>(src.getType()).getShape();
    const FragmentLayout &layout = fragments.find(src)->second.layout;
    // A replicated row vector is added by one of its holders only.
    Value writer = rowWriter(loc, layout);
    forOwned(loc, layout, shape,
             [&](OpBuilder &b, Location loc, const Owned &owned, ValueRange full) {
               auto [from, to] = regionPairIndices(b, loc, op, squeezeIndices(shape, full));
               Value value = load(b, loc, src, from, &owned);
               if (!writer) {
                 atomicAddGlobal(b, loc, value, dst, to);
                 return;
               }
               scf::IfOp::create(b, loc, writer, [&](OpBuilder &b, Location loc) {
                 atomicAddGlobal(b, loc, value, dst, to);
                 scf::YieldOp::create(b, loc);
               });
             });
    rewriter.eraseOp(op);
    return success();
  }
  SmallVector<int64_t> extents = nonUnitExtents(op.getSrcSizes());
  auto addElement = [&](OpBuilder &b, Location loc, ValueRange at) {
    auto [from, to] = regionPairIndices(b, loc, op, at);
    atomicAddGlobal(b, loc, load(b, loc, src, from, nullptr), dst, to);
  };
  barrier(loc); // a shared tile: the threads' writes of it first
  forSpread(loc, extents, addElement);
  rewriter.eraseOp(op);
  return success();
}

bool KernelLowering::mmaTileAdds(AtomicAddTileOp op) {
  Value src = op.getSrc(), dst = op.getDst();
  auto layout = layouts.find(dst);
  if ((limits.target != "sm_90" && limits.target != "sm_90a") || layout == layouts.end() ||
      !isGlobal(dst) || fragments.find(src)->second.layout.kind != FragmentLayout::Kind::Mma)
    return false;
  auto srcType = cast<MemRefType>(src.getType()), dstType = cast<MemRefType>(dst.getType());
  if (srcType.getRank() != 2 || !srcType.getElementType().isF32() ||
      !dstType.getElementType().isF32())
    return false;
  SmallVector<unsigned> spanned = spannedDims(op.getDstSizes()); // along the rows, the columns
  if (spanned.size() != 2 || op.getDstSizes()[spanned[0]] != srcType.getDimSize(0) ||
      op.getDstSizes()[spanned[1]] != srcType.getDimSize(1))
    return false;
  auto [rowDim, colDim] = std::pair(spanned[0], spanned[1]);
  // (Tile offsets are 32-bit GEP constants.)
  return layout->second.getPhysicalSize() <= std::numeric_limits<int32_t>::max() &&
         isMmaTileOrder(layout->second, rowDim, colDim) &&
         knownDivisor(op.getDstOffsets()[rowDim]) % 16 == 0 &&
         knownDivisor(op.getDstOffsets()[colDim]) % 8 == 0 &&
         dstType.getDimSize(rowDim) % 16 == 0 && dstType.getDimSize(colDim) % 8 == 0;
}

void KernelLowering::addMmaTiles(AtomicAddTileOp op) {
  Location loc = op.getLoc();
  Value dst = op.getDst();
  const Fragment &f = fragments.find(op.getSrc())->second;
  ArrayRef<int64_t> physicalShape = layouts.find(dst)->second.getPhysicalShape();
  SmallVector<int64_t> strides(physicalShape.size(), 1); // of the physical array, in elements
  for (int d = static_cast<int>(strides.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * physicalShape[d + 1];
  SmallVector<unsigned> spanned = spannedDims(op.getDstSizes()); // along the rows, the columns
  const unsigned rowDim = spanned[0], colDim = spanned[1];
  auto [rowBase, colBase] = mmaBases(loc, f.layout);
  auto indicesAt = [&](int64_t slot) {
    auto [row, col] = mmaSlotOffset(f.layout, slot);
    return regionIndices(rewriter, loc, op.getDstOffsets(), op.getDstSizes(),
                         ValueRange{add(loc, rowBase, row), add(loc, colBase, col)});
  };
  // The thread's first tile's address; each other tile's lies a constant
  // away: its row and column tile offsets (multiples of 16 and 8) move only
  // the layout's l / 16 and d / 8 indices, not the position within a tile.
  ElementRef first = resolveElement(rewriter, loc, layouts, dst, indicesAt(0));
  Value offset =
      arith::MulIOp::create(rewriter, loc, linearIndex(rewriter, loc, physicalShape, first.indices),
                            index(rewriter, loc, 4));
  Value firstTile = globalPointer(
      rewriter, loc, memref::ExtractAlignedPointerAsIndexOp::create(rewriter, loc, dst), offset);
  auto [firstRow, firstCol] = mmaSlotOffset(f.layout, 0);
  auto quad = VectorType::get({4}, rewriter.getF32Type());
  // Slots 4t .. 4t + 3 are tile t's (r, c), (r, c + 1), (r + 8, c), (r + 8,
  // c + 1): in tile order, 16 consecutive bytes from (r, c)'s.
  for (int64_t slot = 0; slot < f.layout.count(); slot += 4) {
    auto [row, col] = mmaSlotOffset(f.layout, slot);
    int64_t elements =
        (row - firstRow) / 16 * strides[rowDim] + (col - firstCol) / 8 * strides[colDim];
    Value values = vector::LoadOp::create(rewriter, loc, quad, f.storage,
                                          ValueRange{index(rewriter, loc, slot)});
    scf::IfOp::create(
        rewriter, loc, insideBuffer(rewriter, loc, dst, indicesAt(slot)),
        [&](OpBuilder &b, Location loc) {
          Value tile = LLVM::GEPOp::create(b, loc, firstTile.getType(), b.getF32Type(), firstTile,
                                           ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(elements)});
          SmallVector<Value> operands = {LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), tile)};
          for (int64_t e = 0; e < 4; ++e)
            operands.push_back(vector::ExtractOp::create(b, loc, values, ArrayRef<int64_t>{e}));
          LLVM::InlineAsmOp::create(
              b, loc, TypeRange{}, operands, "red.global.add.v4.f32 [$0], {$1, $2, $3, $4};",
              "l,f,f,f,f,~{memory}", /*has_side_effects=*/true, /*is_align_stack=*/false,
              LLVM::TailCallKind::None,
              LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
              /*operand_attrs=*/ArrayAttr());
          scf::YieldOp::create(b, loc);
        });
  }
}

} // namespace tl::gpu_lowering
