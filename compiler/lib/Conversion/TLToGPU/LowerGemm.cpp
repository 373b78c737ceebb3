//===- LowerGemm.cpp - KernelLowering: gemm -------------------------------===//
//
// tl.gemm: mma.sync m16n8k16 on Mma fragments, operands from registers or
// through ldmatrix (swizzled lane addresses); a scalar loop on Row fragments.
//
//===----------------------------------------------------------------------===//
#include "KernelLowering.h"

namespace tl::gpu_lowering {

LogicalResult KernelLowering::lowerGemm(GemmOp op) {
  Location loc = op.getLoc();
  Value a = op.getA(), bBuf = op.getB(), c = op.getC();
  bool ta = op.getTransposeA(), tb = op.getTransposeB();
  const FragmentLayout &cLayout = fragments.find(c)->second.layout;
  bool mma = cLayout.kind == FragmentLayout::Kind::Mma;
  if (mma && cLayout.warpgroup)
    return lowerGemmWgmma(op);
  // Operands a thread cannot read from its own registers: through shared.
  if (isFragment(bBuf))
    op->setOperand(1, bBuf = stageThroughShared(loc, bBuf));
  if (isFragment(a) && (ta || (mma && !aFromRegisters(op))))
    op->setOperand(0, a = stageThroughShared(loc, a));
  if (mma)
    return lowerGemmMma(op);
  auto aType = cast<MemRefType>(a.getType());
  auto cType = cast<MemRefType>(c.getType());
  int64_t k = ta ? aType.getDimSize(0) : aType.getDimSize(1);
  Type acc = cType.getElementType();
  Value cStorage = fragments.lookup(c).storage;
  forOwnedRows(loc, cType.getDimSize(0), [&](OpBuilder &b, Location loc, Value r, Value row) {
    buildLoops(b, loc, {cType.getDimSize(1)}, [&](OpBuilder &b, Location loc, ValueRange j) {
      Value init = op.getClearAccum()
                       ? zeroOf(b, loc, acc)
                       : memref::LoadOp::create(b, loc, cStorage, ValueRange{r, j[0]}).getResult();
      auto loop = scf::ForOp::create(
          b, loc, index(b, loc, 0), index(b, loc, k), index(b, loc, 1), ValueRange{init},
          [&](OpBuilder &b, Location loc, Value kk, ValueRange sum) {
            Value av =
                isFragment(a)
                    ? memref::LoadOp::create(b, loc, fragments.lookup(a).storage, ValueRange{r, kk})
                          .getResult()
                    : memref::LoadOp::create(b, loc, a,
                                             ta ? ValueRange{kk, row} : ValueRange{row, kk})
                          .getResult();
            Value bv = memref::LoadOp::create(b, loc, bBuf,
                                              tb ? ValueRange{j[0], kk} : ValueRange{kk, j[0]});
            Value product = arith::MulFOp::create(b, loc, convertFloat(b, loc, av, acc),
                                                  convertFloat(b, loc, bv, acc));
            scf::YieldOp::create(b, loc,
                                 arith::AddFOp::create(b, loc, sum[0], product).getResult());
          });
      memref::StoreOp::create(b, loc, loop.getResult(0), cStorage, ValueRange{r, j[0]});
    });
  });
  rewriter.eraseOp(op);
  return success();
}

bool KernelLowering::aFromRegisters(GemmOp op) {
  const FragmentLayout &a = fragments.find(op.getA())->second.layout;
  const FragmentLayout &c = fragments.find(op.getC())->second.layout;
  int64_t k = cast<MemRefType>(op.getA().getType()).getDimSize(1);
  return a.kind == FragmentLayout::Kind::Mma && c.warpsN == 1 && a.rows == c.rows && a.cols == k &&
         a.warpsM == c.warpsM && a.warpsN == 1;
}

Value KernelLowering::stageThroughShared(Location loc, Value fragment) {
  auto type = cast<MemRefType>(fragment.getType());
  Value tile = allocateShared(loc, MemRefType::get(type.getShape(), type.getElementType()));
  const FragmentLayout &layout = fragments.find(fragment)->second.layout;
  barrier(loc);
  forOwned(loc, layout, type.getShape(),
           [&](OpBuilder &b, Location loc, const Owned &owned, ValueRange full) {
             memref::StoreOp::create(b, loc, load(b, loc, fragment, full, &owned), tile, full);
           });
  barrier(loc);
  return tile;
}

Value KernelLowering::pack(Location loc, Value lo, Value hi, Type half) {
  auto &b = rewriter;
  Value pair = vector::FromElementsOp::create(
      b, loc, VectorType::get({2}, half),
      ValueRange{convertFloat(b, loc, lo, half), convertFloat(b, loc, hi, half)});
  Value word = vector::BitCastOp::create(b, loc, VectorType::get({1}, b.getI32Type()), pair);
  return vector::ExtractOp::create(b, loc, word, ArrayRef<int64_t>{0});
}

SmallVector<Value> KernelLowering::mma(Location loc, ArrayRef<Value> a, ArrayRef<Value> b,
                                       ArrayRef<Value> c, bool bf16) {
  auto &rw = rewriter;
  Type f32 = rw.getF32Type();
  auto resultType = LLVM::LLVMStructType::getLiteral(rw.getContext(), {f32, f32, f32, f32});
  // nvvm.mma.sync takes f16 pairs as vector<2xf16> and bf16 pairs as i32;
  // the fragments hold both as i32 words (ldmatrix's result, `pack`).
  auto multiplicand = [&](ArrayRef<Value> words) {
    SmallVector<Value> values;
    for (Value word : words)
      values.push_back(
          bf16 ? word
               : LLVM::BitcastOp::create(rw, loc, VectorType::get({2}, rw.getF16Type()), word)
                     .getResult());
    return values;
  };
  NVVM::MMATypes type = bf16 ? NVVM::MMATypes::bf16 : NVVM::MMATypes::f16;
  Value result = NVVM::MmaOp::create(
      rw, loc, resultType, multiplicand(a), multiplicand(b), c, /*shape=*/{16, 8, 16},
      /*b1Op=*/std::nullopt, /*intOverflow=*/std::nullopt,
      std::array<NVVM::MMATypes, 2>{type, type},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row, NVVM::MMALayout::col});
  SmallVector<Value> d;
  for (int64_t i = 0; i < 4; ++i)
    d.push_back(LLVM::ExtractValueOp::create(rw, loc, result, i));
  return d;
}

