//===- TLOps.cpp - tl op verifiers ----------------------------------------===//
//
// Everything about a tl program that can be checked without running it is
// checked here: ranks, extents, element types, scopes and static bounds. The
// eDSL verifies each op as it builds it, so these messages reach the kernel
// author at the C++ line that built the op.
//
//===----------------------------------------------------------------------===//
#include "tl/Dialect/TL/TLDialect.h"

#include "IndexMapRange.h"
#include "KernelPlacement.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <algorithm>

using namespace mlir;

namespace tl {

/// Parses the body region of a kernel or loop, as `$body` in an assembly
/// format would, but on failure first drops every use of the values defined
/// in it. A generated parser owns the region until it succeeds and frees it
/// as it returns failure; a value the body defined may already be used
/// outside it, by a forward reference from the enclosing block, and that use
/// would then point into freed memory (heap corruption on invalid input:
/// fuzzer seed 2, mutant 5317). MLIR's parser does this cleanup for regions
/// it holds itself (CleanupOpStateRegions), not for these.
static ParseResult parseBody(OpAsmParser &parser, Region &body) {
  if (failed(parser.parseRegion(body))) {
    for (Block &block : body)
      block.dropAllDefinedValueUses();
    return failure();
  }
  if (body.empty())
    body.emplaceBlock();
  return success();
}

static void printBody(OpAsmPrinter &printer, Operation *, Region &body) {
  printer.printRegion(body);
}

} // namespace tl

#define GET_OP_CLASSES
#include "tl/Dialect/TL/TLOps.cpp.inc"

