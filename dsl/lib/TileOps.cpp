//===- TileOps.cpp - the tile operators of the eDSL -----------------------===//
//
// Each function turns one TileLang-style call into one tl op (or an scf op for
// plain loops and `if`), stamped with the author's source location and
// verified on the spot, so a misuse is reported at the line that made it.
//
//===----------------------------------------------------------------------===//
#include "BuildState.h"

#include "tl/Dialect/TL/TLDialect.h"
#include "tl/dsl/TileOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/AffineMap.h"

#include <fmt/format.h>

using namespace mlir;

namespace tl::dsl {
using namespace detail;

namespace {

Buffer allocate(std::vector<std::int64_t> shape, DType dtype, Scope scope, const char *what,
                SourceLoc loc) {
  ProgramImpl &p = activeProgram(what, loc);
  Location location = toLocation(p, loc);
  MemRefType type =
      tl::getBufferType(shape, toMLIR(p.context.get(), dtype), static_cast<tl::MemoryScope>(scope));
  Operation *op = nullptr;
  switch (scope) {
  case Scope::shared:
    op = AllocSharedOp::create(p.builder, location, type);
    break;
  case Scope::fragment:
    op = AllocFragmentOp::create(p.builder, location, type);
    break;
  default:
    op = AllocLocalOp::create(p.builder, location, type);
    break;
  }
  verifyOrThrow(p, op, false);
  return wrapBuffer(op->getResult(0), fmt::format("{}@{}", toString(scope), loc.line()));
}

/// Offsets and extents of a region, one per dimension of its buffer.
struct RegionBounds {
  SmallVector<Value> offsets;
  SmallVector<int64_t> sizes;
};

RegionBounds regionBounds(ProgramImpl &p, const Region &region, Location loc, SourceLoc sourceLoc) {
  const Buffer &buffer = region.buffer();
  RegionBounds bounds;
  if (!region.subscripted()) {
    for (std::int64_t extent : buffer.shape()) {
      bounds.offsets.push_back(arith::ConstantIndexOp::create(p.builder, loc, 0));
      bounds.sizes.push_back(extent);
    }
    return bounds;
  }
  if (static_cast<std::int64_t>(region.indices().size()) != buffer.rank())
    fail(sourceLoc, fmt::format("region of '{}' gives {} subscript(s) but the "
                                "buffer has rank {}",
                                buffer.name(), region.indices().size(), buffer.rank()));
  for (auto [d, index] : llvm::enumerate(region.indices())) {
    if (index.isAll()) {
      bounds.offsets.push_back(arith::ConstantIndexOp::create(p.builder, loc, 0));
      bounds.sizes.push_back(buffer.shape()[d]);
      continue;
    }
    bounds.offsets.push_back(materialize(p, index.start(), p.builder.getIndexType(), loc));
    bounds.sizes.push_back(index.extent());
  }
  return bounds;
}

void reduce(tl::ReduceKind kind, const Buffer &src, const Buffer &dst, int dim, bool clear,
            const char *what, SourceLoc loc) {
  ProgramImpl &p = activeProgram(what, loc);
  Location location = toLocation(p, loc);
  std::int64_t normalized = dim < 0 ? dim + src.rank() : dim;
  auto op = ReduceOp::create(p.builder, location, kind, unwrap(src), unwrap(dst),
                             static_cast<uint64_t>(normalized), clear);
  verifyOrThrow(p, op, false);
}

//===----------------------------------------------------------------------===//
// Index-map layouts
//===----------------------------------------------------------------------===//

struct Interval {
  int64_t lo, hi;
};

AffineExpr toAffine(const IndexExpr &e, MLIRContext *ctx, SourceLoc loc) {
  switch (e.kind()) {
  case IndexExpr::Kind::Dim:
    return getAffineDimExpr(e.value(), ctx);
  case IndexExpr::Kind::Constant:
    return getAffineConstantExpr(e.value(), ctx);
  default:
    break;
  }
  AffineExpr lhs = toAffine(e.lhs(), ctx, loc), rhs = toAffine(e.rhs(), ctx, loc);
  switch (e.kind()) {
  case IndexExpr::Kind::Add:
    return lhs + rhs;
  case IndexExpr::Kind::Mul:
    if (!lhs.isSymbolicOrConstant() && !rhs.isSymbolicOrConstant())
      fail(loc, "an index-map layout may multiply an index by a constant only");
    return lhs * rhs;
  case IndexExpr::Kind::FloorDiv:
  case IndexExpr::Kind::Mod: {
    auto c = dyn_cast<AffineConstantExpr>(rhs);
    if (!c || c.getValue() <= 0)
      fail(loc, "an index-map layout may divide only by a positive constant");
    return e.kind() == IndexExpr::Kind::Mod ? lhs % rhs : lhs.floorDiv(rhs);
  }
  default:
    return lhs;
  }
}

/// Range of an affine expression when dimension d ranges over [0, shape[d]).
Interval rangeOf(AffineExpr e, ArrayRef<int64_t> shape) {
  if (auto d = dyn_cast<AffineDimExpr>(e)) {
    int64_t extent = d.getPosition() < shape.size() ? shape[d.getPosition()] : 1;
    return {0, extent - 1};
  }
  if (auto c = dyn_cast<AffineConstantExpr>(e))
    return {c.getValue(), c.getValue()};
  auto bin = cast<AffineBinaryOpExpr>(e);
  Interval a = rangeOf(bin.getLHS(), shape), b = rangeOf(bin.getRHS(), shape);
  auto floorDiv = [](int64_t x, int64_t y) { return x >= 0 ? x / y : -((-x + y - 1) / y); };
  switch (e.getKind()) {
  case AffineExprKind::Add:
    return {a.lo + b.lo, a.hi + b.hi};
  case AffineExprKind::Mul: {
    int64_t p[] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi};
    return {*std::min_element(p, p + 4), *std::max_element(p, p + 4)};
  }
  case AffineExprKind::FloorDiv:
    return {floorDiv(a.lo, b.lo), floorDiv(a.hi, b.lo)};
  case AffineExprKind::Mod:
    if (a.lo >= 0 && floorDiv(a.lo, b.lo) == floorDiv(a.hi, b.lo))
      return {a.lo % b.lo, a.hi % b.lo};
    return {0, b.lo - 1};
  default:
    return {0, 0};
  }
}

Attribute layoutAttr(ProgramImpl &p, const Buffer &buffer, const Layout &layout, SourceLoc loc) {
  MLIRContext *ctx = p.context.get();
  if (layout.kind() == Layout::Kind::Swizzled)
    return tl::SwizzleLayoutAttr::get(ctx);
  SmallVector<AffineExpr> results;
  SmallVector<int64_t> physicalShape;
  for (const IndexExpr &result : layout.results()) {
    AffineExpr e = toAffine(result, ctx, loc);
    Interval range = rangeOf(e, buffer.shape());
    if (range.lo < 0)
      fail(loc, "an index-map layout result can be negative");
    results.push_back(e);
    physicalShape.push_back(range.hi + 1);
  }
  AffineMap map = AffineMap::get(layout.numDims(), 0, results, ctx);
  return tl::IndexMapLayoutAttr::get(ctx, map, physicalShape);
}

/// The kernel the author's code is in.
KernelOp enclosingKernel(ProgramImpl &p) {
  Operation *kernel = p.builder.getInsertionBlock()->getParentOp();
  while (kernel && !isa<KernelOp>(kernel))
    kernel = kernel->getParentOp();
  return cast<KernelOp>(kernel);
}

} // namespace