Value KernelLowering::inlineAsm(Location loc, Type resultType, ValueRange operands,
                                const std::string &text, StringRef constraints) {
  return LLVM::InlineAsmOp::create(
             rewriter, loc, resultType, operands, text, constraints,
             /*has_side_effects=*/false, /*is_align_stack=*/false, LLVM::TailCallKind::None,
             LLVM::AsmDialectAttr::get(rewriter.getContext(), LLVM::AsmDialect::AD_ATT),
             /*operand_attrs=*/ArrayAttr())
      .getResult(0);
}

/// The 32-bit address of element `linear` of a shared buffer of `type` at
/// `base` (its aligned pointer as an index).
static Value byteAddress(OpBuilder &b, Location loc, Value base, MemRefType type, Value linear) {
  Value bytes =
      arith::MulIOp::create(b, loc, linear, index(b, loc, type.getElementTypeBitWidth() / 8));
  return arith::IndexCastOp::create(b, loc, b.getI32Type(),
                                    arith::AddIOp::create(b, loc, base, bytes));
}

Value KernelLowering::sharedAddress(Location loc, Value buffer, ValueRange indices) {
  auto &b = rewriter;
  auto type = cast<MemRefType>(buffer.getType());
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
  SmallVector<Value> at(indices);
  if (swizzled.count(buffer))
    at.back() = swizzleColumn(b, loc, at[at.size() - 2], at.back());
  Value linear = wgmmaAtoms.count(buffer) ? wgmmaElement(b, loc, buffer, at[0], at[1])
                                          : linearIndex(b, loc, type.getShape(), at);
  return byteAddress(rewriter, loc, base, type, linear);
}

