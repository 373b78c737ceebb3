//===- FragmentLayout.cpp - layout inference for fragments ----------------===//
#include "FragmentLayout.h"
#include "InFlightGemms.h"
#include "WgmmaOperands.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <functional>
#include <limits>

using namespace mlir;

namespace tl::gpu_lowering {
namespace {

/// Registers a thread may spend on the Mma fragments live at once (16-bit
/// elements counted in pairs; peakRegisters): the hardware's 255. Beyond it
/// they cannot stay in registers and the kernel is better off with Row
/// fragments in local memory. What ptxas needs on top (addresses,
/// temporaries) is not counted: the PTX test checks shipped kernels for spills.
constexpr int64_t kRegisterBudget = 255;

/// Whether `op` defines all of `fragment` without reading it: a fill, a copy
/// into all of it from registers or shared memory (a global region may run
/// past its tensor's end, leaving elements unwritten), a gemm that clears it.
bool definesWhole(Operation *op, Value fragment) {
  if (auto fill = dyn_cast<FillOp>(op))
    return fill.getBuffer() == fragment;
  if (auto copy = dyn_cast<CopyOp>(op)) {
    int64_t elements = 1;
    for (int64_t extent : copy.getDstSizes())
      elements *= extent;
    return copy.getDst() == fragment && getMemoryScope(copy.getSrc()) != MemoryScope::global &&
           elements == cast<MemRefType>(fragment.getType()).getNumElements();
  }
  if (auto gemm = dyn_cast<GemmOp>(op))
    return gemm.getC() == fragment && gemm.getClearAccum();
  return false;
}

/// The most registers per thread that the fragments (`own`: each one's
/// registers) hold at once. A fragment lives from its first use to its last
/// in program order (the kernel's ops numbered in pre-order; a use in a
/// parallel loop spans the whole loop, whose body is unrolled per element),
/// through a whole loop where it is used outside the loop too or where the
/// loop's body does not begin with an op directly in it that defines all of
/// it (its value then crosses iterations), and, used by a gemm left in flight
/// (wg_wait = -1; A from registers, or its accumulator), to the wait_wgmma
/// that completes it (completingWait). The staged attention backward with P
/// in registers holds S^T, dP^T (64 registers each), P^T, dV, dK and dQ (32
/// each), 256 in all, but dQ only after S^T's and dP^T's last use.
int64_t peakRegisters(KernelOp func, const llvm::DenseMap<Value, int64_t> &own) {
  llvm::DenseMap<Operation *, int64_t> first, last; // an op's position, its last nested one's
  int64_t next = 0;
  std::function<void(Operation *)> number = [&](Operation *op) {
    first[op] = next++;
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (Operation &inner : block)
          number(&inner);
    last[op] = next - 1;
  };
  number(func);
  std::vector<std::pair<int64_t, int64_t>> changes; // (position, registers added there)
  for (auto [fragment, registers] : own) {
    int64_t from = std::numeric_limits<int64_t>::max(), to = -1;
    llvm::SmallPtrSet<Operation *, 4> loops;
    for (Operation *user : fragment.getUsers()) {
      Operation *span = user; // the outermost parallel loop around the use
      for (Operation *p = user->getParentOp(); p && p != func.getOperation(); p = p->getParentOp())
        if (isa<ParallelOp>(p))
          span = p;
      from = std::min(from, first.lookup(span)), to = std::max(to, last.lookup(span));
      for (Operation *loop = user->getParentOp(); loop && loop != func.getOperation();
           loop = loop->getParentOp())
        if (isa<scf::ForOp, scf::WhileOp, PipelinedOp>(loop))
          loops.insert(loop);
      if (auto gemm = dyn_cast<GemmOp>(user))
        if (WaitWgmmaOp wait = completingWait(gemm))
          to = std::max(to, first.lookup(wait));
    }
    if (to < 0)
      continue;
    for (Operation *loop : loops) {
      Operation *earliest = nullptr;
      bool outside = false;
      for (Operation *user : fragment.getUsers()) {
        if (!loop->isProperAncestor(user))
          outside = true;
        else if (!earliest || first.lookup(user) < first.lookup(earliest))
          earliest = user;
      }
      if (outside || earliest->getParentOp() != loop || !definesWhole(earliest, fragment))
        from = std::min(from, first.lookup(loop)), to = std::max(to, last.lookup(loop));
    }
    changes.push_back({from, registers});
    changes.push_back({to + 1, -registers});
  }
  llvm::sort(changes); // at one position, ends (negative) before starts
  int64_t live = 0, most = 0;
  for (auto [position, registers] : changes)
    most = std::max(most, live += registers);
  return most;
}

/// Bits of one element of a fragment (memref) value.
int64_t elementBits(Value fragment) {
  return cast<MemRefType>(fragment.getType()).getElementTypeBitWidth();
}

/// Warp grid for an MxN accumulator (TileLang's policies): FullRow gives
/// each warp whole rows, FullCol whole columns, Square the most balanced.
std::optional<std::pair<int64_t, int64_t>> partition(GemmWarpPolicy policy, int64_t m, int64_t n,
                                                     int64_t warps) {
  auto fits = [&](int64_t wm, int64_t wn) {
    return wm * wn == warps && m % (16 * wm) == 0 && n % (8 * wn) == 0;
  };
  if (policy == GemmWarpPolicy::FullRow)
    return fits(warps, 1) ? std::optional(std::pair(warps, int64_t{1})) : std::nullopt;
  if (policy == GemmWarpPolicy::FullCol)
    return fits(1, warps) ? std::optional(std::pair(int64_t{1}, warps)) : std::nullopt;
  std::optional<std::pair<int64_t, int64_t>> best;
  double bestRatio = 0;
  for (int64_t wm = 1; wm <= warps; ++wm) {
    if (warps % wm || !fits(wm, warps / wm))
      continue;
    double ratio = double(m / wm) / double(n / (warps / wm));
    double badness = ratio > 1 ? ratio : 1 / ratio;
    if (!best || badness < bestRatio)
      best = std::pair(wm, warps / wm), bestRatio = badness;
  }
  return best;
}

/// "file.cpp:42" for an op built by the eDSL (or a .mlir file).
std::string describeLocation(Operation *op) {
  if (!op)
    return "?";
  if (auto file = dyn_cast<FileLineColLoc>(op->getLoc())) {
    StringRef name = file.getFilename().getValue();
    return (name.substr(name.find_last_of('/') + 1) + ":" + Twine(file.getLine())).str();
  }
  return op->getName().getStringRef().str();
}

/// The shared tiles wgmma reads through descriptors: 2-D, 16-bit, rows in
/// groups of 8, and rows of 32 or 64 bytes or a multiple of 128 (the
/// 32/64/128-byte swizzle atoms; see WgmmaOperands.h).
bool wgmmaOperandTile(Value tile) {
  auto type = cast<MemRefType>(tile.getType());
  if (getMemoryScope(type) != MemoryScope::shared || type.getRank() != 2 ||
      type.getElementTypeBitWidth() != 16 || type.getDimSize(0) % 8)
    return false;
  int64_t rowBytes = type.getDimSize(1) * 2;
  if (rowBytes != 32 && rowBytes != 64 && rowBytes % 128)
    return false;
  // An index-map layout the author chose would fight the descriptor's.
  return llvm::none_of(tile.getUsers(), [](Operation *user) {
    auto annotate = dyn_cast<AnnotateLayoutOp>(user);
    return annotate && !isa<SwizzleLayoutAttr>(annotate.getLayout());
  });
}

} // namespace

bool wgmmaEligible(GemmOp gemm, int64_t warps) {
  auto a = cast<MemRefType>(gemm.getA().getType());
  auto b = cast<MemRefType>(gemm.getB().getType());
  auto c = cast<MemRefType>(gemm.getC().getType());
  // A from registers: a fragment as C's rows (it takes C's layout, which is
  // wgmma's register layout of A for each k step of 16).
  bool registersA = getMemoryScope(a) == MemoryScope::fragment && !gemm.getTransposeA() &&
                    a.getRank() == 2 && a.getDimSize(0) == c.getDimSize(0);
  if (gemm.getNoWgmma() || !(registersA || wgmmaOperandTile(gemm.getA())) ||
      !wgmmaOperandTile(gemm.getB()) || a.getElementType() != b.getElementType() ||
      !(a.getElementType().isF16() || a.getElementType().isBF16()) || !c.getElementType().isF32() ||
      getMemoryScope(c) != MemoryScope::fragment)
    return false;
  int64_t k = gemm.getTransposeA() ? a.getDimSize(0) : a.getDimSize(1);
  return c.getDimSize(1) % 8 == 0 && k % 16 == 0 && wgmmaWarpgroups(gemm, warps).has_value();
}

std::optional<std::pair<int64_t, int64_t>> wgmmaWarpgroups(GemmOp gemm, int64_t warps) {
  auto c = cast<MemRefType>(gemm.getC().getType());
  int64_t m = c.getDimSize(0), n = c.getDimSize(1), groups = warps / 4;
  if (warps % 4 || groups == 0)
    return std::nullopt;
  if (m % (64 * groups) == 0)
    return std::pair{groups, int64_t(1)};
  if (getMemoryScope(cast<MemRefType>(gemm.getA().getType())) != MemoryScope::shared)
    return std::nullopt;
  // An MN-major B's descriptor starts at a column of its swizzle atom.
  auto b = cast<MemRefType>(gemm.getB().getType());
  int64_t columnStep = gemm.getTransposeB() ? 8 : wgmmaAtomBytes(b) / 2;
  for (int64_t alongM = groups / 2; alongM >= 1; alongM /= 2) {
    int64_t alongN = groups / alongM;
    if (groups % alongM == 0 && m % (64 * alongM) == 0 && n % (alongN * columnStep) == 0)
      return std::pair{alongM, alongN};
  }
  return std::nullopt;
}

namespace {

struct Inference {
  int64_t warps;
  bool wgmma = false; // every gemm of the kernel takes wgmma
  FragmentLayouts layouts;
  llvm::DenseMap<Value, Operation *> origins; // the op that fixed each layout
  Operation *current = nullptr;               // the op being looked at
  llvm::DenseSet<Value> fragments;
  bool changed = false;
  std::string why;

