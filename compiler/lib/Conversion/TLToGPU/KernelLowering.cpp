//===- KernelLowering.cpp - KernelLowering: the walk, tiles, loops --------===//
//
// The kernel-wide steps (layouts, shared tile placement, swizzles, the walk
// over the body, barrier elision) and the helpers every op's lowering uses
// (thread loops, element loads and stores, Mma bases). The ops' lowerings
// are in Lower*.cpp.
//
//===----------------------------------------------------------------------===//
#include "KernelLowering.h"

#include "llvm/Support/FormatVariadic.h"

namespace tl::gpu_lowering {

LogicalResult KernelLowering::run() {
  Block &entry = func.getBody().front();
  rewriter.setInsertionPointToStart(&entry);
  Location loc = func.getLoc();
  tid = gpu::ThreadIdOp::create(rewriter, loc, gpu::Dimension::x);
  sharedBase = gpu::DynamicSharedMemoryOp::create(
      rewriter, loc,
      MemRefType::get({ShapedType::kDynamic}, rewriter.getI8Type(), MemRefLayoutAttrInterface(),
                      gpu::AddressSpaceAttr::get(func.getContext(), gpu::AddressSpace::Workgroup)));
  if (failed(readPlans()))
    return failure();
  bool mma = llvm::any_of(
      layouts_, [](auto &entry) { return entry.second.kind != FragmentLayout::Kind::Row; });
  // Shared tiles to swizzle: the ones annotated so and, in an Mma kernel, the
  // gemm operands (ldmatrix then reads 8 rows from 8 bank groups; the
  // address math costs a lane address per operand, see ldmatrixAddress); in
  // the swizzle-atom layout: wgmma operands and the tiles of TMA copies.
  func.walk([&](Operation *op) {
    if (auto annotate = dyn_cast<AnnotateLayoutOp>(op);
        annotate && isa<SwizzleLayoutAttr>(annotate.getLayout()))
      swizzleRequests.insert(annotate.getBuffer());
    if (auto tile = dyn_cast<AllocSharedOp>(op); tile && takesAtomLayout(tile))
      wgmmaRequests.insert(tile.getResult());
    if (auto copy = dyn_cast<CopyOp>(op);
        (isa<AtomicAddTileOp>(op) ||
         (copy &&
          getMemoryScope(cast<MemRefType>(copy.getDst().getType())) == MemoryScope::global)) &&
        tlDialect(op).getTmaCopyAttrHelper().isAttrPresent(op))
      bulkWrites = true;
    if (auto gemm = dyn_cast<GemmOp>(op); gemm && mma && !layouts_.lookup(gemm.getC()).warpgroup) {
      swizzleRequests.insert(gemm.getA());
      swizzleRequests.insert(gemm.getB());
    }
  });
  if (mma) {
    Value warp = arith::DivUIOp::create(rewriter, loc, tid, index(rewriter, loc, 32));
    lane = arith::RemUIOp::create(rewriter, loc, tid, index(rewriter, loc, 32));
    warpId = warp;
  }
  if (failed(lowerBlock(entry)))
    return failure();
  if (!inFlightGemms.empty())
    return emitError(inFlightGemms.front().loc,
                     "gemm left in flight (wg_wait = -1) with no wait_wgmma after it in its block");
  if (!pendingTmaLoads.empty()) // the block's terminator waits for them
    return emitError(loc, "internal: a TMA load was never waited for");
  if (!reduceSources.empty()) {
    // The shared memory outlives no block: thread 0 waits for its reduce-add
    // boxes (all of them, the last included) before the kernel ends.
    rewriter.setInsertionPoint(entry.getTerminator());
    auto issuer = scf::IfOp::create(rewriter, loc,
                                    arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq,
                                                          tid, index(rewriter, loc, 0)),
                                    /*withElse=*/false);
    rewriter.setInsertionPoint(issuer.thenBlock()->getTerminator());
    NVVM::CpAsyncBulkWaitGroupOp::create(rewriter, loc, rewriter.getI32IntegerAttr(0),
                                         /*read=*/nullptr);
  }
  for (auto &[old, fragment] : fragments) {
    if (!old.use_empty())
      return emitError(old.getLoc(), "fragment still used after lowering");
    rewriter.eraseOp(old.getDefiningOp());
  }
  // Elements the author reads or writes directly of a tensor with an
  // index-map layout: through the layout (copies and atomics already are).
  resolveElementAccesses(rewriter, func, layouts);
  if (failed(swizzleAccesses()))
    return failure();
  if (producer && failed(separateConsumers()))
    return failure();
  // The thread index's bound (the block size, a producer warpgroup's
  // included) lets integer range analysis narrow the index math derived
  // from it to 32 bits: per-element row and column indices (a causal mask's)
  // that LLVM hoists out of a loop then hold one register each, not two.
  // An op attribute, not the function's known block size: that one becomes
  // .maxntid, which moved ptxas's allocation of the backward into spills.
  int64_t blockSize = tlDialect(func).getThreadsAttrHelper().getAttr(func).getInt();
  cast<gpu::ThreadIdOp>(tid.getDefiningOp()).setUpperBoundAttr(rewriter.getIndexAttr(blockSize));
  // Register allocas (fragments, locals) before the first branch: LLVM
  // promotes only those of its entry block, which a branch before them (an
  // mbarrier initialisation, a guarded copy) would end.
  Operation *branch = nullptr;
  for (Operation &op : llvm::make_early_inc_range(entry)) {
    if (!branch && op.getNumRegions() != 0)
      branch = &op;
    else if (branch && isa<memref::AllocaOp>(op) && op.getNumOperands() == 0)
      op.moveBefore(branch);
  }
  tlDialect(func).getSharedBytesAttrHelper().setAttr(func, rewriter.getI64IntegerAttr(sharedBytes));
  if (!tensorMaps.empty())
    tlDialect(func).getTensorMapsAttrHelper().setAttr(
        func, ArrayAttr::get(func.getContext(), tensorMaps));
  return checkSharedLimit();
}

