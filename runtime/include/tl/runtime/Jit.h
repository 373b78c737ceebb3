// tl::jit: a program in, a callable kernel out, on the GPU when there is one
// and on the CPU backend otherwise, like @tilelang.jit(out_idx=...):
//
//   auto kernel = tl::jit(flashattn_fwd(...));
//   std::vector<tl::runtime::HostTensor> o_lse = (*kernel)({&q, &k, &v});
//
// Light header.
#pragma once

#include "tl/runtime/Kernel.h"

#include <memory>
#include <string>

namespace tl {

enum class Target { automatic, cpu, gpu };

struct JitOptions {
  Target target = Target::automatic; // automatic: the GPU if the driver has one
  std::string arch;                  // GPU: empty means the device's own
  bool cache = true;                 // GPU: the on-disk cache (runtime/KernelCache.h)
};

/// Whether `target` means the GPU: gpu, or automatic with a CUDA driver there.
bool runsOnGPU(Target target);

std::unique_ptr<runtime::Kernel> jit(const ModuleHandle &program, const JitOptions &options = {});

} // namespace tl