Value KernelLowering::sharedElementAddress(Location loc, Value buffer, Value linear) {
  return byteAddress(rewriter, loc,
                     memref::ExtractAlignedPointerAsIndexOp::create(rewriter, loc, buffer),
                     cast<MemRefType>(buffer.getType()), linear);
}

Value KernelLowering::sharedAddress(Location loc, Value buffer, Value row, Value col) {
  return sharedAddress(loc, buffer, ValueRange{row, col});
}

SmallVector<Value> KernelLowering::ldmatrix(Location loc, Value address, bool transpose) {
  auto &b = rewriter;
  Type i32 = b.getI32Type();
  auto resultType = LLVM::LLVMStructType::getLiteral(b.getContext(), {i32, i32, i32, i32});
  Value pointer = LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), /*addressSpace=*/3), address);
  Value matrices = NVVM::LdMatrixOp::create(b, loc, resultType, pointer, /*num=*/4,
                                            transpose ? NVVM::MMALayout::col : NVVM::MMALayout::row,
                                            NVVM::LdStMatrixShapeAttr::get(b.getContext(), 8, 8),
                                            NVVM::LdStMatrixEltType::B16);
  SmallVector<Value> regs;
  for (int64_t i = 0; i < 4; ++i)
    regs.push_back(LLVM::ExtractValueOp::create(b, loc, matrices, i));
  return regs;
}

Value KernelLowering::ldmatrixAddress(Location loc, Value buffer, Value row, Value col,
                                      int64_t rowStep, int64_t colStep, int64_t warpStride) {
  auto &b = rewriter;
  bool disjoint = warpStride == 0 ||
                  (llvm::isPowerOf2_64(warpStride) && warpStride >= 16 && colStep < warpStride);
  if (!swizzled.count(buffer) || !disjoint || rowStep % 8 || colStep % 16)
    return sharedAddress(loc, buffer, add(loc, row, rowStep), add(loc, col, colStep));
  auto type = cast<MemRefType>(buffer.getType());
  int64_t elementBytes = type.getElementTypeBitWidth() / 8;
  int64_t lineElements = 128 / elementBytes; // the swizzle's reach
  int64_t low = (colStep % lineElements) * elementBytes;
  // Cached per gemm: every step that shares the xor shares its register.
  auto cached = [&](int64_t bits, function_ref<Value()> make) {
    auto key = std::make_tuple(buffer, row, col, bits);
    if (Value known = laneAddresses.lookup(key))
      return known;
    return laneAddresses[key] = make();
  };
  Value lane = cached(0, [&] { return sharedAddress(loc, buffer, row, col); });
  // An opaque xor: LLVM would otherwise fold each step's constant into its
  // own loop-invariant register (one per ldmatrix, live throughout).
  Value address = low == 0 ? lane : cached(low, [&] {
    return inlineAsm(loc, b.getI32Type(), lane, "xor.b32 $0, $1, " + std::to_string(low) + ";",
                     "=r,r");
  });
  int64_t offset = rowStep * type.getDimSize(1) * elementBytes +
                   (colStep - colStep % lineElements) * elementBytes;
  if (!offset)
    return address;
  return arith::AddIOp::create(
      b, loc, address,
      arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(static_cast<int32_t>(offset))));
}

bool KernelLowering::ldmatrixReady(Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  return isShared(buffer) && type.getElementTypeBitWidth() == 16 && type.getDimSize(1) % 8 == 0;
}