LogicalResult KernelLowering::checkSharedLimit() {
  if (limits.sharedBytes <= 0 || sharedBytes <= limits.sharedBytes)
    return success();
  // Blame the tile the limit cuts through (the author's before lowering
  // scratch, such as mbarriers, placed after it); else the one ending last
  // (first placed among equals).
  auto endOf = [](const PlacedTile &tile) { return tile.offset + tile.bytes * tile.copies; };
  const PlacedTile *last = &placedTiles.front();
  for (const PlacedTile &tile : placedTiles)
    if (endOf(tile) > endOf(*last))
      last = &tile;
  for (const PlacedTile &tile : placedTiles)
    if (tile.offset < limits.sharedBytes && endOf(tile) > limits.sharedBytes) {
      last = &tile;
      break;
    }
  auto kib = [](int64_t bytes) { return llvm::formatv("{0:F1} KiB", bytes / 1024.0).str(); };
  std::string tile;
  llvm::raw_string_ostream os(tile);
  for (auto [d, extent] : llvm::enumerate(last->type.getShape()))
    os << (d ? "x" : "") << extent;
  os << "x" << last->type.getElementType();
  int64_t end = last->offset + last->bytes * last->copies;
  InFlightDiagnostic diag = emitError(last->loc)
                            << "the kernel needs " << sharedBytes << " bytes (" << kib(sharedBytes)
                            << ") of shared memory, more than the " << limits.sharedBytes << " ("
                            << kib(limits.sharedBytes) << ") a block has on " << limits.target
                            << ": this " << tile << " tile";
  if (last->copies > 1)
    diag << " (" << last->copies << " rotating copies for a pipelined loop)";
  diag << " takes bytes [" << last->offset << ", " << end << ")";
  return diag;
}

bool KernelLowering::isGlobal(Value v) const {
  auto arg = dyn_cast<BlockArgument>(v);
  return arg && arg.getOwner()->getParentOp() == funcOp;
}