Buffer alloc_shared(std::vector<std::int64_t> shape, DType dtype, SourceLoc loc) {
  return allocate(std::move(shape), dtype, Scope::shared, "alloc_shared", loc);
}
Buffer alloc_fragment(std::vector<std::int64_t> shape, DType dtype, SourceLoc loc) {
  return allocate(std::move(shape), dtype, Scope::fragment, "alloc_fragment", loc);
}
Buffer alloc_local(std::vector<std::int64_t> shape, DType dtype, SourceLoc loc) {
  return allocate(std::move(shape), dtype, Scope::local, "alloc_local", loc);
}

Layout make_mma_tile_layout(unsigned rank, unsigned row_dim, unsigned col_dim, SourceLoc loc) {
  if (rank < 2 || rank > 6 || row_dim >= rank || col_dim >= rank || row_dim == col_dim)
    fail(loc, fmt::format("make_mma_tile_layout: rank {} with row_dim {} and col_dim {}: needs "
                          "rank 2-6 and two different dimensions below it",
                          rank, row_dim, col_dim));
  std::vector<IndexExpr> results;
  for (unsigned d = 0; d < rank; ++d)
    results.push_back(d == row_dim   ? IndexExpr::dim(d) / 16
                      : d == col_dim ? IndexExpr::dim(d) / 8
                                     : IndexExpr::dim(d));
  IndexExpr l = IndexExpr::dim(row_dim), c = IndexExpr::dim(col_dim);
  results.push_back(16 * (l % 8) + 4 * ((c % 8) / 2) + 2 * ((l % 16) / 8) + c % 2);
  return Layout::indexMap(rank, std::move(results));
}