LogicalResult KernelLowering::lowerGemmMma(GemmOp op) {
  Location loc = op.getLoc();
  laneAddresses.clear();
  Value a = op.getA(), bBuf = op.getB(), c = op.getC();
  bool ta = op.getTransposeA(), tb = op.getTransposeB();
  const FragmentLayout &cl = fragments.find(c)->second.layout;
  auto aType = cast<MemRefType>(a.getType());
  int64_t k = ta ? aType.getDimSize(0) : aType.getDimSize(1);
  Type half = aType.getElementType();
  bool bf16 = half.isBF16();
  Value cStorage = fragments.lookup(c).storage;
  auto [rowBase, colBase] = mmaBases(loc, cl);
  // Lane's column pair inside a 16-deep K step: 2 * (lane % 4).
  Value kPair = arith::MulIOp::create(
      rewriter, loc, arith::RemUIOp::create(rewriter, loc, lane, index(rewriter, loc, 4)),
      index(rewriter, loc, 2));
  Value quad = arith::DivUIOp::create(rewriter, loc, lane, index(rewriter, loc, 4));
  Value colWarp = arith::SubIOp::create(rewriter, loc, colBase, kPair); // wn * nW
  Value rowWarp = arith::SubIOp::create(rewriter, loc, rowBase, quad);  // wm * mW
  // For ldmatrix: lane l names row l%8 of matrix l/8.
  Value matrix = arith::DivUIOp::create(rewriter, loc, lane, index(rewriter, loc, 8));
  Value eighthRow = arith::RemUIOp::create(rewriter, loc, lane, index(rewriter, loc, 8));
  auto times8 = [&](Value v) {
    return arith::MulIOp::create(rewriter, loc, v, index(rewriter, loc, 8)).getResult();
  };
  Value mBlock = times8(arith::RemUIOp::create(rewriter, loc, matrix, index(rewriter, loc, 2)));
  Value kBlock = times8(arith::DivUIOp::create(rewriter, loc, matrix, index(rewriter, loc, 2)));
  Value kBlock2 = mBlock; // B: k block (i%2)*8
  Value nBlock = kBlock;  // B: n block (i/2)*8
  // This lane's ldmatrix row and column, before the K step and tile:
  // A [M][K] at (mRow, kBlock), transposed A [K][M] at (kRow, mCol),
  // B^T [N][K] at (nRow, kBlock2), B [K][N] at (kRow2, nCol).
  auto sum = [&](Value x, Value y) {
    return arith::AddIOp::create(rewriter, loc, x, y).getResult();
  };
  Value mRow = sum(sum(rowWarp, eighthRow), mBlock);
  Value kRow = sum(eighthRow, kBlock), mCol = sum(rowWarp, mBlock);
  Value nRow = sum(sum(colWarp, eighthRow), nBlock);
  Value kRow2 = sum(eighthRow, kBlock2), nCol = sum(colWarp, nBlock);
  if (op.getClearAccum())
    for (int64_t l = 0; l < cl.count(); ++l)
      memref::StoreOp::create(rewriter, loc, zeroOf(rewriter, loc, rewriter.getF32Type()), cStorage,
                              ValueRange{index(rewriter, loc, l)});
  auto loadA = [&](Value m, Value kk) -> Value {
    return memref::LoadOp::create(rewriter, loc, a, ta ? ValueRange{kk, m} : ValueRange{m, kk});
  };
  auto loadB = [&](Value kk, Value n) -> Value {
    return memref::LoadOp::create(rewriter, loc, bBuf, tb ? ValueRange{n, kk} : ValueRange{kk, n});
  };
  auto slot = [&](Value storage, int64_t l) -> Value {
    return memref::LoadOp::create(rewriter, loc, storage, ValueRange{index(rewriter, loc, l)});
  };
  for (int64_t kt = 0; kt < k / 16; ++kt) {
    Value k0 = add(loc, kPair, kt * 16), k8 = add(loc, kPair, kt * 16 + 8);
    Value k1 = add(loc, kPair, kt * 16 + 1), k9 = add(loc, kPair, kt * 16 + 9);
    SmallVector<SmallVector<Value>> aRegs;
    for (int64_t tm = 0; tm < cl.tilesM(); ++tm) {
      if (isFragment(a)) {
        const Fragment &af = fragments.find(a)->second;
        int64_t tiles = af.layout.tilesN();
        int64_t t0 = (tm * tiles + 2 * kt) * 4, t1 = (tm * tiles + 2 * kt + 1) * 4;
        aRegs.push_back({pack(loc, slot(af.storage, t0), slot(af.storage, t0 + 1), half),
                         pack(loc, slot(af.storage, t0 + 2), slot(af.storage, t0 + 3), half),
                         pack(loc, slot(af.storage, t1), slot(af.storage, t1 + 1), half),
                         pack(loc, slot(af.storage, t1 + 2), slot(af.storage, t1 + 3), half)});
        continue;
      }
      if (ldmatrixReady(a)) {
        // Lane l names row l%8 of 8x8 matrix l/8: (m, k) blocks (0,0),
        // (8,0), (0,8), (8,8) of the 16x16 A tile.
        // Transposed (stored [K][M]): row k0 + (i/2)*8 + l%8, column
        // m0 + (i%2)*8; the column has a warp offset unless warpsM == 1.
        Value address = ta ? ldmatrixAddress(loc, a, kRow, mCol, kt * 16, tm * 16,
                                             cl.warpsM == 1 ? 0 : cl.rows / cl.warpsM)
                           : ldmatrixAddress(loc, a, mRow, kBlock, tm * 16, kt * 16, 0);
        aRegs.push_back(ldmatrix(loc, address, ta));
        continue;
      }
      Value r0 = add(loc, rowBase, tm * 16), r8 = add(loc, rowBase, tm * 16 + 8);
      aRegs.push_back({pack(loc, loadA(r0, k0), loadA(r0, k1), half),
                       pack(loc, loadA(r8, k0), loadA(r8, k1), half),
                       pack(loc, loadA(r0, k8), loadA(r0, k9), half),
                       pack(loc, loadA(r8, k8), loadA(r8, k9), half)});
    }
    SmallVector<Value> bPair; // ldmatrix.x4 gives two n-tiles' B registers
    for (int64_t tn = 0; tn < cl.tilesN(); ++tn) {
      SmallVector<Value> bRegs;
      if (ldmatrixReady(bBuf)) {
        if (tn % 2 == 0) {
          // Matrix i: k block (i%2)*8, n block (i/2)*8. An odd last tile
          // has no neighbour: matrices 2 and 3 then repeat 0 and 1 (every
          // address stays inside the tile; the repeat goes unused).
          bool alone = tn + 1 == cl.tilesN();
          Value n = alone ? sum(colWarp, eighthRow) : nRow;
          Value nc = alone ? colWarp : nCol;
          bPair =
              tb ? ldmatrix(loc, ldmatrixAddress(loc, bBuf, n, kBlock2, tn * 8, kt * 16, 0), false)
                 : ldmatrix(loc,
                            ldmatrixAddress(loc, bBuf, kRow2, nc, kt * 16, tn * 8,
                                            cl.warpsN == 1 ? 0 : cl.cols / cl.warpsN),
                            true);
        }
        bRegs = tn % 2 == 0 ? SmallVector<Value>{bPair[0], bPair[1]}
                            : SmallVector<Value>{bPair[2], bPair[3]};
      } else {
        Value n = arith::AddIOp::create(rewriter, loc, colWarp, add(loc, quad, tn * 8));
        bRegs = {pack(loc, loadB(k0, n), loadB(k1, n), half),
                 pack(loc, loadB(k8, n), loadB(k9, n), half)};
      }
      for (int64_t tm = 0; tm < cl.tilesM(); ++tm) {
        int64_t base = (tm * cl.tilesN() + tn) * 4;
        SmallVector<Value> acc;
        for (int64_t e = 0; e < 4; ++e)
          acc.push_back(slot(cStorage, base + e));
        SmallVector<Value> d = mma(loc, aRegs[tm], bRegs, acc, bf16);
        for (int64_t e = 0; e < 4; ++e)
          memref::StoreOp::create(rewriter, loc, d[e], cStorage,
                                  ValueRange{index(rewriter, loc, base + e)});
      }
    }
  }
  rewriter.eraseOp(op);
  return success();
}

} // namespace tl::gpu_lowering