  bool fail(const std::string &reason) {
    if (why.empty())
      why = reason + (current ? " (" + describeLocation(current) + ")" : "");
    return false;
  }

  bool assign(Value fragment, const FragmentLayout &layout) {
    auto it = layouts.find(fragment);
    if (it == layouts.end()) {
      layouts[fragment] = layout;
      origins[fragment] = current;
      changed = true;
      return true;
    }
    return it->second == layout || fail("conflicting layouts for one fragment: " +
                                        describeLocation(origins.lookup(fragment)) + " vs");
  }

  std::optional<FragmentLayout> known(Value v) const {
    auto it = layouts.find(v);
    if (it == layouts.end())
      return std::nullopt;
    return it->second;
  }

  static ArrayRef<int64_t> shape(Value v) { return cast<MemRefType>(v.getType()).getShape(); }

  bool seedFromGemm(GemmOp gemm) {
    if (!fragments.count(gemm.getC()))
      return fail("gemm accumulator is not a fragment");
    auto a = cast<MemRefType>(gemm.getA().getType());
    if (!a.getElementType().isF16() && !a.getElementType().isBF16())
      return fail("gemm operands are not f16/bf16");
    if (!cast<MemRefType>(gemm.getC().getType()).getElementType().isF32())
      return fail("gemm accumulator is not f32");
    ArrayRef<int64_t> c = shape(gemm.getC());
    int64_t k = gemm.getTransposeA() ? a.getDimSize(0) : a.getDimSize(1);
    if (k % 16)
      return fail("gemm K is not a multiple of 16");
    if (wgmma) { // warpgroups split M (and N: wgmmaWarpgroups); the warp policy does not apply
      auto [alongM, alongN] = *wgmmaWarpgroups(gemm, warps);
      if (!assign(gemm.getC(),
                  {FragmentLayout::Kind::Mma, c[0], c[1], 4 * alongM, alongN, 1, true}))
        return false;
      // An A fragment (RS wgmma, warpgroups along M only) holds, for each k
      // step of 16, the registers wgmma reads: C's layout over [M, K].
      return !fragments.count(gemm.getA()) ||
             assign(gemm.getA(), {FragmentLayout::Kind::Mma, c[0], k, warps, 1, 1, true});
    }
    auto grid = partition(gemm.getPolicy(), c[0], c[1], warps);
    if (!grid)
      return fail("gemm tile does not split into m16n8 tiles per warp");
    FragmentLayout layout{FragmentLayout::Kind::Mma, c[0], c[1], grid->first, grid->second};
    if (!assign(gemm.getC(), layout))
      return false;
    // An A fragment feeds mma.sync from registers when each warp owns whole
    // rows of it. Any other fragment operand (B, a transposed A) is staged
    // through shared memory by the lowering, whatever its layout.
    if (fragments.count(gemm.getA()) && !gemm.getTransposeA() && grid->second == 1)
      return assign(gemm.getA(), {FragmentLayout::Kind::Mma, c[0], k, grid->first, 1});
    return true;
  }

