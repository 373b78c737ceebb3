//===- IndexMapRange.h - the values an index-map layout produces ----------===//
//
// An index-map layout (#tl.index_map) sends every logical index of a buffer
// to a physical index; the lowerings load and store at that physical index
// without a bounds check. The verifier therefore bounds each result of the
// map over the buffer's whole logical domain, by interval arithmetic, and
// rejects maps that divide by zero or a negative number or that can leave the
// physical shape.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "mlir/IR/AffineExpr.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <string>

namespace tl {

/// The closed range [min, max] of the values an expression takes.
struct IndexRange {
  int64_t min = 0, max = 0;
};

/// The range of `expr` when each dimension d<i> ranges over `dims[i]`. Fails,
/// with the reason in `problem`, where the expression divides (floordiv,
/// ceildiv, mod) by anything but a positive constant, uses a symbol or a
/// dimension outside `dims`, or where its arithmetic can overflow 64 bits.
mlir::FailureOr<IndexRange> boundIndexExpr(mlir::AffineExpr expr, mlir::ArrayRef<IndexRange> dims,
                                           std::string &problem);

} // namespace tl
