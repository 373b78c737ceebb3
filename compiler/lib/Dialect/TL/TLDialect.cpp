//===- TLDialect.cpp - tl dialect, attributes, enums ----------------------===//
#include "tl/Dialect/TL/TLDialect.h"
#include "tl/Compiler/CrashHandler.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

#include "tl/Dialect/TL/TLDialect.cpp.inc"
#include "tl/Dialect/TL/TLEnums.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "tl/Dialect/TL/TLAttrs.cpp.inc"

namespace tl {

void TLDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "tl/Dialect/TL/TLAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "tl/Dialect/TL/TLOps.cpp.inc"
      >();
}

TLDialect &tlDialect(MLIRContext *context) { return *context->getOrLoadDialect<TLDialect>(); }

LogicalResult RowLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError, int64_t split) {
  if (split < 1 || split > 32 || (split & (split - 1)))
    return emitError() << "a row layout's split must be a power of two from 1 to 32, got " << split;
  return success();
}

static LogicalResult verifyWarps(function_ref<InFlightDiagnostic()> emitError, int64_t warpsM,
                                 int64_t warpsN) {
  if (warpsM < 1 || warpsN < 1 || warpsM * warpsN > 32)
    return emitError() << "an mma layout's warp grid must be positive and at most 32 warps, got "
                       << warpsM << " x " << warpsN;
  return success();
}

LogicalResult MmaLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError, int64_t warpsM,
                                    int64_t warpsN) {
  return verifyWarps(emitError, warpsM, warpsN);
}

LogicalResult MmaRowLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError, int64_t warpsM,
                                       int64_t warpsN) {
  return verifyWarps(emitError, warpsM, warpsN);
}

LogicalResult WgmmaLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError, int64_t warpsM,
                                      int64_t warpsN) {
  return verifyWarps(emitError, warpsM, warpsN);
}

LogicalResult WgmmaRowLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                         int64_t warpsM, int64_t warpsN) {
  return verifyWarps(emitError, warpsM, warpsN);
}

LogicalResult TensorMapAttr::verify(function_ref<InFlightDiagnostic()> emitError, int64_t param,
                                    ArrayRef<int64_t> box, int64_t swizzle) {
  if (param < 0)
    return emitError() << "a tensor map names a parameter by its index, got " << param;
  if (box.empty() || box.size() > 5 ||
      llvm::any_of(box, [](int64_t extent) { return extent < 1 || extent > 256; }))
    return emitError() << "a TMA box has 1 to 5 dimensions of 1 to 256 elements";
  if (swizzle != 0 && swizzle != 32 && swizzle != 64 && swizzle != 128)
    return emitError() << "a TMA swizzle is 0, 32, 64 or 128 bytes, got " << swizzle;
  return success();
}

int64_t IndexMapLayoutAttr::getPhysicalSize() const {
  int64_t size = 1;
  for (int64_t extent : getPhysicalShape())
    size *= extent;
  return size;
}

MemoryScope getMemoryScope(MemRefType type) {
  if (auto scope = llvm::dyn_cast_or_null<MemoryScopeAttr>(type.getMemorySpace()))
    return scope.getValue();
  return MemoryScope::global;
}

MemRefType getBufferType(llvm::ArrayRef<int64_t> shape, Type elementType, MemoryScope scope) {
  Attribute space;
  if (scope != MemoryScope::global)
    space = MemoryScopeAttr::get(elementType.getContext(), scope);
  return MemRefType::get(shape, elementType, MemRefLayoutAttrInterface(), space);
}

llvm::SmallVector<int64_t> nonUnitExtents(llvm::ArrayRef<int64_t> sizes) {
  llvm::SmallVector<int64_t> kept;
  for (int64_t size : sizes)
    if (size != 1)
      kept.push_back(size);
  return kept;
}

void registerTLDialects(DialectRegistry &registry) {
  registry.insert<TLDialect, arith::ArithDialect, math::MathDialect, memref::MemRefDialect,
                  scf::SCFDialect, func::FuncDialect>();
  // Crash reports of every tool and of the library name the running pass.
  registerCrashReportContext(registry);
}

} // namespace tl
