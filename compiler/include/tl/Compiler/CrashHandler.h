//===- CrashHandler.h - a stack and the running pass when tlc crashes -----===//
//
// A compiler that crashes should say where: LLVM's crash handler prints the
// stack and, with the entries registered here, the MLIR pass (and rewrite
// pattern) that was running. The tools install it at startup; the library's
// entry points that compile (tl::jit, CPUKernel, GPUKernel) install it once
// per process, which an application that handles crashes itself can turn off
// with TLC_CRASH_HANDLER=0. No MLIR or LLVM inside: light sources include it.
//
//===----------------------------------------------------------------------===//
#pragma once

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace tl {

/// For a tool's main: on a fatal signal, print the program's arguments, what
/// the compiler was doing and the stack, then die of the signal.
void installCrashHandler(int argc, const char *const *argv);

/// For the library: the same, once per process, unless the environment sets
/// TLC_CRASH_HANDLER=0.
void installCrashHandlerUnlessDisabled();

/// Makes every MLIR context created with `registry` name, in a crash report,
/// the pass and the pattern it was running (registerTLDialects calls it).
void registerCrashReportContext(mlir::DialectRegistry &registry);

} // namespace tl
