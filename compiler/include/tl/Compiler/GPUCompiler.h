//===- GPUCompiler.h - a tl program compiled to PTX -----------------------===//
//
// Light header (no MLIR): the runtime and tools use it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "tl/Compiler/ModuleHandle.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tl {

/// A TMA tensor map a kernel takes after its parameters (a 128-byte
/// CUtensorMap by value): the runtime encodes it at launch from parameter
/// `param`'s device address, shape and dtype (row-major), for boxes of `box`
/// elements landing in shared memory with a `swizzle`-byte swizzle; elements
/// past the tensor's end read as zeros.
struct TensorMapParam {
  std::int64_t param = 0;        // index into GPUBinary::params
  std::vector<std::int64_t> box; // the tensor's dimensions, outermost first
  std::int64_t swizzle = 0;      // bytes: 0, 32, 64 or 128
  bool operator==(const TensorMapParam &) const = default;
};

/// What launching a compiled kernel needs.
struct GPUBinary {
  std::string name;               // the kernel's entry symbol
  std::string arch;               // "sm_80", "sm_90a", ...
  std::string ptx;                // PTX text
  std::string cubin;              // ptxas's cubin for `arch`; empty: the driver JITs the PTX
  std::vector<std::int64_t> grid; // x, y, z extents (1 to 3)
  std::int64_t threads = 0;       // per block
  std::int64_t sharedBytes = 0;   // dynamic shared memory per block
  std::vector<Param> params;      // one bare device pointer each
  std::string fragmentLayout;     // "wgmma", "mma", or "row: <why not mma>"
  std::vector<TensorMapParam> tensorMaps; // parameters after `params`, in order
  /// What makes this kernel slower than it could be, for the author: gemms
  /// off the tensor cores (Row fragments, with the reason and its line), and
  /// what ptxas or the driver's JIT reported (spills, C75xx notes; see
  /// slowPathNotes in Ptxas.h). tlc prints them; the runtime prints them when
  /// it compiles or loads the kernel (TLC_WARNINGS=0 keeps them quiet) and
  /// keeps them in GPUKernel::warnings.
  std::vector<std::string> warnings;
};

/// The dynamic shared memory one block may opt in to on `arch`, in bytes:
/// 227 KiB on sm_90/sm_90a (and sm_100), 163 KiB on sm_80/sm_87, 99 KiB on
/// sm_86/sm_89/sm_120, 96 KiB on sm_70, 64 KiB on sm_75; 48 KiB (what every
/// architecture gives without opting in) for one this table does not know.
std::int64_t sharedMemoryLimit(const std::string &arch);

struct GPUCompileOptions {
  /// Every pass's output goes to stderr.
  bool printIRAfterAll = false;
  /// How long each step took goes to stderr: verification, every MLIR pass,
  /// LLVM IR translation, LLVM's optimization, NVPTX code generation
  /// (tlc --timing; TLC_TIMING=1 for the runtime's compiles).
  bool timing = false;
  /// The shared memory a block may use, in bytes; 0: sharedMemoryLimit(arch).
  /// The runtime passes the device's own when it compiles for the GPU it has.
  std::int64_t sharedMemoryLimit = 0;
  /// Rewrites that may change results in the last bit (in unrolled parallel
  /// loops, x / y becomes x * (1 / y) with 1 / y computed once). On by
  /// default, as nvcc's --use_fast_math and the fastest attention kernels.
  bool fastMath = true;
  /// On sm_90a, kernels whose every gemm can read both operands from shared
  /// memory run them as wgmma (warpgroup accumulators, descriptor-addressed
  /// swizzled tiles); false keeps mma.sync everywhere.
  bool wgmma = true;
  /// On the wgmma path, pipelined loops load their tiles by TMA on mbarriers
  /// where every copy allows it (else cp.async); false keeps cp.async.
  bool tma = true;
  /// A TMA loop that allows it (PipelinePlan.h) gets a producer warpgroup that
  /// issues its loads on full/empty mbarriers; false keeps every thread a
  /// consumer, meeting at a barrier each iteration.
  bool warpSpecialize = true;
  /// tl-elide-barriers also removes the wgmma loops' barriers that order
  /// nothing (GPUPipelineOptions::elideAsyncBarriers; TLC_ELIDE_ASYNC_BARRIERS=1
  /// for the runtime's compiles, `tlc --elide-async-barriers`). Off: it timed
  /// level with the default (results/2026-12-05-session33.md).
  bool elideAsyncBarriers = false;
  /// On sm_90 and sm_90a, an Mma fragment's 16-bit stores to a shared tile
  /// (copies, and unrolled parallel loops: P^T and dS^T in the backward) go
  /// as one stmatrix.x4 per 16x16 block, not four 32-bit stores
  /// (GPUPipelineOptions::stmatrix; TLC_STMATRIX=0 turns it off for the
  /// runtime's compiles, `tlc --no-stmatrix`). On since session 36: with
  /// lowWordDescriptors the staged backward took 5-6% less time at D = 128
  /// non-causal and D = 256, the same at D = 128 causal, 2-5% more at D = 64
  /// causal (H100, results/2026-12-05-session35.md), whose main kernel ncu
  /// finds level with and without it (results/2026-12-05-session37.md).
  bool stmatrix = true;
  /// The wgmma path's descriptors: each step adds 32 bits to the low word
  /// (the start address) where a 64-bit add costs ptxas an add with carry and
  /// moves per wgmma (GPUPipelineOptions::lowWordDescriptors;
  /// TLC_LOW_WORD_DESCRIPTORS=0 turns it off for the runtime's compiles, `tlc
  /// --no-low-word-descriptors`). On since session 36, with stmatrix.
  bool lowWordDescriptors = true;
  /// In turns (a deterministic backward's dQ tile reduce-added by the producer
  /// warpgroup), the producer hands the tile back to the consumers once its
  /// reduce-add has read it, before the sums complete and it passes the turn,
  /// as it does out of turns (GPUPipelineOptions::earlyTileHandBack;
  /// TLC_EARLY_TILE_HAND_BACK=1 for the runtime's compiles, `tlc
  /// --early-tile-hand-back`). Off: session 38 found the consumers of the
  /// deterministic D = 128 backward waiting for the tile in 34% of the
  /// kernel's stall samples (results/2026-12-05-session38.md), but on the
  /// H200 it made that backward 1-6% slower, level at D = 64
  /// (results/2026-12-05-session39.md).
  bool earlyTileHandBack = false;
};

/// Lowers `program` (buildGPUPipeline) and emits PTX for `arch` (sm_80,
/// sm_86, sm_87, sm_89, sm_90 or sm_90a; another is std::invalid_argument)
/// through LLVM's NVPTX backend. Throws tl::Error at the author's line on a
/// compile error, resource limits of `arch` included (shared memory: at the
/// alloc_shared whose tile crosses the limit).
GPUBinary compileForGPU(const ModuleHandle &program, const std::string &arch = "sm_90a",
                        const GPUCompileOptions &options = {});

/// The kernel at an intermediate stage of the same path, as text: "planned"
/// (the tl program with the planning passes' attributes: fragment layouts,
/// asynchronous copies, shared-memory offsets), "thread" (after
/// convert-tl-to-gpu: per-thread gpu/nvvm/scf ops) or "llvm" (the
/// optimized LLVM IR that NVPTX compiles for `arch`). Errors as compileForGPU.
std::string emitGPUStage(const ModuleHandle &program, const std::string &arch,
                         const std::string &stage, const GPUCompileOptions &options = {});

} // namespace tl