LogicalResult KernelLowering::readPlans() {
  TLDialect &tl = tlDialect(func);
  WalkResult result = func.walk([&](Operation *op) {
    if (auto alloc = dyn_cast<AllocFragmentOp>(op)) {
      FailureOr<FragmentLayout> layout = attachedLayout(alloc, threads);
      if (failed(layout))
        return WalkResult::interrupt();
      layouts_[alloc.getResult()] = *layout;
    }
    return WalkResult::advance();
  });
  if (result.wasInterrupted())
    return failure();
  pipelines = readPipelinePlans(func);
  result = func.walk([&](AllocSharedOp alloc) {
    IntegerAttr offset = tl.getOffsetAttrHelper().getAttr(alloc);
    if (!offset) {
      alloc.emitOpError("has no place in shared memory: run tl-plan-shared-memory before the "
                        "lowering");
      return WalkResult::interrupt();
    }
    MemRefType type = alloc.getType();
    auto copies = pipelines.buffers.find(alloc.getResult());
    int64_t bytes = type.getNumElements() * type.getElementTypeBitWidth() / 8 *
                    (copies == pipelines.buffers.end() ? 1 : copies->second);
    plannedOffsets[alloc.getResult()] = offset.getInt();
    sharedBytes = std::max(sharedBytes, offset.getInt() + bytes);
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

Value KernelLowering::allocateShared(Location loc, MemRefType type, bool swizzle, int64_t copies,
                                     std::optional<int64_t> planned, int64_t wgmmaAtom) {
  int64_t bytes = product(type.getShape()) * type.getElementTypeBitWidth() / 8;
  int64_t offset;
  if (planned) {
    offset = *planned;
  } else {
    offset = sharedBytes = (sharedBytes + 127) / 128 * 128;
    sharedBytes += bytes * copies;
  }
  placedTiles.push_back({loc, type, offset, bytes, copies});
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointAfter(sharedBase.getDefiningOp());
  swizzle = swizzle && swizzlable(type) && !wgmmaAtom;
  Value view = sharedView(loc, type, index(rewriter, loc, offset), swizzle,
                          {offset, offset + bytes * copies}, wgmmaAtom);
  if (copies > 1)
    rotating[view] = {offset, bytes, copies, swizzle, wgmmaAtom};
  return view;
}

bool KernelLowering::swizzlable(MemRefType type) {
  return type.getRank() == 2 && type.getElementTypeBitWidth() == 16 &&
         (type.getDimSize(1) * 2) % 128 == 0 && type.getDimSize(0) % 8 == 0;
}

Value KernelLowering::sharedView(Location loc, MemRefType type, Value byteOffset, bool swizzle,
                                 std::array<int64_t, 2> range, int64_t wgmmaAtom) {
  auto viewType =
      MemRefType::get(type.getShape(), type.getElementType(), MemRefLayoutAttrInterface(),
                      gpu::AddressSpaceAttr::get(func.getContext(), gpu::AddressSpace::Workgroup));
  Value view =
      memref::ViewOp::create(rewriter, loc, viewType, sharedBase, byteOffset, ValueRange{});
  tlDialect(func).getSharedRangeAttrHelper().setAttr(view.getDefiningOp(),
                                                     rewriter.getDenseI64ArrayAttr(range));
  shared.insert(view);
  if (swizzle)
    swizzled.insert(view);
  if (wgmmaAtom)
    wgmmaAtoms[view] = wgmmaAtom;
  return view;
}

Value KernelLowering::stageView(Location loc, Value tile, Value k, Value start) {
  const Rotating &r = rotating.find(tile)->second;
  Value stage =
      arith::RemUIOp::create(rewriter, loc, arith::SubIOp::create(rewriter, loc, k, start),
                             index(rewriter, loc, r.copies));
  Value offset = arith::AddIOp::create(
      rewriter, loc, index(rewriter, loc, r.offset),
      arith::MulIOp::create(rewriter, loc, stage, index(rewriter, loc, r.bytes)));
  return sharedView(loc, cast<MemRefType>(tile.getType()), offset, r.swizzle,
                    {r.offset, r.offset + r.bytes * r.copies}, r.wgmmaAtom);
}

Value KernelLowering::swizzleColumn(OpBuilder &b, Location loc, Value row, Value col) {
  Value phase = arith::MulIOp::create(b, loc, arith::RemUIOp::create(b, loc, row, index(b, loc, 8)),
                                      index(b, loc, 8));
  return arith::XOrIOp::create(b, loc, col, phase);
}

Value KernelLowering::wgmmaElement(OpBuilder &b, Location loc, Value tile, Value row, Value col) {
  auto type = cast<MemRefType>(tile.getType());
  int64_t bits = type.getElementTypeBitWidth();
  // Elements per block row and per 16-byte chunk (16-bit operands; 32-bit
  // tiles of TMA reduce-add boxes).
  int64_t atom = wgmmaAtoms.lookup(tile), perRow = atom * 8 / bits, perChunk = 128 / bits;
  Value block = arith::DivUIOp::create(b, loc, col, index(b, loc, perRow));
  Value within = arith::RemUIOp::create(b, loc, col, index(b, loc, perRow));
  // chunk ^ ((row * atom / 128) & (atom / 16 - 1)), in elements
  Value phase =
      arith::AndIOp::create(b, loc, arith::DivUIOp::create(b, loc, row, index(b, loc, 128 / atom)),
                            index(b, loc, atom / 16 - 1));
  Value swizzledWithin = arith::XOrIOp::create(
      b, loc, within, arith::MulIOp::create(b, loc, phase, index(b, loc, perChunk)));
  Value blockStart =
      arith::MulIOp::create(b, loc, block, index(b, loc, type.getDimSize(0) * perRow));
  Value rowStart = arith::MulIOp::create(b, loc, row, index(b, loc, perRow));
  return arith::AddIOp::create(b, loc, arith::AddIOp::create(b, loc, blockStart, rowStart),
                               swizzledWithin);
}

FailureOr<SmallVector<std::pair<Operation *, unsigned>>>
KernelLowering::tileAccesses(Value tile, StringRef what) {
  SmallVector<std::pair<Operation *, unsigned>> accesses;
  for (OpOperand &use : tile.getUses()) {
    Operation *user = use.getOwner();
    if (isa<memref::LoadOp, vector::LoadOp>(user))
      accesses.push_back({user, 1});
    else if (isa<memref::StoreOp, vector::StoreOp>(user) && use.getOperandNumber() == 1)
      accesses.push_back({user, 2});
    else if (!isa<memref::ExtractAlignedPointerAsIndexOp>(user))
      return user->emitOpError() << "uses a " << what << " in a way the GPU lowering cannot place";
  }
  return accesses;
}

LogicalResult KernelLowering::swizzleAccesses() {
  for (auto [tile, atom] : wgmmaAtoms) {
    auto accesses = tileAccesses(tile, "wgmma operand tile");
    if (failed(accesses))
      return failure();
    int64_t cols = cast<MemRefType>(tile.getType()).getDimSize(1);
    for (auto [user, row] : *accesses) {
      rewriter.setInsertionPoint(user);
      Location loc = user->getLoc();
      Value element =
          wgmmaElement(rewriter, loc, tile, user->getOperand(row), user->getOperand(row + 1));
      user->setOperand(row,
                       arith::DivUIOp::create(rewriter, loc, element, index(rewriter, loc, cols)));
      user->setOperand(row + 1,
                       arith::RemUIOp::create(rewriter, loc, element, index(rewriter, loc, cols)));
    }
  }
  for (Value tile : swizzled) {
    auto accesses = tileAccesses(tile, "swizzled shared tile");
    if (failed(accesses))
      return failure();
    for (auto [user, row] : *accesses) {
      rewriter.setInsertionPoint(user);
      user->setOperand(row + 1, swizzleColumn(rewriter, user->getLoc(), user->getOperand(row),
                                              user->getOperand(row + 1)));
    }
  }
  return success();
}

void KernelLowering::forOwnedRows(Location loc, int64_t rows,
                                  function_ref<void(OpBuilder &, Location, Value, Value)> body,
                                  int64_t split) {
  int64_t groups = threads / split;
  int64_t perThread = (rows + groups - 1) / groups;
  auto loop = scf::ForOp::create(rewriter, loc, index(rewriter, loc, 0),
                                 index(rewriter, loc, perThread), index(rewriter, loc, 1));
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(loop.getBody()->getTerminator());
  Value r = loop.getInductionVar();
  Value first =
      split == 1
          ? tid
          : arith::DivUIOp::create(rewriter, loc, tid, index(rewriter, loc, split)).getResult();
  Value row = arith::AddIOp::create(
      rewriter, loc, first, arith::MulIOp::create(rewriter, loc, r, index(rewriter, loc, groups)));
  if (rows % groups == 0) {
    body(rewriter, loc, r, row);
    return;
  }
  Value inside = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ult, row,
                                       index(rewriter, loc, rows));
  scf::IfOp::create(rewriter, loc, inside, [&](OpBuilder &b, Location loc) {
    body(b, loc, r, row);
    scf::YieldOp::create(b, loc);
  });
}

void KernelLowering::forSpread(Location loc, ArrayRef<int64_t> extents,
                               function_ref<void(OpBuilder &, Location, ValueRange)> body) {
  int64_t total = product(extents);
  auto visit = [&](Value flat) { body(rewriter, loc, spreadCoordinates(loc, extents, flat)); };
  if (total % threads == 0 && total / threads <= kUnrolledSteps) {
    for (int64_t step = 0; step < total / threads; ++step)
      visit(add(loc, tid, step * threads));
    return;
  }
  auto loop = scf::ForOp::create(rewriter, loc, tid, index(rewriter, loc, total),
                                 index(rewriter, loc, threads));
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(loop.getBody()->getTerminator());
  visit(loop.getInductionVar());
}

void KernelLowering::forSpreadBatched(
    Location loc, ArrayRef<int64_t> extents,
    function_ref<void(OpBuilder &, Location, ArrayRef<SmallVector<Value>>)> body) {
  int64_t total = product(extents);
  int64_t steps = total % threads == 0 ? total / threads : 0;
  int64_t batch = steps && steps % kBatchedSteps == 0 ? kBatchedSteps
                  : steps && steps <= kUnrolledSteps  ? steps
                                                      : 1;
  if (batch == 1) {
    forSpread(loc, extents, [&](OpBuilder &b, Location loc, ValueRange coords) {
      body(b, loc, {SmallVector<Value>(coords)});
    });
    return;
  }
  auto visit = [&](Value first) {
    SmallVector<SmallVector<Value>> coords;
    for (int64_t step = 0; step < batch; ++step)
      coords.push_back(spreadCoordinates(loc, extents, add(loc, first, step * threads)));
    body(rewriter, loc, coords);
  };
  if (batch == steps) {
    visit(tid);
    return;
  }
  auto loop = scf::ForOp::create(rewriter, loc, tid, index(rewriter, loc, total),
                                 index(rewriter, loc, threads * batch));
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(loop.getBody()->getTerminator());
  visit(loop.getInductionVar());
}

SmallVector<Value> KernelLowering::spreadCoordinates(Location loc, ArrayRef<int64_t> extents,
                                                     Value flat) {
  SmallVector<Value> coords(extents.size());
  Value rest = flat;
  for (int d = static_cast<int>(extents.size()) - 1; d >= 0; --d) {
    Value extent = index(rewriter, loc, extents[d]);
    coords[d] = arith::RemUIOp::create(rewriter, loc, rest, extent);
    rest = arith::DivUIOp::create(rewriter, loc, rest, extent);
  }
  return coords;
}

SmallVector<Value> KernelLowering::localIndices(OpBuilder &b, Location loc, Value fragment,
                                                ValueRange indices, const Owned &owned) {
  const Fragment &f = fragments.find(fragment)->second;
  if (f.layout.kind == FragmentLayout::Kind::Row) {
    SmallVector<Value> local(indices);
    local[0] = owned.r;
    if (Value colStart = local.size() > 1 ? rowSegmentStart(b, loc, f.layout) : Value())
      local[1] = arith::SubIOp::create(b, loc, local[1], colStart);
    return local;
  }
  int64_t slot = owned.slot;
  if (owned.layout.kind == FragmentLayout::Kind::Mma &&
      f.layout.kind == FragmentLayout::Kind::MmaRow)
    slot = owned.layout.rowSlot(owned.slot);
  return {index(b, loc, slot)};
}

Value KernelLowering::load(OpBuilder &b, Location loc, Value buffer, ValueRange indices,
                           const Owned *owned) {
  if (isFragment(buffer))
    return memref::LoadOp::create(b, loc, fragments.lookup(buffer).storage,
                                  localIndices(b, loc, buffer, indices, *owned));
  if (!isGlobal(buffer))
    return memref::LoadOp::create(b, loc, buffer, indices);
  Type element = cast<MemRefType>(buffer.getType()).getElementType();
  auto guarded = scf::IfOp::create(
      b, loc, insideBuffer(b, loc, buffer, indices),
      [&](OpBuilder &b, Location loc) {
        ElementRef ref = resolveElement(b, loc, layouts, buffer, indices);
        scf::YieldOp::create(b, loc,
                             memref::LoadOp::create(b, loc, ref.memref, ref.indices).getResult());
      },
      [&](OpBuilder &b, Location loc) { scf::YieldOp::create(b, loc, zeroOf(b, loc, element)); });
  return guarded.getResult(0);
}

void KernelLowering::store(OpBuilder &b, Location loc, Value value, Value buffer,
                           ValueRange indices, const Owned *owned) {
  Type element = cast<MemRefType>(buffer.getType()).getElementType();
  if (value.getType() != element)
    value = convertFloat(b, loc, value, element);
  if (isFragment(buffer)) {
    memref::StoreOp::create(b, loc, value, fragments.lookup(buffer).storage,
                            localIndices(b, loc, buffer, indices, *owned));
    return;
  }
  if (!isGlobal(buffer)) {
    memref::StoreOp::create(b, loc, value, buffer, indices);
    return;
  }
  scf::IfOp::create(b, loc, insideBuffer(b, loc, buffer, indices), [&](OpBuilder &b, Location loc) {
    ElementRef ref = resolveElement(b, loc, layouts, buffer, indices);
    memref::StoreOp::create(b, loc, value, ref.memref, ref.indices);
    scf::YieldOp::create(b, loc);
  });
}

void KernelLowering::atomicAddGlobal(OpBuilder &b, Location loc, Value value, Value buffer,
                                     ValueRange indices) {
  scf::IfOp::create(b, loc, insideBuffer(b, loc, buffer, indices), [&](OpBuilder &b, Location loc) {
    ElementRef ref = resolveElement(b, loc, layouts, buffer, indices);
    memref::AtomicRMWOp::create(b, loc, arith::AtomicRMWKind::addf, value, ref.memref, ref.indices);
    scf::YieldOp::create(b, loc);
  });
}

Value KernelLowering::loadVector(OpBuilder &b, Location loc, VectorType type, Value buffer,
                                 ValueRange indices, llvm::MaybeAlign alignment) {
  auto loadFrom = [&](OpBuilder &b, Location loc) -> Value {
    return vector::LoadOp::create(b, loc, type, buffer, indices, false, alignment);
  };
  if (!isGlobal(buffer))
    return loadFrom(b, loc);
  return scf::IfOp::create(
             b, loc, insideBuffer(b, loc, buffer, indices),
             [&](OpBuilder &b, Location loc) { scf::YieldOp::create(b, loc, loadFrom(b, loc)); },
             [&](OpBuilder &b, Location loc) {
               scf::YieldOp::create(
                   b, loc, arith::ConstantOp::create(b, loc, b.getZeroAttr(type)).getResult());
             })
      .getResult(0);
}

void KernelLowering::storeVector(OpBuilder &b, Location loc, Value vector, Value buffer,
                                 ValueRange indices, llvm::MaybeAlign alignment) {
  if (!isGlobal(buffer)) {
    vector::StoreOp::create(b, loc, vector, buffer, indices, false, alignment);
    return;
  }
  scf::IfOp::create(b, loc, insideBuffer(b, loc, buffer, indices), [&](OpBuilder &b, Location loc) {
    vector::StoreOp::create(b, loc, vector, buffer, indices, false, alignment);
    scf::YieldOp::create(b, loc);
  });
}

void KernelLowering::forOwned(
    Location loc, const FragmentLayout &layout, ArrayRef<int64_t> shape,
    function_ref<void(OpBuilder &, Location, const Owned &, ValueRange)> body) {
  if (layout.kind == FragmentLayout::Kind::Row) {
    SmallVector<int64_t> rest(shape.drop_front());
    if (!rest.empty())
      rest[0] /= layout.split;
    Value colStart = rowSegmentStart(rewriter, loc, layout);
    forOwnedRows(
        loc, shape[0],
        [&](OpBuilder &b, Location loc, Value r, Value row) {
          buildLoops(b, loc, rest, [&](OpBuilder &b, Location loc, ValueRange at) {
            SmallVector<Value> full = {row};
            full.append(at.begin(), at.end());
            if (colStart)
              full[1] = arith::AddIOp::create(b, loc, full[1], colStart);
            body(b, loc, Owned{layout, r, 0}, full);
          });
        },
        layout.split);
    return;
  }
  auto [rowBase, colBase] = mmaBases(loc, layout);
  for (int64_t slot = 0; slot < layout.count(); ++slot) {
    Owned owned{layout, Value(), slot};
    if (layout.kind == FragmentLayout::Kind::MmaRow) {
      int64_t offset = (slot / 2) * layout.tileRowStep() + (slot % 2) * 8;
      body(rewriter, loc, owned, {add(loc, rowBase, offset)});
      continue;
    }
    auto [row, col] = mmaSlotOffset(layout, slot);
    body(rewriter, loc, owned, {add(loc, rowBase, row), add(loc, colBase, col)});
  }
}

Value KernelLowering::add(Location loc, Value v, int64_t c) {
  return c ? arith::AddIOp::create(rewriter, loc, v, index(rewriter, loc, c)).getResult() : v;
}

std::pair<int64_t, int64_t> KernelLowering::mmaSlotOffset(const FragmentLayout &layout,
                                                          int64_t slot) {
  int64_t tile = slot / 4, e = slot % 4;
  return {(tile / layout.tilesN()) * layout.tileRowStep() + (e / 2) * 8,
          (tile % layout.tilesN()) * 8 + e % 2};
}

std::pair<Value, Value> KernelLowering::warpGrid(Location loc, const FragmentLayout &layout) {
  auto &b = rewriter;
  if (layout.warpgroup && layout.warpsN > 1) { // warpgroups split N: 4 warps stack along M in each
    Value group = arith::DivUIOp::create(b, loc, warpId, index(b, loc, 4));
    Value wm = arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(b, loc,
                              arith::DivUIOp::create(b, loc, group, index(b, loc, layout.warpsN)),
                              index(b, loc, 4)),
        arith::RemUIOp::create(b, loc, warpId, index(b, loc, 4)));
    return {wm, arith::RemUIOp::create(b, loc, group, index(b, loc, layout.warpsN))};
  }
  return {arith::DivUIOp::create(b, loc, warpId, index(b, loc, layout.warpsN)),
          arith::RemUIOp::create(b, loc, warpId, index(b, loc, layout.warpsN))};
}

std::pair<Value, Value> KernelLowering::mmaBases(Location loc, const FragmentLayout &layout) {
  auto &b = rewriter;
  auto [wm, wn] = warpGrid(loc, layout);
  Value quad = arith::DivUIOp::create(b, loc, lane, index(b, loc, 4));
  Value pair = arith::MulIOp::create(b, loc, arith::RemUIOp::create(b, loc, lane, index(b, loc, 4)),
                                     index(b, loc, 2));
  Value rowBase = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, wm, index(b, loc, layout.warpRowStep())), quad);
  Value colBase =
      layout.kind == FragmentLayout::Kind::MmaRow
          ? Value()
          : arith::AddIOp::create(
                b, loc,
                arith::MulIOp::create(b, loc, wn, index(b, loc, layout.cols / layout.warpsN)), pair)
                .getResult();
  return {rowBase, colBase};
}