void annotate_layout(const Buffer &buffer, const Layout &layout, SourceLoc loc) {
  ProgramImpl &p = activeProgram("annotate_layout", loc);
  Location location = toLocation(p, loc);
  auto op = AnnotateLayoutOp::create(p.builder, location, unwrap(buffer),
                                     layoutAttr(p, buffer, layout, loc));
  verifyOrThrow(p, op, false);
}

void use_swizzle(int panel_size, SourceLoc loc) {
  ProgramImpl &p = activeProgram("use_swizzle", loc);
  KernelOp op = enclosingKernel(p);
  if (op.getGrid().size() < 2)
    fail(loc, "use_swizzle needs a 2-D or 3-D grid: it orders blocks along y within x");
  if (panel_size < 1)
    fail(loc, fmt::format("use_swizzle's panel_size must be at least 1, got {}", panel_size));
  tlDialect(op).getSwizzlePanelAttrHelper().setAttr(op, p.builder.getI64IntegerAttr(panel_size));
}

void use_producer_warpgroup(SourceLoc loc) {
  ProgramImpl &p = activeProgram("use_producer_warpgroup", loc);
  KernelOp op = enclosingKernel(p);
  tlDialect(op).getProducerWarpgroupAttrHelper().setAttr(op, p.builder.getUnitAttr());
}

void copy(const Region &src, const Region &dst, SourceLoc loc) {
  ProgramImpl &p = activeProgram("copy", loc);
  Location location = toLocation(p, loc);
  RegionBounds from = regionBounds(p, src, location, loc);
  RegionBounds to = regionBounds(p, dst, location, loc);
  auto op = CopyOp::create(p.builder, location, unwrap(src.buffer()), from.offsets, from.sizes,
                           unwrap(dst.buffer()), to.offsets, to.sizes);
  verifyOrThrow(p, op, false);
}

void fill(const Buffer &buffer, const Expr &value, SourceLoc loc) {
  ProgramImpl &p = activeProgram("fill", loc);
  Location location = toLocation(p, loc);
  Value v = materialize(p, value, toMLIR(p.context.get(), buffer.dtype()), location);
  auto op = FillOp::create(p.builder, location, unwrap(buffer), v);
  verifyOrThrow(p, op, false);
}

void clear(const Buffer &buffer, SourceLoc loc) { fill(buffer, Expr(0), loc); }

void gemm(const Buffer &A, const Buffer &B, const Buffer &C, GemmOptions options, SourceLoc loc) {
  ProgramImpl &p = activeProgram("gemm", loc);
  Location location = toLocation(p, loc);
  auto op =
      GemmOp::create(p.builder, location, unwrap(A), unwrap(B), unwrap(C), options.transpose_A,
                     options.transpose_B, static_cast<tl::GemmWarpPolicy>(options.policy),
                     options.clear_accum, !options.allow_wgmma, options.wg_wait);
  verifyOrThrow(p, op, false);
}

void wait_wgmma(int pending, SourceLoc loc) {
  ProgramImpl &p = activeProgram("wait_wgmma", loc);
  auto op = WaitWgmmaOp::create(p.builder, toLocation(p, loc), pending);
  verifyOrThrow(p, op, false);
}

