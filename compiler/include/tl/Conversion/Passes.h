//===- Passes.h - tl conversion passes ------------------------------------===//
#pragma once

#include "mlir/Pass/Pass.h"

namespace tl {

#define GEN_PASS_DECL
#include "tl/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tl/Conversion/Passes.h.inc"

} // namespace tl
