//===- LowerWgmma.cpp - KernelLowering: gemm as wgmma (sm_90a) -----------===//
//
// A gemm whose accumulator has the wgmma layout (tl-infer-layouts chose it
// because B is a shared tile wgmma can describe, and A one too or a fragment
// of C's rows) becomes, per warpgroup, one wgmma.mma_async m64nNk16 per
// (64-row block, N chunk of at most 256 columns, k step of 16), reading B (and
// A) through shared-memory descriptors (WgmmaOperands.h), or A from the
// fragment's registers (RS: inline PTX, which the NVVM dialect lacks), and
// accumulating in registers. Warpgroups split the accumulator's rows, and
// its columns too where the rows are fewer (wgmmaWarpgroups):
//   fence.proxy.async; barrier     generic shared writes (copies, cp.async)
//                                  become visible to wgmma's async proxy
//   wgmma.fence                    accumulator registers were written
//   wgmma.mma_async ...            every block, chunk and k step
//   wgmma.commit_group; wgmma.wait_group 0
// The wait comes right after the batch: nothing touches an accumulator
// between a wgmma and its wait, which ptxas would otherwise serialise
// (C7514), and the tiles may be overwritten after the next barrier. In a
// pipelined loop planned with its batches in flight (PipelinePlan.h) the loop
// has already fenced and published the tiles, and the gemm waits only for the
// previous iteration's batch (wait_group 1); the loop waits for the last.
// A gemm in a loop that loads by TMA and reads only tiles those loads fill or
// the loop does not write needs neither (publishWgmmaOperands): the
// loop fences and publishes the tiles written before it, and its loads reach
// the async proxy themselves.
//
//===----------------------------------------------------------------------===//
#include "KernelLowering.h"
#include "OpaqueMove.h"

