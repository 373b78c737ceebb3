//===- GPUCompiler.h - a tl program compiled to PTX -----------------------===//
//
// Light header (no MLIR): the runtime and tools use it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "tl/dsl/Program.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tl {

/// What launching a compiled kernel needs.
struct GPUBinary {
  std::string name;                   // the kernel's entry symbol
  std::string arch;                   // "sm_80", "sm_90a", ...
  std::string ptx;                    // PTX text
  std::vector<std::int64_t> grid;     // x, y, z extents (1 to 3)
  std::int64_t threads = 0;           // per block
  std::int64_t sharedBytes = 0;       // dynamic shared memory per block
  std::vector<dsl::Param> params;     // one bare device pointer each
  std::string fragmentLayout;         // "mma", or "row: <why not mma>"
};

/// Lowers `program` (buildGPUPipeline) and emits PTX for `arch` through
/// LLVM's NVPTX backend. Throws tl::dsl::Error at the author's line on a
/// compile error. With `printIRAfterAll`, every pass's output goes to stderr.
GPUBinary compileForGPU(const dsl::Program &program,
                        const std::string &arch = "sm_90a",
                        bool printIRAfterAll = false);

} // namespace tl