Value KernelLowering::rowSegmentStart(OpBuilder &b, Location loc, const FragmentLayout &layout) {
  if (layout.kind != FragmentLayout::Kind::Row || layout.split == 1 || layout.cols == 0)
    return Value();
  return arith::MulIOp::create(b, loc,
                               arith::RemUIOp::create(b, loc, tid, index(b, loc, layout.split)),
                               index(b, loc, layout.colsPerThread()));
}

Value KernelLowering::rowWriter(Location loc, const FragmentLayout &layout) {
  auto &b = rewriter;
  if (layout.kind == FragmentLayout::Kind::Row)
    return layout.split > 1 && layout.cols == 0
               ? arith::CmpIOp::create(
                     b, loc, arith::CmpIPredicate::eq,
                     arith::RemUIOp::create(b, loc, tid, index(b, loc, layout.split)),
                     index(b, loc, 0))
                     .getResult()
               : Value();
  if (layout.kind != FragmentLayout::Kind::MmaRow)
    return Value();
  Value firstOfQuad = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                            arith::RemUIOp::create(b, loc, lane, index(b, loc, 4)),
                                            index(b, loc, 0));
  Value firstColumnWarp = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                                warpGrid(loc, layout).second, index(b, loc, 0));
  return arith::AndIOp::create(b, loc, firstOfQuad, firstColumnWarp);
}