namespace tl::gpu_lowering {
namespace {

/// wgmma N chunks of a warpgroup's accumulator columns: at most 256 each, so
/// an MN-major B's chunks start at multiples of 256 (and of its atom).
SmallVector<std::pair<int64_t, int64_t>> columnChunks(int64_t n) {
  SmallVector<std::pair<int64_t, int64_t>> chunks;
  for (int64_t start = 0; start < n; start += 256)
    chunks.push_back({start, std::min<int64_t>(256, n - start)});
  return chunks;
}

} // namespace

Value KernelLowering::opaqueMove(Location loc, Value value) {
  bool wide = value.getType().isInteger(64);
  return LLVM::InlineAsmOp::create(
             rewriter, loc, value.getType(), ValueRange{value}, opaqueMoveAssembly(wide),
             wide ? "=l,l" : (value.getType().isInteger(32) ? "=r,r" : "=f,f"),
             /*has_side_effects=*/true, /*is_align_stack=*/false, LLVM::TailCallKind::None,
             LLVM::AsmDialectAttr::get(rewriter.getContext(), LLVM::AsmDialect::AD_ATT),
             /*operand_attrs=*/ArrayAttr())
      .getResult(0);
}

void KernelLowering::fenceProxyAsync(Location loc) {
  MLIRContext *context = rewriter.getContext();
  NVVM::FenceProxyOp::create(rewriter, loc,
                             NVVM::ProxyKindAttr::get(context, NVVM::ProxyKind::async_shared),
                             NVVM::SharedSpaceAttr::get(context, NVVM::SharedSpace::shared_cta));
}

LogicalResult KernelLowering::lowerGemmWgmma(GemmOp op) {
  Location loc = op.getLoc();
  auto &b = rewriter;
  MLIRContext *context = b.getContext();
  Value a = op.getA(), bTile = op.getB(), c = op.getC();
  bool ta = op.getTransposeA(), tb = op.getTransposeB();
  const Fragment &acc = fragments.find(c)->second;
  const FragmentLayout &cl = acc.layout;
  auto aType = cast<MemRefType>(a.getType()), bType = cast<MemRefType>(bTile.getType());
  int64_t k = ta ? aType.getDimSize(0) : aType.getDimSize(1);
  // Warpgroups along M and N (FragmentLayout.h); each runs its own 64-row
  // blocks and column block.
  int64_t groupsM = cl.warpsM / 4, groupsN = cl.warpsN, columns = cl.cols / groupsN;
  int64_t atomA = wgmmaAtoms.lookup(a), atomB = wgmmaAtoms.lookup(bTile);
  auto registersA = fragments.find(a); // RS wgmma: A from registers
  bool fromRegisters = registersA != fragments.end();
  if ((!atomA && !fromRegisters) || !atomB)
    return op.emitOpError("wgmma operands must be shared tiles in the wgmma layout");
  int64_t rowsA = aType.getDimSize(0), rowsB = bType.getDimSize(0);
  // What wgmmaWarpgroups chose; a layout written by hand must keep to it.
  if (groupsN > 1 && fromRegisters)
    return op.emitOpError("wgmma with A from registers needs its warpgroups along M only "
                          "(#tl.wgmma<warps = [w, 1]>)");
  if (groupsN > 1 && columns % (tb ? 8 : atomB / 2))
    return op.emitOpError() << "wgmma warpgroups along N need column blocks of a multiple of "
                            << (tb ? 8 : atomB / 2) << " (B's " << (tb ? "rows" : "swizzle atom")
                            << "), not " << columns;

  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  auto i64Constant = [&](uint64_t v) {
    return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(static_cast<int64_t>(v)))
        .getResult();
  };
  auto i32Constant = [&](uint32_t v) {
    return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(static_cast<int32_t>(v)))
        .getResult();
  };
  Value group = arith::DivUIOp::create(b, loc, warpId, index(b, loc, 4));
  Value groupM =
      groupsN == 1 ? group : arith::DivUIOp::create(b, loc, group, index(b, loc, groupsN));
  bool opaqueDescriptors = op->getParentOfType<PipelinedOp>() || op->getParentOfType<scf::ForOp>();
  // A descriptor's start at tile + runtime byte offset, with its constant
  // bits; later steps add their constant offset (in 16-byte units). With
  // limits.lowWordDescriptors the runtime part is the low word alone (the
  // start, 14 bits, and the leading byte offset) and the high word a
  // constant: the steps add 32 bits (a start inside shared memory plus an
  // offset inside the tile stays below 2^14 and carries into nothing, as in
  // the 64-bit add), where a 64-bit add costs ptxas an add with carry and
  // the moves between them for every wgmma.
  bool lowWord = limits.lowWordDescriptors;
  struct Descriptor {
    Value value; // the descriptor, or (lowWord) its low word
    uint64_t high = 0;
  };
  auto descriptor = [&](Value tile, Value byteOffset, uint64_t bits) {
    Value address = arith::AddIOp::create(
        b, loc, memref::ExtractAlignedPointerAsIndexOp::create(b, loc, tile), byteOffset);
    Type word = lowWord ? i32 : i64;
    auto constant = [&](uint64_t v) { return lowWord ? i32Constant(v) : i64Constant(v); };
    Value field = arith::AndIOp::create(
        b, loc,
        arith::ShRUIOp::create(b, loc, arith::IndexCastOp::create(b, loc, word, address),
                               constant(4)),
        constant(0x3FFF));
    Value start =
        arith::OrIOp::create(b, loc, field, constant(lowWord ? bits & 0xFFFFFFFFu : bits));
    // In a loop, the start is made here, each iteration: LLVM would
    // otherwise hoist every k step's descriptor of a loop-invariant tile out
    // of the loop, a register or two each for the whole loop (the staged
    // backward's five gemms spilled so).
    return Descriptor{opaqueDescriptors ? opaqueMove(loc, start) : start,
                      lowWord ? bits >> 32 << 32 : 0};
  };
  auto advanced = [&](const Descriptor &desc, int64_t bytes) -> Value {
    if (!lowWord)
      return bytes ? arith::AddIOp::create(b, loc, desc.value, i64Constant(bytes >> 4)).getResult()
                   : desc.value;
    Value low = bytes
                    ? arith::AddIOp::create(b, loc, desc.value, i32Constant(bytes >> 4)).getResult()
                    : desc.value;
    return arith::OrIOp::create(b, loc, arith::ExtUIOp::create(b, loc, i64, low),
                                i64Constant(desc.high));
  };
  // Each operand's corner for k step kk and this warpgroup's block t (A) or
  // N chunk n0 (B): the start address of its descriptor. A as stored and B
  // transposed are K-major (k steps inside an atom); A transposed and B as
  // stored MN-major (LBO: the next column block of the atom's width).
  auto corner = [](int64_t rows, int64_t atom, bool kMajor, int64_t mn, int64_t k0) {
    return kMajor ? wgmmaCornerOffset(rows, atom, mn, k0) : wgmmaCornerOffset(rows, atom, k0, mn);
  };
  auto bits = [](int64_t rows, int64_t atom, bool kMajor) {
    return wgmmaDescriptorBits(kMajor ? 16 : rows * atom, 8 * atom, atom);
  };
  // Warpgroup row gm's blocks start 64 * gm rows down A's M, column gn's at
  // column gn * columns of B (a multiple of 8 rows of a K-major B, of the
  // atom's columns of an MN-major one: the offset is linear in gn).
  Descriptor descA;
  if (!fromRegisters)
    descA = descriptor(
        a, arith::MulIOp::create(b, loc, groupM, index(b, loc, corner(rowsA, atomA, !ta, 64, 0))),
        bits(rowsA, atomA, !ta));
  auto offsetA = [&](int64_t block, int64_t kk) { // block: this warpgroup's t-th
    return corner(rowsA, atomA, !ta, block * groupsM * 64, kk * 16);
  };
  Value startB = index(b, loc, 0);
  if (groupsN > 1)
    startB =
        arith::MulIOp::create(b, loc, arith::RemUIOp::create(b, loc, group, index(b, loc, groupsN)),
                              index(b, loc, corner(rowsB, atomB, tb, columns, 0)));
  Descriptor descB = descriptor(bTile, startB, bits(rowsB, atomB, tb));
  auto offsetB = [&](int64_t n0, int64_t kk) { return corner(rowsB, atomB, tb, n0, kk * 16); };

  Type f32 = b.getF32Type();
  bool bf16 = aType.getElementType().isBF16();
  auto type =
      NVVM::WGMMATypesAttr::get(context, bf16 ? NVVM::WGMMATypes::bf16 : NVVM::WGMMATypes::f16);
  auto f32Type = NVVM::WGMMATypesAttr::get(context, NVVM::WGMMATypes::f32);
  auto one = NVVM::WGMMAScaleInAttr::get(context, NVVM::WGMMAScaleIn::one);
  auto layoutA =
      NVVM::MMALayoutAttr::get(context, ta ? NVVM::MMALayout::col : NVVM::MMALayout::row);
  auto layoutB =
      NVVM::MMALayoutAttr::get(context, tb ? NVVM::MMALayout::col : NVVM::MMALayout::row);

  // One accumulator struct per (block, chunk), slots in wgmma register order.
  auto chunks = columnChunks(columns);
  struct Accumulator {
    int64_t block, n0, width, firstSlot;
    Value value;
  };
  SmallVector<Accumulator> accumulators;
  for (int64_t block = 0; block < cl.tilesM(); ++block)
    for (auto [n0, width] : chunks) {
      auto structType =
          LLVM::LLVMStructType::getLiteral(context, SmallVector<Type>(width / 2, f32));
      Value value = LLVM::UndefOp::create(b, loc, structType);
      int64_t firstSlot = (block * cl.tilesN() + n0 / 8) * 4;
      if (!op.getClearAccum())
        for (int64_t i = 0; i < width / 2; ++i)
          value = LLVM::InsertValueOp::create(
              b, loc, value,
              memref::LoadOp::create(b, loc, acc.storage, ValueRange{index(b, loc, firstSlot + i)}),
              i);
      accumulators.push_back({block, n0, width, firstSlot, value});
    }
  // Every descriptor before the batch: nothing but wgmma between the fence
  // and the wait (ptxas injects a warpgroup.arrive otherwise, C7519).
  struct Step {
    Accumulator *accumulator;
    Value descA, descB;
    bool first;
    SmallVector<Value, 4> registersA; // RS: a0..a3 (pairs of 16-bit elements)
  };
  SmallVector<Step> steps;
  for (int64_t kk = 0; kk < k / 16; ++kk)
    for (Accumulator &accumulator : accumulators) {
      Step step{&accumulator,
                fromRegisters ? Value() : advanced(descA, offsetA(accumulator.block, kk)),
                advanced(descB, offsetB(accumulator.n0, kk)),
                kk == 0,
                {}};
      if (fromRegisters)
        step.registersA = wgmmaRegistersA(loc, registersA->second, accumulator.block, kk);
      steps.push_back(std::move(step));
    }

  bool inFlight = wgmmaInFlight.contains(op);
  // Generic writes to the operand tiles reach the async proxy, then wgmma
  // (unless the gemm's pipelined loop has made them visible).
  if (!inFlight && !wgmmaOperandsPublished.contains(op)) {
    fenceProxyAsync(loc);
    barrier(loc);
  }
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  for (const Step &step : steps) {
    Accumulator &accumulator = *step.accumulator;
    auto scaleD = NVVM::WGMMAScaleOutAttr::get(context, op.getClearAccum() && step.first
                                                            ? NVVM::WGMMAScaleOut::zero
                                                            : NVVM::WGMMAScaleOut::one);
    if (fromRegisters) {
      accumulator.value =
          wgmmaRegistersAAsync(loc, accumulator.value, step.registersA, step.descB,
                               accumulator.width, bf16, !tb, !(op.getClearAccum() && step.first));
      continue;
    }
    accumulator.value =
        NVVM::WgmmaMmaAsyncOp::create(
            b, loc, accumulator.value.getType(), accumulator.value, step.descA, step.descB,
            NVVM::MMAShapeAttr::get(context, 64, accumulator.width, 16), type, type, f32Type,
            scaleD, one, one, layoutA, layoutB, /*satfinite=*/nullptr)
            .getResult();
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  InFlightGemm gemm{loc, op->getBlock(), {c}, {bTile}, acc.storage, {}};
  if (fromRegisters) // wgmma reads A's registers while it runs, too
    gemm.touched.push_back(a);
  else
    gemm.reads.push_back(a);
  for (const Accumulator &accumulator : accumulators)
    gemm.results.push_back({accumulator.firstSlot, accumulator.width, accumulator.value});
  if (op.getWgWaitAttr().getInt() == -1) {
    if (inFlight)
      return op.emitOpError("wg_wait = -1 in a pipelined loop that already keeps its gemms in "
                            "flight (tl-plan-pipelines)");
    inFlightGemms.push_back(std::move(gemm));
  } else {
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, b.getI64IntegerAttr(inFlight ? 1 : 0));
    storeWgmmaResults(gemm);
  }
  rewriter.eraseOp(op);
  return success();
}