void reduce_max(const Buffer &src, const Buffer &dst, int dim, bool clear, SourceLoc loc) {
  reduce(tl::ReduceKind::max, src, dst, dim, clear, "reduce_max", loc);
}
void reduce_min(const Buffer &src, const Buffer &dst, int dim, bool clear, SourceLoc loc) {
  reduce(tl::ReduceKind::min, src, dst, dim, clear, "reduce_min", loc);
}
void reduce_sum(const Buffer &src, const Buffer &dst, int dim, bool clear, SourceLoc loc) {
  reduce(tl::ReduceKind::sum, src, dst, dim, clear, "reduce_sum", loc);
}
void reduce_abssum(const Buffer &src, const Buffer &dst, int dim, bool clear, SourceLoc loc) {
  reduce(tl::ReduceKind::abssum, src, dst, dim, clear, "reduce_abssum", loc);
}

namespace {
/// The indices of the one element `access` names, one point per dimension;
/// an error at the author's line otherwise ("<what> gives 3 subscript(s) but
/// the buffer has rank 4", "<takes> one element: a point per dimension").
SmallVector<Value> elementIndices(ProgramImpl &p, const Access &access, const std::string &what,
                                  const char *takes, SourceLoc loc, Location location) {
  const Buffer &buffer = access.buffer();
  if (static_cast<std::int64_t>(access.indices().size()) != buffer.rank())
    fail(loc, fmt::format("{} gives {} subscript(s) but the buffer has rank {}", what,
                          access.indices().size(), buffer.rank()));
  SmallVector<Value> indices;
  for (const Index &index : access.indices()) {
    if (!index.isPoint())
      fail(loc, fmt::format("{} one element: a point per dimension", takes));
    indices.push_back(materialize(p, index.start(), p.builder.getIndexType(), location));
  }
  return indices;
}
} // namespace

void atomic_add(const Access &dst, const Expr &value, SourceLoc loc) {
  ProgramImpl &p = activeProgram("atomic_add", loc);
  Location location = toLocation(p, loc);
  const Buffer &buffer = dst.buffer();
  SmallVector<Value> indices = elementIndices(
      p, dst, fmt::format("atomic_add to '{}'", buffer.name()), "atomic_add takes", loc, location);
  Value v = materialize(p, value, toMLIR(p.context.get(), buffer.dtype()), location);
  auto op = AtomicAddOp::create(p.builder, location, unwrap(buffer), indices, v);
  verifyOrThrow(p, op, false);
}

void atomic_add(const Region &dst, const Region &src, SourceLoc loc) {
  ProgramImpl &p = activeProgram("atomic_add", loc);
  Location location = toLocation(p, loc);
  RegionBounds from = regionBounds(p, src, location, loc);
  RegionBounds to = regionBounds(p, dst, location, loc);
  auto op = AtomicAddTileOp::create(p.builder, location, unwrap(src.buffer()), from.offsets,
                                    from.sizes, unwrap(dst.buffer()), to.offsets, to.sizes);
  verifyOrThrow(p, op, false);
}