namespace tl {
namespace {

std::string formatShape(ArrayRef<int64_t> shape) {
  std::string text = "[";
  for (auto [i, extent] : llvm::enumerate(shape))
    text += (i ? ", " : "") + std::to_string(extent);
  return text + "]";
}

/// "a global tensor", "a shared buffer", ...
std::string describeScope(MemoryScope scope) {
  switch (scope) {
  case MemoryScope::global:
    return "a global tensor";
  case MemoryScope::shared:
    return "a shared buffer";
  case MemoryScope::fragment:
    return "a fragment";
  case MemoryScope::local:
    return "a local buffer";
  }
  return "a buffer";
}

std::string describeType(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

LogicalResult verifyInsideKernel(Operation *op) {
  if (op->getParentOfType<KernelOp>())
    return success();
  return op->emitOpError("must be inside a tl.kernel");
}

/// Block arguments of a loop-like body: `count` index values.
LogicalResult verifyIndexArguments(Operation *op, Region &body, size_t count, StringRef what) {
  Block &block = body.front();
  if (block.getNumArguments() != count)
    return op->emitOpError() << "body must take " << count << " " << what
                             << " (one per dimension), got " << block.getNumArguments();
  for (BlockArgument arg : block.getArguments())
    if (!arg.getType().isIndex())
      return op->emitOpError() << "body arguments must be of index type";
  return success();
}

void nameArguments(Region &region, ArrayRef<StringRef> names, OpAsmSetValueNameFn setNameFn) {
  if (region.empty())
    return;
  for (auto [index, arg] : llvm::enumerate(region.front().getArguments()))
    setNameFn(arg, index < names.size() ? names[index] : "idx");
}

MemRefType bufferType(Value value) { return cast<MemRefType>(value.getType()); }

/// Checks one side of a copy: offsets and sizes per dimension, and that the
/// region lies inside the buffer where that can be decided statically.
LogicalResult verifyRegion(Operation *op, StringRef side, Value buffer, OperandRange offsets,
                           ArrayRef<int64_t> sizes) {
  MemRefType type = bufferType(buffer);
  int64_t rank = type.getRank();
  if (static_cast<int64_t>(offsets.size()) != rank || static_cast<int64_t>(sizes.size()) != rank)
    return op->emitOpError() << side << " region has " << offsets.size() << " offsets and "
                             << sizes.size() << " extents but the buffer has rank " << rank;
  bool onChip = getMemoryScope(type) != MemoryScope::global;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t dim = type.getDimSize(d);
    if (sizes[d] <= 0)
      return op->emitOpError() << side << " region extent " << sizes[d] << " in dimension " << d
                               << " must be positive";
    if (onChip && sizes[d] > dim)
      return op->emitOpError() << side << " region extent " << sizes[d] << " in dimension " << d
                               << " exceeds the buffer's extent " << dim;
    std::optional<int64_t> offset = getConstantIntValue(offsets[d]);
    if (!offset)
      continue;
    // (An on-chip extent is at most the buffer's, so the sum cannot overflow
    // there; a global one may be anything.)
    int64_t end = llvm::checkedAdd(*offset, sizes[d]).value_or(INT64_MAX);
    if (*offset < 0 || *offset >= dim || (onChip && end > dim))
      return op->emitOpError() << side << " region [" << *offset << ", " << end << ") in dimension "
                               << d << " lies outside the buffer's extent " << dim;
  }
  return success();
}

/// The most stages a tl.pipelined loop may ask for.
constexpr int64_t kMaxPipelineStages = 16;

// What the GPUs tlc targets give a kernel (sm_80, sm_90a): a grid of at most
// 2^31 - 1 x 65535 x 65535 blocks; per block at most 227 KiB of shared
// memory; per thread at most 512 KiB of local memory.
constexpr int64_t kMaxGrid[3] = {(int64_t(1) << 31) - 1, 65535, 65535};
constexpr int64_t kMaxSharedBytes = 227 * 1024;
constexpr int64_t kMaxLocalBytesPerThread = 512 * 1024;

/// The most elements a tile op covers: its loops and offsets are computed in
/// 32-bit arithmetic on the GPU. (A parallel loop of 2^62 x 4 iterations
/// lowered to a loop of 16.)
constexpr int64_t kMaxTileElements = (int64_t(1) << 31) - 1;

/// The product of `extents`, or nothing where it overflows 64 bits.
std::optional<int64_t> product(ArrayRef<int64_t> extents) {
  std::optional<int64_t> result = 1;
  for (int64_t extent : extents)
    if (!(result = llvm::checkedMul(*result, extent)))
      return std::nullopt;
  return result;
}

/// Bytes of a buffer of static shape, or nothing where that overflows.
std::optional<int64_t> bufferBytes(MemRefType type) {
  std::optional<int64_t> elements = product(type.getShape());
  if (!elements)
    return std::nullopt;
  int64_t elementBytes = (type.getElementTypeBitWidth() + 7) / 8;
  return llvm::checkedMul(*elements, elementBytes);
}

/// A tile op's extents cover at most kMaxTileElements elements.
LogicalResult verifyTileElements(Operation *op, StringRef what, ArrayRef<int64_t> extents) {
  std::optional<int64_t> elements = product(extents);
  if (elements && *elements <= kMaxTileElements)
    return success();
  return op->emitOpError() << what << " " << formatShape(extents) << " covers more than "
                           << kMaxTileElements << " (2^31 - 1) elements";
}

} // namespace

//===----------------------------------------------------------------------===//
// Kernel and loops
//===----------------------------------------------------------------------===//

LogicalResult KernelOp::verify() {
  ArrayRef<int64_t> grid = getGrid();
  if (grid.empty() || grid.size() > 3)
    return emitOpError() << "grid must have 1 to 3 dimensions, got " << grid.size();
  const char *axis[3] = {"x", "y", "z"};
  for (auto [d, extent] : llvm::enumerate(grid)) {
    if (extent <= 0)
      return emitOpError() << "grid extent " << extent << " in dimension " << d
                           << " must be positive";
    if (extent > kMaxGrid[d])
      return emitOpError() << "grid extent " << extent << " in dimension " << d << " (" << axis[d]
                           << ") exceeds the " << kMaxGrid[d]
                           << " blocks a GPU launch allows there";
  }
  int64_t threads = getThreads();
  if (threads <= 0 || threads % 32 != 0)
    return emitOpError() << "thread count " << threads
                         << " is not a positive multiple of 32 (the warp size)";
  if (threads > 1024)
    return emitOpError() << "thread count " << threads << " exceeds the 1024 threads of a block";
  if (failed(verifyIndexArguments(*this, getBody(), grid.size(), "block indices")))
    return failure();
  return verifyKernelPlacement(*this);
}

LogicalResult KernelOp::verifyRegions() { return verifyKernelSurroundings(*this); }

void KernelOp::getAsmBlockArgumentNames(Region &region, OpAsmSetValueNameFn setNameFn) {
  nameArguments(region, {"bx", "by", "bz"}, setNameFn);
}

LogicalResult ParallelOp::verify() {
  ArrayRef<int64_t> extents = getExtents();
  if (extents.empty())
    return emitOpError("needs at least one extent");
  for (auto [d, extent] : llvm::enumerate(extents))
    if (extent <= 0)
      return emitOpError() << "extent " << extent << " in dimension " << d << " must be positive";
  if (failed(verifyTileElements(*this, "the loop nest", extents)) ||
      failed(verifyInsideKernel(*this)))
    return failure();
  return verifyIndexArguments(*this, getBody(), extents.size(), "loop indices");
}

void ParallelOp::getAsmBlockArgumentNames(Region &region, OpAsmSetValueNameFn setNameFn) {
  nameArguments(region, {"i", "j", "k", "l", "m", "n"}, setNameFn);
}

LogicalResult PipelinedOp::verify() {
  auto numStages = static_cast<int64_t>(getNumStages());
  if (numStages < 0)
    return emitOpError() << "num_stages must be >= 0, got " << numStages;
  // Each stage is one more copy in flight and one more shared-memory copy of
  // every tile the loop pipelines, and the GPU lowering unrolls its prologue
  // once per stage: beyond a handful it only exhausts shared memory.
  if (numStages > kMaxPipelineStages)
    return emitOpError() << "num_stages " << numStages << " exceeds " << kMaxPipelineStages
                         << " (each stage holds one more copy of every "
                            "pipelined tile in shared memory)";
  if (failed(verifyInsideKernel(*this)))
    return failure();
  return verifyIndexArguments(*this, getBody(), 1, "loop index");
}

void PipelinedOp::getAsmBlockArgumentNames(Region &region, OpAsmSetValueNameFn setNameFn) {
  nameArguments(region, {"iv"}, setNameFn);
}

//===----------------------------------------------------------------------===//
// Buffers
//===----------------------------------------------------------------------===//

template <typename AllocOp> static LogicalResult verifyAlloc(AllocOp op) {
  MemRefType type = op.getType();
  if (getMemoryScope(type) != AllocOp::kScope)
    return op.emitOpError() << "result must be in #tl.scope<"
                            << stringifyMemoryScope(AllocOp::kScope) << ">, got "
                            << describeType(type);
  if (!type.getLayout().isIdentity())
    return op.emitOpError() << "result must have the identity layout (a layout is "
                               "set with tl.annotate_layout), got "
                            << describeType(type);
  for (auto [d, extent] : llvm::enumerate(type.getShape()))
    if (extent <= 0)
      return op.emitOpError() << "zero-sized buffer: extent " << extent << " in dimension " << d
                              << " of " << formatShape(type.getShape());
  Type element = type.getElementType();
  if (!element.isIntOrFloat())
    return op.emitOpError() << "element type must be an integer or float, got " << element;
  if (failed(verifyInsideKernel(op)))
    return failure();
  // A buffer lives as long as the thread block: the lowerings plan it once
  // per kernel (a shared tile allocated inside a pipelined loop crashed the
  // GPU lowering's multi-buffering: fuzzer seed 3, mutant 1762).
  Operation *parent = op->getParentOp();
  auto kernel = dyn_cast<KernelOp>(parent);
  if (!kernel)
    return op.emitOpError() << "must be directly in the tl.kernel's body (a buffer "
                               "lives as long as the thread block), not inside '"
                            << parent->getName() << "'";
  // What the GPU has room for (a shared tile of 2^63 bytes planned to 0).
  // (The kernel's own verifier bounds its thread count; the eDSL verifies a
  // buffer before its kernel.)
  int64_t threads = std::clamp<int64_t>(kernel.getThreads(), 1, 1024);
  int64_t limit = AllocOp::kScope == MemoryScope::shared  ? kMaxSharedBytes
                  : AllocOp::kScope == MemoryScope::local ? kMaxLocalBytesPerThread
                                                          : kMaxLocalBytesPerThread * threads;
  std::optional<int64_t> bytes = bufferBytes(type);
  if (bytes && *bytes <= limit)
    return success();
  InFlightDiagnostic diag = op.emitOpError() << "buffer " << formatShape(type.getShape()) << " x "
                                             << element << " takes ";
  if (bytes)
    diag << *bytes << " bytes";
  else
    diag << "more than 2^63 bytes";
  switch (AllocOp::kScope) {
  case MemoryScope::shared:
    return diag << ", more than the " << limit << " (227 KiB) a thread block can have";
  case MemoryScope::local:
    return diag << ", more than the " << limit << " (512 KiB) of local memory of a thread";
  default:
    return diag << ", more than its " << threads
                << " threads can hold even in local memory (512 KiB each)";
  }
}

LogicalResult AllocSharedOp::verify() { return verifyAlloc(*this); }
LogicalResult AllocFragmentOp::verify() { return verifyAlloc(*this); }
LogicalResult AllocLocalOp::verify() { return verifyAlloc(*this); }

LogicalResult AnnotateLayoutOp::verify() {
  MemRefType type = bufferType(getBuffer());
  MemoryScope scope = getMemoryScope(type);
  if (llvm::isa<SwizzleLayoutAttr>(getLayout())) {
    if (scope != MemoryScope::shared || type.getRank() < 2)
      return emitOpError() << "a swizzled layout needs a shared buffer of rank "
                              ">= 2, got "
                           << describeScope(scope) << " of rank " << type.getRank();
    return verifyInsideKernel(*this);
  }
  auto indexMap = llvm::dyn_cast<IndexMapLayoutAttr>(getLayout());
  if (!indexMap)
    return emitOpError("layout must be #tl.swizzle or #tl.index_map");
  AffineMap map = indexMap.getMap();
  if (map.getNumDims() != static_cast<unsigned>(type.getRank()))
    return emitOpError() << "layout takes " << map.getNumDims()
                         << " indices but the buffer has rank " << type.getRank();
  if (map.getNumSymbols() != 0)
    return emitOpError("layout map must not use symbols");
  ArrayRef<int64_t> physical = indexMap.getPhysicalShape();
  if (map.getNumResults() != physical.size())
    return emitOpError() << "layout map has " << map.getNumResults()
                         << " results but its physical shape has rank " << physical.size();
  if (physical.empty())
    return emitOpError("layout's physical shape needs at least one dimension");
  std::optional<int64_t> physicalSize = 1;
  for (auto [d, extent] : llvm::enumerate(physical)) {
    if (extent <= 0)
      return emitOpError() << "layout's physical extent " << extent << " in dimension " << d
                           << " must be positive";
    physicalSize = llvm::checkedMul(*physicalSize, extent);
    if (!physicalSize)
      return emitOpError() << "layout's physical shape " << formatShape(physical)
                           << " has more than 2^63 elements";
  }
  if (!type.hasStaticShape())
    return emitOpError("an index-map layout needs a buffer of static shape");
  if (*physicalSize > type.getNumElements())
    return emitOpError() << "layout maps into " << formatShape(physical) << " (" << *physicalSize
                         << " elements) but the buffer holds " << type.getNumElements();
  // Each result must stay inside its physical extent for every logical index:
  // the lowerings access the physical index unchecked.
  SmallVector<IndexRange> indices;
  for (int64_t extent : type.getShape())
    indices.push_back({0, extent - 1});
  for (auto [r, result] : llvm::enumerate(map.getResults())) {
    std::string problem;
    FailureOr<IndexRange> range = boundIndexExpr(result, indices, problem);
    if (failed(range))
      return emitOpError() << "layout result " << r << ": " << problem;
    if (range->min < 0 || range->max >= physical[r]) {
      std::string text;
      llvm::raw_string_ostream os(text);
      os << result;
      return emitOpError() << "layout result " << r << " ('" << text << "') takes values in ["
                           << range->min << ", " << range->max << "] over the buffer's indices "
                           << formatShape(type.getShape()) << ", outside [0, " << physical[r] - 1
                           << "] of the physical shape " << formatShape(physical);
    }
  }
  return verifyInsideKernel(*this);
}

//===----------------------------------------------------------------------===//
// Tile operators
//===----------------------------------------------------------------------===//

/// Both regions of a copy-like op (tl.copy, tl.atomic_add_tile) are valid
/// regions of their buffers (verifyRegion: a global one may run past the
/// tensor's end) and have the same extents but for 1s.
template <typename CopyLikeOp> LogicalResult verifyCopyRegions(CopyLikeOp op) {
  if (failed(verifyRegion(op, "source", op.getSrc(), op.getSrcOffsets(), op.getSrcSizes())) ||
      failed(verifyRegion(op, "destination", op.getDst(), op.getDstOffsets(), op.getDstSizes())))
    return failure();
  if (nonUnitExtents(op.getSrcSizes()) != nonUnitExtents(op.getDstSizes()))
    return op.emitOpError() << "extents differ: source region " << formatShape(op.getSrcSizes())
                            << " vs destination region " << formatShape(op.getDstSizes());
  return verifyTileElements(op, "the region", op.getSrcSizes());
}

LogicalResult CopyOp::verify() {
  if (failed(verifyCopyRegions(*this)))
    return failure();
  Type srcElement = bufferType(getSrc()).getElementType();
  Type dstElement = bufferType(getDst()).getElementType();
  if (srcElement != dstElement && !(isa<FloatType>(srcElement) && isa<FloatType>(dstElement)))
    return emitOpError() << "cannot convert " << srcElement << " to " << dstElement
                         << " (a copy converts between float types only)";
  return verifyInsideKernel(*this);
}

LogicalResult FillOp::verify() {
  MemRefType type = bufferType(getBuffer());
  MemoryScope scope = getMemoryScope(type);
  if (scope == MemoryScope::global)
    return emitOpError() << "needs a shared, fragment or local buffer, got "
                         << describeScope(scope);
  if (getValue().getType() != type.getElementType())
    return emitOpError() << "value type " << getValue().getType()
                         << " does not match the buffer's element type " << type.getElementType();
  return verifyInsideKernel(*this);
}

LogicalResult GemmOp::verify() {
  struct Operand {
    StringRef name;
    Value value;
  };
  for (Operand operand : {Operand{"A", getA()}, Operand{"B", getB()}, Operand{"C", getC()}}) {
    MemRefType type = bufferType(operand.value);
    MemoryScope scope = getMemoryScope(type);
    if (type.getRank() != 2)
      return emitOpError() << "operand " << operand.name << " must be a 2-D tile, got rank "
                           << type.getRank();
    if (operand.name == "C" && scope != MemoryScope::fragment)
      return emitOpError() << "accumulator C must be a fragment, got " << describeScope(scope);
    if (operand.name != "C" && scope != MemoryScope::shared && scope != MemoryScope::fragment)
      return emitOpError() << "operand " << operand.name
                           << " must be a shared or fragment tile, got " << describeScope(scope);
  }
  ArrayRef<int64_t> a = bufferType(getA()).getShape();
  ArrayRef<int64_t> b = bufferType(getB()).getShape();
  ArrayRef<int64_t> c = bufferType(getC()).getShape();
  int64_t m = getTransposeA() ? a[1] : a[0], kA = getTransposeA() ? a[0] : a[1];
  int64_t kB = getTransposeB() ? b[1] : b[0], n = getTransposeB() ? b[0] : b[1];
  if (kA != kB)
    return emitOpError() << "K of A (" << kA << ") does not match K of B (" << kB << "): A is "
                         << formatShape(a) << (getTransposeA() ? " transposed" : "") << ", B is "
                         << formatShape(b) << (getTransposeB() ? " transposed" : "");
  if (c[0] != m || c[1] != n)
    return emitOpError() << "C is " << formatShape(c) << " but A*B is " << formatShape({m, n});
  Type aElement = bufferType(getA()).getElementType();
  Type bElement = bufferType(getB()).getElementType();
  Type cElement = bufferType(getC()).getElementType();
  if (aElement != bElement)
    return emitOpError() << "A and B element types differ (" << aElement << " vs " << bElement
                         << ")";
  if (!isa<FloatType>(aElement) || !isa<FloatType>(cElement))
    return emitOpError() << "gemm needs float operands and accumulator, got " << aElement << " and "
                         << cElement;
  // (I64Attr's getter is unsigned: the attribute's signed value.)
  int64_t wgWait = getWgWaitAttr().getInt();
  if (wgWait != 0 && wgWait != -1)
    return emitOpError() << "wg_wait is 0 (complete here) or -1 (stay in flight until "
                            "wait_wgmma), got "
                         << wgWait;
  return verifyInsideKernel(*this);
}

LogicalResult WaitWgmmaOp::verify() {
  if (getPendingAttr().getInt() < 0)
    return emitOpError() << "pending counts gemms still in flight: 0 or more, got "
                         << getPendingAttr().getInt();
  return verifyInsideKernel(*this);
}

LogicalResult ReduceOp::verify() {
  MemRefType src = bufferType(getSrc()), dst = bufferType(getDst());
  for (MemRefType type : {src, dst})
    if (getMemoryScope(type) == MemoryScope::global)
      return emitOpError("reduces on-chip buffers (shared, fragment or "
                         "local), got a global tensor");
  int64_t dim = static_cast<int64_t>(getDim());
  if (dim < 0 || dim >= src.getRank())
    return emitOpError() << "reduces over dimension " << dim << " but the source has rank "
                         << src.getRank();
  SmallVector<int64_t> expected(src.getShape());
  expected.erase(expected.begin() + dim);
  if (expected.empty())
    expected.push_back(1);
  if (ArrayRef<int64_t>(expected) != dst.getShape())
    return emitOpError() << "result has shape " << formatShape(dst.getShape()) << " but reducing "
                         << formatShape(src.getShape()) << " over dimension " << dim << " gives "
                         << formatShape(expected);
  if (src.getElementType() != dst.getElementType())
    return emitOpError() << "source and result element types differ (" << src.getElementType()
                         << " vs " << dst.getElementType() << ")";
  return verifyInsideKernel(*this);
}

LogicalResult AtomicAddOp::verify() {
  MemRefType type = bufferType(getDst());
  MemoryScope scope = getMemoryScope(type);
  if (scope != MemoryScope::global && scope != MemoryScope::shared)
    return emitOpError() << "needs a global or shared destination, got " << describeScope(scope);
  if (static_cast<int64_t>(getIndices().size()) != type.getRank())
    return emitOpError() << "takes " << getIndices().size()
                         << " indices but the destination has rank " << type.getRank();
  if (getValue().getType() != type.getElementType())
    return emitOpError() << "value type " << getValue().getType()
                         << " does not match the destination's element type "
                         << type.getElementType();
  return verifyInsideKernel(*this);
}

LogicalResult AtomicAddTileOp::verify() {
  if (failed(verifyCopyRegions(*this)))
    return failure();
  MemoryScope from = getMemoryScope(bufferType(getSrc()));
  MemoryScope to = getMemoryScope(bufferType(getDst()));
  if (from != MemoryScope::shared && from != MemoryScope::fragment)
    return emitOpError() << "needs a shared or fragment source, got " << describeScope(from);
  if (to != MemoryScope::global)
    return emitOpError() << "needs a global destination, got " << describeScope(to);
  Type srcElement = bufferType(getSrc()).getElementType();
  Type dstElement = bufferType(getDst()).getElementType();
  if (srcElement != dstElement || !isa<FloatType>(dstElement))
    return emitOpError() << "adds " << srcElement << " into " << dstElement
                         << "; it takes one float type on both sides";
  return verifyInsideKernel(*this);
}

namespace {
/// What tl.in_turn and tl.last_to_arrive ask of their block counter and
/// place: an element of a global i32 tensor, a whole block (not a thread of
/// a parallel loop) and a body without arguments. `what` names the counter
/// in the errors.
LogicalResult verifyBlockCounter(Operation *op, Value counter, ValueRange indices, Block &body,
                                 StringRef what) {
  MemRefType type = bufferType(counter);
  MemoryScope scope = getMemoryScope(type);
  if (scope != MemoryScope::global)
    return op->emitOpError() << "needs its " << what << " in a global tensor, got "
                             << describeScope(scope);
  if (static_cast<int64_t>(indices.size()) != type.getRank())
    return op->emitOpError() << "takes " << indices.size() << " indices but the " << what
                             << " has rank " << type.getRank();
  if (op->getParentOfType<ParallelOp>())
    return op->emitOpError("waits for the whole block, so it cannot be inside a tl.parallel");
  if (body.getNumArguments() != 0)
    return op->emitOpError("body takes no arguments");
  return verifyInsideKernel(op);
}
} // namespace

LogicalResult InTurnOp::verify() {
  // A block cannot wait for a turn it holds; inside tl.last_to_arrive only
  // the last block would take its turn, and the turns after it never come.
  if ((*this)->getParentOfType<InTurnOp>())
    return emitOpError("cannot be inside another tl.in_turn (a block takes one turn at a time)");
  if ((*this)->getParentOfType<LastToArriveOp>())
    return emitOpError("cannot be inside a tl.last_to_arrive (only the last block would take its "
                       "turn; the other blocks' turns would never come)");
  return verifyBlockCounter(*this, getCounter(), getIndices(), getBody().front(), "turn counter");
}

LogicalResult PingpongOp::verify() {
  // Its lowering orders whole warpgroups: a thread of a parallel loop cannot
  // take a turn, and turns inside turns would wait for themselves.
  if ((*this)->getParentOfType<ParallelOp>())
    return emitOpError("orders whole warpgroups, so it cannot be inside a tl.parallel");
  if ((*this)->getParentOfType<PingpongOp>())
    return emitOpError("cannot be inside another tl.pingpong (a warpgroup takes one turn at a "
                       "time)");
  if ((*this)->getParentOfType<LastToArriveOp>())
    return emitOpError("cannot be inside a tl.last_to_arrive (the turns chain the warpgroups "
                       "from the kernel's body; only one block runs its body)");
  Block &body = getBody().front();
  if (body.getNumArguments() != 0)
    return emitOpError("body takes no arguments");
  if (body.empty())
    return emitOpError("has an empty body; it orders the issue of gemms");
  // Only gemms: anything that meets the block at a barrier (a copy through
  // shared memory, a reduction across warps) would wait for warpgroups that
  // wait for this one's turn.
  for (Operation &op : body)
    if (!isa<GemmOp, PingpongOp>(op)) // (a pingpong in it refuses itself)
      return op.emitOpError("cannot be in a tl.pingpong: its body holds gemms only (whose "
                            "issue it orders); move this before or after it");
  return verifyInsideKernel(*this);
}

LogicalResult LastToArriveOp::verify() {
  // The block that runs the body arrived last; inside another body, which
  // only the last block runs, the others would never arrive.
  if ((*this)->getParentOfType<LastToArriveOp>())
    return emitOpError("cannot be inside another tl.last_to_arrive (only one block runs its body)");
  if (std::optional<int64_t> arrivals = getConstantIntValue(getArrivals());
      arrivals && *arrivals < 1)
    return emitOpError() << "waits for " << *arrivals
                         << " arrivals; a block that arrives makes at least one";
  return verifyBlockCounter(*this, getCounter(), getIndices(), getBody().front(),
                            "arrival counter");
}

} // namespace tl