void KernelLowering::storeWgmmaResults(const InFlightGemm &gemm) {
  auto &b = rewriter;
  for (const InFlightGemm::Result &result : gemm.results)
    for (int64_t i = 0; i < result.width / 2; ++i)
      memref::StoreOp::create(b, gemm.loc,
                              LLVM::ExtractValueOp::create(b, gemm.loc, result.value, i),
                              gemm.storage, ValueRange{index(b, gemm.loc, result.firstSlot + i)});
}

LogicalResult KernelLowering::lowerWaitWgmma(WaitWgmmaOp op) {
  int64_t pending = op.getPendingAttr().getInt();
  int64_t done = static_cast<int64_t>(inFlightGemms.size()) - pending;
  if (done > 0) {
    for (const InFlightGemm &gemm : ArrayRef(inFlightGemms).take_front(done))
      if (gemm.block != op->getBlock()) {
        InFlightDiagnostic error =
            op.emitOpError("waits for a gemm left in flight in another block");
        error.attachNote(gemm.loc) << "the gemm left in flight (wg_wait = -1)";
        return error;
      }
    NVVM::WgmmaWaitGroupSyncOp::create(rewriter, op.getLoc(), rewriter.getI64IntegerAttr(pending));
    for (const InFlightGemm &gemm : ArrayRef(inFlightGemms).take_front(done))
      storeWgmmaResults(gemm);
    inFlightGemms.erase(inFlightGemms.begin(), inFlightGemms.begin() + done);
  }
  rewriter.eraseOp(op); // nothing in flight (mma.sync, or all waited for): nothing to do
  return success();
}

