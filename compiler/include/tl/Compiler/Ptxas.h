//===- Ptxas.h - PTX to cubin with the CUDA toolkit's assembler -----------===//
//
// Light header. The compiler emits PTX; where the CUDA toolkit's ptxas is
// installed, the runtime and tlc assemble it to a cubin (no driver JIT at
// load time, and ptxas's register and spill report).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <vector>

namespace tl {

/// The ptxas to use: $TLC_PTXAS when set ("0" or "off": none), else ptxas on
/// PATH, else /usr/local/cuda/bin/ptxas; empty when there is none.
std::string findPtxas();

/// Assembles `ptx` for `arch` with `ptxas` into cubin bytes. Throws
/// std::runtime_error with ptxas's own messages when it fails. `report`, when
/// given, receives the -v report (registers, spills).
std::string assembleCubin(const std::string &ptxas, const std::string &ptx, const std::string &arch,
                          std::string *report = nullptr);

/// The lines of a ptxas -v report (or of the driver's JIT info log, which
/// prints the same) that signal a slow kernel: register spills (non-zero
/// spill stores or loads), performance notes (C75xx: wgmma serialised,
/// setmaxnreg ignored, ...) and warnings. Empty for a clean report.
std::vector<std::string> slowPathNotes(const std::string &report);

} // namespace tl
