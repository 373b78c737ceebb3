//===- KernelPlacement.cpp - where a tl.kernel sits and what it sees ------===//
//
// The GPU lowering moves a kernel's body into a gpu.func with its function's
// signature and drops the rest of the function; the CPU lowering splices the
// body into the function's entry block. Anything else in the function, a
// second or nested kernel, or a value defined outside the kernel and used in
// it, was dropped, misplaced or read freed memory (a constant from outside
// became the thread id; a nested kernel segfaulted). Hence these checks.
//
//===----------------------------------------------------------------------===//
#include "KernelPlacement.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <optional>
#include <string>

using namespace mlir;

namespace tl {
namespace {

/// "%c0", "%arg1": a value as the printed IR names it.
std::string describeValue(Value value) {
  std::string text;
  llvm::raw_string_ostream os(text);
  // assumeVerified: the printer would verify the function first, which runs
  // the verifier that is asking.
  value.printAsOperand(os, OpPrintingFlags().assumeVerified());
  return text;
}

/// Whether the bytes of a static shape fit in 64 bits.
bool holdsBytes(MemRefType type) {
  std::optional<int64_t> bytes = (type.getElementTypeBitWidth() + 7) / 8;
  for (int64_t extent : type.getShape())
    if (!(bytes = llvm::checkedMul(*bytes, extent)))
      return false;
  return true;
}

/// The function's arguments are global tensors: memrefs of static, positive
/// extents, row-major, without a memory space, of integers or floats.
LogicalResult verifyKernelFunctionArguments(KernelOp kernel, func::FuncOp func) {
  for (auto [index, arg] : llvm::enumerate(func.getArguments())) {
    auto type = dyn_cast<MemRefType>(arg.getType());
    bool tensor = type && type.hasStaticShape() && type.getLayout().isIdentity() &&
                  !type.getMemorySpace() && type.getElementType().isIntOrFloat() &&
                  llvm::all_of(type.getShape(), [](int64_t extent) { return extent > 0; });
    if (!tensor)
      return kernel.emitOpError()
             << "takes its global tensors from the arguments of @" << func.getSymName()
             << ", but argument " << index << " has type " << arg.getType()
             << " (a global tensor is a memref of static, positive extents with "
                "the identity layout, no memory space and integer or float elements)";
    if (!holdsBytes(type))
      return kernel.emitOpError() << "argument " << index << " of @" << func.getSymName() << " ("
                                  << arg.getType() << ") holds more than 2^63 bytes";
  }
  return success();
}

/// Every value the kernel's body uses is defined inside the kernel or is an
/// argument of its function.
LogicalResult verifyKernelCaptures(KernelOp kernel) {
  Region &body = kernel.getBody();
  Block *arguments = &kernel->getParentRegion()->front();
  WalkResult result =
      body.walk(
          [&](Operation *user) {
            for (Value value : user->getOperands()) {
              // A null or unlinked operand (invalid IR the parser let through) is
              // MLIR's to report, as its function's isolation check does.
              if (!value || !value.getParentRegion())
                continue;
              if (body.isAncestor(value.getParentRegion()))
                continue;
              if (auto arg = dyn_cast<BlockArgument>(value); arg && arg.getOwner() == arguments)
                continue;
              InFlightDiagnostic diag =
                  user->emitOpError()
                  << "uses " << describeValue(value)
                  << ", which is defined outside its tl.kernel; a kernel uses only its own "
                     "values and its function's tensor arguments: define it inside the kernel";
              diag.attachNote(value.getLoc()) << "defined here";
              return WalkResult::interrupt();
            }
            return WalkResult::advance();
          });
  return failure(result.wasInterrupted());
}

/// The function holds the kernel and its return, nothing else.
LogicalResult verifyKernelAlone(KernelOp kernel, func::FuncOp func) {
  for (Operation &sibling : *kernel->getBlock()) {
    if (&sibling == kernel.getOperation() || isa<func::ReturnOp>(sibling))
      continue;
    if (isa<KernelOp>(sibling)) {
      Operation *second = kernel->isBeforeInBlock(&sibling) ? &sibling : kernel.getOperation();
      return second->emitOpError() << "is a second tl.kernel in @" << func.getSymName()
                                   << "; a function holds one kernel";
    }
    return sibling.emitOpError()
           << "is outside the tl.kernel of @" << func.getSymName()
           << ", whose function holds the kernel and its return only; move it into "
              "the kernel";
  }
  return success();
}

} // namespace

LogicalResult verifyKernelPlacement(KernelOp kernel) {
  if (kernel->getParentOfType<KernelOp>())
    return kernel.emitOpError("must not be nested inside another tl.kernel");
  Operation *parent = kernel->getParentOp();
  auto func = dyn_cast_or_null<func::FuncOp>(parent);
  if (!func) {
    InFlightDiagnostic diag = kernel.emitOpError()
                              << "must be directly inside a func.func (the program's function)";
    if (parent)
      diag << ", not inside '" << parent->getName() << "'";
    return diag;
  }
  if (func.getNumResults() != 0)
    return kernel.emitOpError() << "is in @" << func.getSymName() << ", which returns "
                                << func.getNumResults()
                                << " value(s); a kernel's function returns nothing (outputs are "
                                   "tensors marked tl.output)";
  if (!llvm::hasSingleElement(func.getBody()))
    return kernel.emitOpError()
           << "is in @" << func.getSymName() << ", which has " << func.getBody().getBlocks().size()
           << " blocks; a kernel's function is one block: the kernel and the return";
  return success();
}

LogicalResult verifyKernelSurroundings(KernelOp kernel) {
  auto func = cast<func::FuncOp>(kernel->getParentOp()); // verifyKernelPlacement checked
  if (failed(verifyKernelCaptures(kernel)) || failed(verifyKernelAlone(kernel, func)))
    return failure();
  return verifyKernelFunctionArguments(kernel, func);
}

} // namespace tl