LogicalResult KernelLowering::checkWhileInFlight(Operation *op) {
  if (inFlightGemms.empty() || isa<WaitWgmmaOp>(op))
    return success();
  const InFlightGemm &first = inFlightGemms.front();
  auto fail = [&](const Twine &why) {
    InFlightDiagnostic error = op->emitOpError(why);
    error.attachNote(first.loc) << "the gemm left in flight (wg_wait = -1)";
    return error;
  };
  WalkResult walk = op->walk([&](Operation *inner) {
    for (const InFlightGemm &gemm : inFlightGemms)
      for (Value operand : inner->getOperands())
        if (llvm::is_contained(gemm.touched, operand))
          return WalkResult::interrupt();
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return fail("touches a fragment of a gemm still in flight: wait_wgmma first");
  // Register work on other fragments, more gemms, and element writes (in
  // parallel loops or not) to shared bytes no gemm in flight reads (the
  // staged backward's P^T while dP^T runs; a tile may share bytes with one
  // whose last use is such a gemm, so the test is on bytes, not tiles).
  // (A tl.pingpong's gemms are checked one by one as they are lowered.)
  if (Operation *write = writeToSharedReadInFlight(op)) {
    InFlightDiagnostic error =
        write->emitOpError("writes shared memory that a gemm in flight reads: wait_wgmma first");
    error.attachNote(first.loc) << "the gemm left in flight (wg_wait = -1)";
    return error;
  }
  bool allowed =
      isa<GemmOp, PingpongOp, AllocFragmentOp, AllocLocalOp, AllocSharedOp, ParallelOp>(op);
  if (auto reduce = dyn_cast<ReduceOp>(op))
    allowed = fragments.count(reduce.getSrc()) && fragments.count(reduce.getDst()) &&
              fragments.find(reduce.getSrc())->second.layout.kind != FragmentLayout::Kind::Row;
  // A copy from a fragment to shared bytes no gemm in flight reads (dQ's
  // tile while dV's and dK's gemms run: the staged backward's dq_first);
  // a tile added into global memory (gemms read shared memory, write
  // registers).
  if (auto copy = dyn_cast<CopyOp>(op)) {
    Value dst = copy.getDst();
    allowed = fragments.count(copy.getSrc()) &&
              (fragments.count(dst) || (isShared(dst) && !readInFlight(dst)));
  }
  if (auto add = dyn_cast<AtomicAddTileOp>(op))
    allowed = isGlobal(add.getDst());
  // A turn (the deterministic backward's dQ adds): its body's ops are
  // checked here as they are lowered.
  if (isa<InTurnOp>(op))
    allowed = true;
  if (auto fill = dyn_cast<FillOp>(op))
    allowed = fragments.count(fill.getBuffer());
  if (!allowed && op->getDialect() == op->getContext()->getLoadedDialect<TLDialect>())
    return fail("runs while a gemm is in flight; only register work on other fragments, writes "
                "to shared bytes no gemm in flight reads, tile adds into global memory and more "
                "gemms may (wait_wgmma first)");
  return success();
}

Operation *KernelLowering::writeToSharedReadInFlight(Operation *op) {
  Operation *found = nullptr;
  op->walk([&](Operation *store) {
    Value buffer;
    if (auto s = dyn_cast<memref::StoreOp>(store))
      buffer = s.getMemRef();
    else if (auto a = dyn_cast<AtomicAddOp>(store))
      buffer = a.getDst();
    if (!found && buffer && isShared(buffer) && readInFlight(buffer))
      found = store;
  });
  return found;
}

bool KernelLowering::readInFlight(Value buffer) {
  auto written = sharedBytesOf(buffer);
  for (const InFlightGemm &gemm : inFlightGemms)
    for (Value read : gemm.reads) {
      auto bytes = sharedBytesOf(read);
      if (!written || !bytes || ((*written)[0] < (*bytes)[1] && (*bytes)[0] < (*written)[1]))
        return true;
    }
  return false;
}

SmallVector<Value, 4> KernelLowering::wgmmaRegistersA(Location loc, const Fragment &a,
                                                      int64_t block, int64_t kk) {
  // Elements (block, 8-column tiles 2kk and 2kk + 1) are 8 consecutive slots
  // in wgmma register order: (g, 2t..2t+1), (g+8, ..), (g, 8+2t..), (g+8, ..).
  auto &b = rewriter;
  int64_t first = (block * a.layout.tilesN() + 2 * kk) * 4;
  Type element = cast<MemRefType>(a.storage.getType()).getElementType();
  SmallVector<Value, 4> registers;
  for (int64_t r = 0; r < 4; ++r) {
    Value pair = vector::LoadOp::create(b, loc, VectorType::get({2}, element), a.storage,
                                        ValueRange{index(b, loc, first + 2 * r)});
    registers.push_back(LLVM::BitcastOp::create(b, loc, b.getI32Type(), pair));
  }
  return registers;
}

Value KernelLowering::wgmmaRegistersAAsync(Location loc, Value accumulator, ArrayRef<Value> a,
                                           Value descB, int64_t width, bool bf16, bool transB,
                                           bool scaleD) {
  // MLIR's NVVM dialect has no wgmma with A in registers: the PTX, as the
  // dialect writes its shared-memory form, with a0..a3 for the A descriptor.
  auto &b = rewriter;
  int64_t n = width / 2;
  std::string type = bf16 ? "bf16" : "f16";
  std::string text = "{\n.reg .pred p;\nsetp.ne.b32 p, " + std::to_string(scaleD ? 1 : 0) +
                     ", 0;\nwgmma.mma_async.sync.aligned.m64n" + std::to_string(width) +
                     "k16.f32." + type + "." + type + " {";
  std::string constraints;
  for (int64_t i = 0; i < n; ++i) {
    text += (i ? ", $" : "$") + std::to_string(i);
    constraints += (i ? ",=f" : "=f");
  }
  text += "}, {$" + std::to_string(n) + ", $" + std::to_string(n + 1) + ", $" +
          std::to_string(n + 2) + ", $" + std::to_string(n + 3) + "}, $" + std::to_string(n + 4) +
          ", p, 1, 1, " + std::to_string(transB ? 1 : 0) + ";\n}\n";
  SmallVector<Value> operands;
  for (Value r : a) {
    operands.push_back(r);
    constraints += ",r";
  }
  operands.push_back(descB);
  constraints += ",l";
  for (int64_t i = 0; i < n; ++i) { // the accumulators in, tied to the outputs
    operands.push_back(LLVM::ExtractValueOp::create(b, loc, accumulator, i));
    constraints += "," + std::to_string(i);
  }
  return LLVM::InlineAsmOp::create(
             b, loc, accumulator.getType(), operands, text, constraints,
             /*has_side_effects=*/true, /*is_align_stack=*/false, LLVM::TailCallKind::None,
             LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
             /*operand_attrs=*/ArrayAttr())
      .getResult(0);
}

} // namespace tl::gpu_lowering