LogicalResult KernelLowering::lowerBlock(Block &block) {
  return block.empty() ? success() : lowerBlockFrom(block, &block.front());
}

LogicalResult KernelLowering::lowerOp(Operation *op) {
  if (failed(checkWhileInFlight(op)))
    return failure();
  waitTmaLoadsBefore(op);
  rewriter.setInsertionPoint(op);
  Location loc = op->getLoc();
  if (auto alloc = dyn_cast<AllocSharedOp>(op)) {
    auto copies = pipelines.buffers.find(alloc.getResult());
    bool reduceSource = llvm::any_of(alloc->getUsers(), [&](Operation *user) {
      auto add = dyn_cast<AtomicAddTileOp>(user);
      return add && add.getSrc() == alloc.getResult() &&
             tlDialect(add).getTmaCopyAttrHelper().isAttrPresent(add) &&
             !tlDialect(add).getProducerReduceAttrHelper().isAttrPresent(add);
    });
    Value view = allocateShared(
        loc, alloc.getType(), swizzleRequests.count(alloc.getResult()),
        copies == pipelines.buffers.end() ? 1 : copies->second,
        plannedOffsets.lookup(alloc.getResult()),
        wgmmaRequests.count(alloc.getResult()) ? wgmmaAtomBytes(alloc.getType()) : 0);
    rewriter.replaceOp(alloc, view);
    if (reduceSource)
      reduceSources.insert(view);
    return success();
  }
  if (auto alloc = dyn_cast<AllocFragmentOp>(op)) {
    MemRefType type = alloc.getType();
    FragmentLayout layout = layouts_.lookup(alloc.getResult());
    SmallVector<int64_t> shape(type.getShape());
    if (layout.kind == FragmentLayout::Kind::Row) {
      int64_t groups = layout.rowGroups(threads);
      shape[0] = (shape[0] + groups - 1) / groups;
      if (shape.size() > 1)
        shape[1] /= layout.split;
    } else
      shape = {layout.count()};
    Value storage =
        memref::AllocaOp::create(rewriter, loc, MemRefType::get(shape, type.getElementType()));
    fragments[alloc.getResult()] = {storage, layout};
    return success();
  }
  if (auto alloc = dyn_cast<AllocLocalOp>(op)) {
    MemRefType type = alloc.getType();
    Value storage = memref::AllocaOp::create(
        rewriter, loc, MemRefType::get(type.getShape(), type.getElementType()));
    rewriter.replaceOp(alloc, storage);
    locals.insert(storage);
    return success();
  }
  if (isa<AnnotateLayoutOp>(op)) {
    rewriter.eraseOp(op);
    return success();
  }
  if (auto fill = dyn_cast<FillOp>(op))
    return lowerFill(fill);
  if (auto copy = dyn_cast<CopyOp>(op))
    return lowerCopy(copy);
  if (auto add = dyn_cast<AtomicAddTileOp>(op))
    return lowerAtomicAddTile(add);
  if (auto gemm = dyn_cast<GemmOp>(op))
    return lowerGemm(gemm);
  if (auto wait = dyn_cast<WaitWgmmaOp>(op))
    return lowerWaitWgmma(wait);
  if (auto reduce = dyn_cast<ReduceOp>(op))
    return lowerReduce(reduce);
  if (auto parallel = dyn_cast<ParallelOp>(op))
    return lowerParallel(parallel);
  if (auto pipelined = dyn_cast<PipelinedOp>(op))
    return lowerPipelined(pipelined);
  if (auto inTurn = dyn_cast<InTurnOp>(op))
    return lowerInTurn(inTurn);
  if (auto last = dyn_cast<LastToArriveOp>(op))
    return lowerLastToArrive(last);
  if (auto pingpong = dyn_cast<PingpongOp>(op))
    return lowerPingpong(pingpong);
  if (auto atomic = dyn_cast<AtomicAddOp>(op)) {
    // Outside a parallel loop: one thread does it.
    Value first = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq, tid,
                                        index(rewriter, loc, 0));
    auto guard = scf::IfOp::create(rewriter, loc, first, /*withElse=*/false);
    rewriter.moveOpBefore(atomic, guard.thenBlock()->getTerminator());
    return lowerElementOps(atomic, nullptr, {});
  }
  if (isa<memref::LoadOp, memref::StoreOp>(op)) {
    Value buffer = isa<memref::LoadOp>(op) ? cast<memref::LoadOp>(op).getMemRef()
                                           : cast<memref::StoreOp>(op).getMemRef();
    if (isFragment(buffer))
      return op->emitError("a fragment element is accessed outside a parallel "
                           "loop; the GPU lowering needs the loop to know "
                           "which thread owns it");
    return success();
  }
  if (isa<TLDialect>(op->getDialect()))
    return op->emitOpError("has no GPU lowering yet");
  for (Region &region : op->getRegions())
    for (Block &block : region)
      if (failed(lowerBlock(block)))
        return failure();
  return success();
}

} // namespace tl::gpu_lowering