namespace detail {

void parallel(std::vector<std::int64_t> extents, int arity, const Body &body, SourceLoc loc) {
  ProgramImpl &p = activeProgram("parallel", loc);
  Location location = toLocation(p, loc);
  auto op = ParallelOp::create(p.builder, location, extents);
  buildBody(p, op.getBody(), extents.size(), arity, body, "parallel", loc);
  verifyOrThrow(p, op, false);
}

void pipelined(const Expr &start, const Expr &end, std::int64_t numStages, int arity,
               const Body &body, SourceLoc loc) {
  ProgramImpl &p = activeProgram("pipelined", loc);
  Location location = toLocation(p, loc);
  Type index = p.builder.getIndexType();
  Value first = materialize(p, start, index, location); // in this order: the IR's
  Value last = materialize(p, end, index, location);
  auto op = PipelinedOp::create(p.builder, location, first, last, static_cast<uint64_t>(numStages));
  buildBody(p, op.getBody(), 1, arity, body, "pipelined", loc);
  verifyOrThrow(p, op, false);
}

void serial(const Expr &start, const Expr &end, int arity, const Body &body, SourceLoc loc) {
  ProgramImpl &p = activeProgram("serial", loc);
  Location location = toLocation(p, loc);
  if (arity != 1)
    fail(loc, fmt::format("a serial loop's body takes 1 index, got {}", arity));
  Type index = p.builder.getIndexType();
  Value one = arith::ConstantIndexOp::create(p.builder, location, 1);
  auto op = scf::ForOp::create(p.builder, location, materialize(p, start, index, location),
                               materialize(p, end, index, location), one);
  InsertionScope scope(p);
  p.builder.setInsertionPoint(op.getBody()->getTerminator());
  body({wrap(op.getInductionVar())});
}

void ifThen(const Expr &cond, int arity, const Body &body, SourceLoc loc) {
  if (arity != 0)
    fail(loc, "the body of if_ takes no arguments");
  if (cond.isLiteral()) { // a host-side condition: decided now
    activeProgram("if_", loc);
    if (cond.literalValue() != 0)
      body({});
    return;
  }
  ProgramImpl &p = activeProgram("if_", loc);
  Location location = toLocation(p, loc);
  if (cond.dtype() != DType::i1)
    fail(loc, fmt::format("if_ needs a boolean condition, got {}", toString(cond.dtype())));
  auto op = scf::IfOp::create(p.builder, location, materialize(p, cond, location),
                              /*withElseRegion=*/false);
  InsertionScope scope(p);
  p.builder.setInsertionPoint(op.thenBlock()->getTerminator());
  body({});
}

namespace {
/// What an op on a block counter (tl.in_turn, tl.last_to_arrive, named
/// `what`) starts from: its program, location and the element's indices (an
/// i32 tensor's); its body takes no arguments. Errors at the author's line.
struct CounterSite {
  ProgramImpl &p;
  Location location;
  SmallVector<Value> indices;
};
CounterSite counterSite(const Access &counter, int arity, const std::string &what, SourceLoc loc) {
  if (arity != 0)
    fail(loc, fmt::format("the body of {} takes no arguments", what));
  ProgramImpl &p = activeProgram(what.c_str(), loc);
  Location location = toLocation(p, loc);
  const Buffer &buffer = counter.buffer();
  if (buffer.dtype() != DType::i32)
    fail(loc, fmt::format("{}'s counter '{}' must be an i32 tensor, got {}", what, buffer.name(),
                          toString(buffer.dtype())));
  const std::string takes = what + "'s counter is";
  return {p, location,
          elementIndices(p, counter, fmt::format("{}'s counter '{}'", what, buffer.name()),
                         takes.c_str(), loc, location)};
}
} // namespace

void inTurn(const Access &counter, const Expr &turn, const Expr &next, int arity, const Body &body,
            SourceLoc loc) {
  auto [p, location, indices] = counterSite(counter, arity, "in_turn", loc);
  Type index = p.builder.getIndexType();
  Value turnValue = materialize(p, turn, index, location);
  Value nextValue = next.valid() ? materialize(p, next, index, location)
                                 : materialize(p, turn + 1, index, location);
  auto op = InTurnOp::create(p.builder, location, unwrap(counter.buffer()), indices, turnValue,
                             nextValue);
  buildBody(p, op.getBody(), 0, 0, body, "in_turn", loc);
  verifyOrThrow(p, op, false);
}

void pingpong(int arity, const Body &body, SourceLoc loc) {
  if (arity != 0)
    fail(loc, "the body of pingpong takes no arguments");
  ProgramImpl &p = activeProgram("pingpong", loc);
  auto op = PingpongOp::create(p.builder, toLocation(p, loc));
  buildBody(p, op.getBody(), 0, 0, body, "pingpong", loc);
  verifyOrThrow(p, op, false);
}

void lastToArrive(const Access &counter, const Expr &arrivals, int arity, const Body &body,
                  SourceLoc loc) {
  auto [p, location, indices] = counterSite(counter, arity, "last_to_arrive", loc);
  Value count = materialize(p, arrivals, p.builder.getIndexType(), location);
  auto op = LastToArriveOp::create(p.builder, location, unwrap(counter.buffer()), indices, count);
  buildBody(p, op.getBody(), 0, 0, body, "last_to_arrive", loc);
  verifyOrThrow(p, op, false);
}

} // namespace detail
} // namespace tl::dsl
