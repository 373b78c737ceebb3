// A tl program: named parameters (global tensors, some of them outputs in the
// sense of TileLang's out_idx) and one kernel, built into a ModuleHandle that
// the compiler and the runtime take. Light header: no MLIR.
#pragma once

#include "tl/Compiler/ModuleHandle.h"
#include "tl/dsl/Body.h"
#include "tl/dsl/Buffer.h"

#include <memory>
#include <string>
#include <vector>

namespace tl::dsl {

namespace detail {
struct ProgramImpl;
}

/// One parameter of a program's signature.
using Param = tl::Param;

class Program {
public:
  explicit Program(const std::string &name, SourceLoc loc = SourceLoc::current());
  ~Program();
  Program(Program &&) noexcept;
  Program &operator=(Program &&) noexcept;

  /// An input tensor parameter (T.Tensor).
  Buffer tensor(const std::string &name, std::vector<std::int64_t> shape, DType dtype,
                SourceLoc loc = SourceLoc::current());
  /// An output parameter: the runtime allocates and returns it (out_idx).
  Buffer output(const std::string &name, std::vector<std::int64_t> shape, DType dtype,
                SourceLoc loc = SourceLoc::current());

  /// The kernel (T.Kernel): grid extents (x, y, z), threads per block, and a
  /// body taking one block index per grid dimension.
  template <typename F>
  void kernel(std::vector<std::int64_t> grid, std::int64_t threads, F &&body,
              SourceLoc loc = SourceLoc::current()) {
    buildKernel(std::move(grid), threads, detail::bodyArity<F>(), detail::makeBody(body), loc);
  }
  /// The kernel with TileLang's default of 128 threads.
  template <typename F>
  void kernel(std::vector<std::int64_t> grid, F &&body, SourceLoc loc = SourceLoc::current()) {
    kernel(std::move(grid), 128, body, loc);
  }

  /// A program from `tl` dialect text (ModuleHandle::parse). Throws
  /// tl::dsl::Error at `sourceName`:line:col on a parse or verifier error.
  static Program parse(const std::string &text, const std::string &sourceName);

  const std::string &name() const;
  const std::vector<Param> &params() const;
  /// Positions of the output parameters, as TileLang's out_idx.
  std::vector<int> outputIndices() const;
  /// The tl IR, printed (with source locations when `withLocations`).
  std::string str(bool withLocations = false) const;
  /// Verifies the whole program; throws tl::dsl::Error.
  void verify() const;

  /// The program as the compiler and the runtime take it (shared: it stays
  /// valid after the Program is gone). Every entry point that takes a
  /// ModuleHandle takes a Program too, through this conversion.
  const ModuleHandle &module() const;
  operator const ModuleHandle &() const { return module(); }

private:
  explicit Program(std::unique_ptr<detail::ProgramImpl> impl);
  void buildKernel(std::vector<std::int64_t> grid, std::int64_t threads, int arity,
                   const detail::Body &body, SourceLoc loc);
  std::unique_ptr<detail::ProgramImpl> impl_;
};

} // namespace tl::dsl
