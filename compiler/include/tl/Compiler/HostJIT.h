//===- HostJIT.h - a tl program compiled for this machine's CPU -----------===//
//
// Light header (no MLIR): the runtime's CPU kernels use it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tl/Compiler/ModuleHandle.h"

namespace tl {

class HostExecutable {
public:
  /// The block function: `void(void **args)`, args pointing at each memref
  /// descriptor field (allocated, aligned, offset, sizes, strides) of every
  /// parameter in order, then at each block index.
  using Entry = void (*)(void **);

  /// Verifies, lowers (buildCPUPipeline) and JIT-compiles `program`. Throws
  /// tl::Error with the author's location on a compile error. With `timing`,
  /// how long each step took goes to stderr.
  static std::unique_ptr<HostExecutable> compile(const ModuleHandle &program, bool timing = false);
  ~HostExecutable();

  Entry entry() const;
  const std::vector<std::int64_t> &grid() const;
  std::int64_t threads() const;
  /// Bytes of on-chip buffers (shared, fragment, local: whole tiles here) one
  /// block keeps on the stack of the thread that runs it.
  std::int64_t onChipBytes() const;
  /// A launch of a program with tl.in_turn fails when a block's turn does not
  /// come within ten seconds (turns out of launch order): the blocks then
  /// skip their turns' bodies and turnFailed() says so after the launch.
  void clearTurnFailure() const;
  bool turnFailed() const;

private:
  struct Impl;
  explicit HostExecutable(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// The program at an intermediate stage of the CPU path, as text: "thread"
/// (after convert-tl-to-cpu: loop nests over memrefs) or "llvm" (the optimized
/// LLVM IR the host JIT compiles).
std::string emitCPUStage(const ModuleHandle &program, const std::string &stage,
                         bool printIRAfterAll = false);

} // namespace tl
