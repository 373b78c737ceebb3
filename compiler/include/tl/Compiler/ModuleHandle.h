//===- ModuleHandle.h - a tl program as the compiler takes it -------------===//
//
// Light header (no MLIR): the eDSL produces a ModuleHandle (dsl::Program
// converts to one), `tlc` parses one from `tl` text, and every compiler entry
// point (compileForGPU, HostExecutable::compile, ...) and the runtime's
// kernels take one. It shares an MLIR context and module that hold one
// func.func with a tl.kernel, with the program's name and parameters.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "tl/Support/Param.h"

#include <memory>
#include <string>
#include <vector>

namespace tl {

class ModuleHandle {
public:
  /// The MLIR behind the handle (tl/Compiler/ModuleState.h).
  struct State;

  explicit ModuleHandle(std::shared_ptr<State> state);

  /// A program from `tl` dialect text: a module with one func.func holding a
  /// tl.kernel; parameters named by their `tl.name` attribute, outputs marked
  /// `tl.output`. Throws tl::Error at `sourceName`:line:col on a parse or
  /// verifier error.
  static ModuleHandle parse(const std::string &text, const std::string &sourceName);

  const std::string &name() const;
  const std::vector<Param> &params() const;
  /// The tl IR, printed (with source locations when `withLocations`).
  std::string str(bool withLocations = false) const;
  /// Verifies the whole program; throws tl::Error at the offending line.
  void verify() const;

  State &state() const { return *state_; }

private:
  std::shared_ptr<State> state_;
};

} // namespace tl