  bool propagateCopy(CopyOp copy) {
    Value src = copy.getSrc(), dst = copy.getDst();
    if (!fragments.count(src) || !fragments.count(dst))
      return true;
    if (shape(src) != shape(dst))
      return fail("copy between fragments of different shapes");
    if (auto l = known(src))
      return assign(dst, *l);
    if (auto l = known(dst))
      return assign(src, *l);
    return true;
  }

  bool propagateReduce(ReduceOp reduce) {
    Value src = reduce.getSrc(), dst = reduce.getDst();
    if (!fragments.count(src) || !fragments.count(dst))
      return true;
    auto l = known(src);
    if (!l)
      return true;
    if (l->kind != FragmentLayout::Kind::Mma || reduce.getDim() != 1)
      return fail("reduction other than along the rows of an Mma fragment");
    return assign(dst, l->rowVector());
  }

  bool propagateParallel(ParallelOp parallel) {
    Block &body = parallel.getBody().front();
    ArrayRef<int64_t> extents = parallel.getExtents();
    SmallVector<Value> matrices, vectors;
    bool ok = true;
    parallel.walk([&](Operation *op) {
      Value buffer;
      ValueRange indices;
      if (auto l = dyn_cast<memref::LoadOp>(op))
        buffer = l.getMemRef(), indices = l.getIndices();
      else if (auto s = dyn_cast<memref::StoreOp>(op))
        buffer = s.getMemRef(), indices = s.getIndices();
      if (!buffer || !fragments.count(buffer))
        return;
      ArrayRef<int64_t> s = shape(buffer);
      if (s.size() == 2 && extents.size() == 2 && indices[0] == body.getArgument(0) &&
          indices[1] == body.getArgument(1) && s == extents)
        matrices.push_back(buffer);
      else if (s.size() == 1 && indices[0] == body.getArgument(0) && s[0] == extents[0])
        vectors.push_back(buffer);
      else
        ok = fail("a parallel loop indexes a fragment other than by its own indices");
    });
    if (!ok)
      return false;
    std::optional<FragmentLayout> matrix, vector;
    for (Value m : matrices)
      if (auto l = known(m))
        matrix = l;
    for (Value v : vectors)
      if (auto l = known(v))
        vector = l;
    if (matrix) {
      for (Value m : matrices)
        if (!assign(m, *matrix))
          return false;
      if (matrix->kind == FragmentLayout::Kind::Mma)
        vector = matrix->rowVector();
    }
    if (vector)
      for (Value v : vectors)
        if (!assign(v, *vector))
          return false;
    return true;
  }
};

} // namespace

/// A fragment that keeps the Row layout in an Mma kernel: no op moves data
/// between it and another fragment (copies go to or from memory, gemms stage
/// it through shared memory, fills write it whole).
static bool standsApart(Value fragment, const llvm::DenseSet<Value> &fragments) {
  return llvm::all_of(fragment.getUsers(), [&](Operation *user) {
    if (isa<FillOp, AnnotateLayoutOp, AtomicAddTileOp>(user))
      return true;
    if (auto copy = dyn_cast<CopyOp>(user))
      return !fragments.count(copy.getSrc()) || !fragments.count(copy.getDst());
    if (auto gemm = dyn_cast<GemmOp>(user))
      return gemm.getC() != fragment;
    return false;
  });
}

/// Threads that share each row of a Row kernel's fragments: enough that every
/// thread holds part of the largest fragment when its rows are fewer than the
/// threads (a 32-row tile in a 128-thread block would otherwise leave 96
/// threads idle and make each of the rest walk a whole row). A power of two up
/// to a warp, dividing every 2-D fragment's columns, with the rows of each
/// fragment a multiple of the row groups (the shuffles of a row reduction then
/// run in every lane). 1 where the lowering relies on one thread per row:
/// gemms, row reductions into memory or along columns, 1-D fragments written
/// in a parallel loop or driving one (each of a row's threads would run it).
static int64_t rowSplit(KernelOp func, const llvm::DenseSet<Value> &fragments, int64_t threads) {
  int64_t rows = 0;
  for (Value fragment : fragments)
    rows = std::max(rows, cast<MemRefType>(fragment.getType()).getDimSize(0));
  if (rows == 0 || rows >= threads)
    return 1;
  int64_t split = 1;
  while (split * 2 <= 32 && rows * split * 2 <= threads)
    split *= 2;
  for (; split > 1; split /= 2) {
    bool fits = llvm::all_of(fragments, [&](Value fragment) {
      auto type = cast<MemRefType>(fragment.getType());
      return type.getRank() <= 2 && type.getDimSize(0) % (threads / split) == 0 &&
             (type.getRank() == 1 || type.getDimSize(1) % split == 0);
    });
    if (fits)
      break;
  }
  if (split == 1)
    return 1;
  auto rank = [](Value v) { return cast<MemRefType>(v.getType()).getRank(); };
  bool safe = true;
  func.walk([&](Operation *op) {
    if (isa<GemmOp>(op))
      safe = false;
    if (auto reduce = dyn_cast<ReduceOp>(op)) // shuffled: 32-bit elements
      safe &= !fragments.count(reduce.getSrc()) ||
              (reduce.getDim() == 1 && fragments.count(reduce.getDst()) &&
               elementBits(reduce.getSrc()) == 32);
    if (auto parallel = dyn_cast<ParallelOp>(op)) {
      // Every fragment access must be the loop's own element: (i, j) of a
      // fragment of the loop's shape, or i of a 1-D one of its rows (read
      // only). A thread holds just its segment of each row.
      ArrayRef<int64_t> extents = parallel.getExtents();
      Block &body = parallel.getBody().front();
      bool wide = false, narrowWrite = false, any = false, own = true;
      parallel.walk([&](Operation *inner) {
        Value buffer;
        ValueRange indices;
        bool write = false;
        if (auto l = dyn_cast<memref::LoadOp>(inner))
          buffer = l.getMemRef(), indices = l.getIndices();
        else if (auto st = dyn_cast<memref::StoreOp>(inner))
          buffer = st.getMemRef(), indices = st.getIndices(), write = true;
        if (!buffer || !fragments.count(buffer))
          return;
        any = true;
        ArrayRef<int64_t> shape = cast<MemRefType>(buffer.getType()).getShape();
        if (extents.size() != 2) {
          own = false;
        } else if (rank(buffer) == 2) {
          wide = true;
          own &= shape == extents && indices[0] == body.getArgument(0) &&
                 indices[1] == body.getArgument(1);
        } else {
          narrowWrite |= write;
          own &= shape[0] == extents[0] && indices[0] == body.getArgument(0);
        }
      });
      safe &= !any || (wide && own && !narrowWrite);
    }
  });
  return safe ? split : 1;
}

FragmentLayouts inferFragmentLayouts(KernelOp func, std::string &why, bool wgmma) {
  int64_t threads = static_cast<int64_t>(func.getThreads());
  Inference inference;
  inference.warps = threads / 32;
  func.walk([&](AllocFragmentOp alloc) { inference.fragments.insert(alloc.getResult()); });
  // wgmma for the whole kernel or not at all: one accumulator layout family.
  if (wgmma) {
    bool any = false, all = true;
    func.walk([&](GemmOp gemm) {
      any = true;
      all &= wgmmaEligible(gemm, inference.warps);
    });
    inference.wgmma = any && all;
  }
  bool ok = true;
  func.walk([&](GemmOp gemm) {
    inference.current = gemm;
    ok = ok && inference.seedFromGemm(gemm);
  });
  for (int round = 0; ok && round < 100; ++round) {
    inference.changed = false;
    func.walk([&](Operation *op) {
      if (!ok)
        return;
      inference.current = op;
      if (auto copy = dyn_cast<CopyOp>(op))
        ok = inference.propagateCopy(copy);
      else if (auto reduce = dyn_cast<ReduceOp>(op))
        ok = inference.propagateReduce(reduce);
      else if (auto parallel = dyn_cast<ParallelOp>(op))
        ok = inference.propagateParallel(parallel);
    });
    if (!inference.changed)
      break;
  }
  // Row fragments next to Mma ones (a copy or a parallel loop between them)
  // would need a conversion: not supported, so everything goes Row.
  int64_t registers = 0;
  if (ok && !inference.layouts.empty()) {
    inference.current = nullptr;
    for (Value fragment : inference.fragments)
      if (!inference.layouts.count(fragment) && !standsApart(fragment, inference.fragments))
        ok = inference.fail("a fragment takes no Mma layout: " +
                            std::to_string(Inference::shape(fragment).size()) + "-D fragment");
    int64_t most = 0; // the fragment taking the most registers: the one to blame
    llvm::DenseMap<Value, int64_t> own;
    for (auto &[fragment, layout] : inference.layouts) { // 16-bit elements go in pairs
      own[fragment] = (layout.count() * elementBits(fragment) + 31) / 32;
      if (own[fragment] > most)
        most = own[fragment], inference.current = fragment.getDefiningOp();
    }
    registers = peakRegisters(func, own);
    if (ok && registers > kRegisterBudget)
      ok = inference.fail("Mma fragments need " + std::to_string(registers) +
                          " registers per thread at once, past the " +
                          std::to_string(kRegisterBudget) +
                          " a thread has; more threads would share them");
  }
  if (!ok || inference.layouts.empty()) {
    why = inference.why.empty() ? "no gemm" : inference.why;
    FragmentLayouts rows;
    int64_t split = rowSplit(func, inference.fragments, threads);
    for (Value fragment : inference.fragments) {
      ArrayRef<int64_t> s = Inference::shape(fragment);
      rows[fragment] = {FragmentLayout::Kind::Row, s[0], s.size() > 1 ? s[1] : 0, 1, 1, split};
    }
    return rows;
  }
  return inference.layouts;
}

} // namespace tl::gpu_lowering
