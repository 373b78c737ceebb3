// The on-disk cache of compiled GPU kernels. Light header.
//
// Key: a 128-bit hash of the program's printed IR, the compiler version and the
// target. Entries are written to a temporary file and renamed into place (safe
// with many writers, threads or processes); each ends with a checksum, so a
// corrupt or truncated entry reads as a miss and is rebuilt.
#pragma once

#include "tl/Compiler/GPUCompiler.h"
#include "tl/Compiler/Ptxas.h"

#include <optional>
#include <string>

namespace tl::runtime {

/// A stable 128-bit hash of `text`, as 32 hex digits (cache keys).
std::string contentHash(const std::string &text);

class KernelCache {
public:
  explicit KernelCache(std::string directory);
  /// $TLC_CACHE_DIR, else $XDG_CACHE_HOME/tlc, else $HOME/.cache/tlc.
  static std::string defaultDirectory();
  /// False when $TLC_CACHE is "0" or "off".
  static bool enabledByEnvironment();

  /// The key of `program` compiled for `arch`.
  static std::string key(const ModuleHandle &program, const std::string &arch);

  std::optional<GPUBinary> load(const std::string &key) const;
  /// Best effort: a cache that cannot be written is not an error.
  void store(const std::string &key, const GPUBinary &binary) const;
  /// Removes every entry (the autotuner's choices too).
  void clear() const;
  const std::string &directory() const { return directory_; }

private:
  std::string path(const std::string &key) const;
  std::string directory_;
};

/// Writes `contents` to `path` through a temporary file renamed into place
/// (readers see the old file or the new one, never half of one); creates the
/// directory. Best effort: false when it could not.
bool writeFileAtomically(const std::string &path, const std::string &contents);

/// TLC_TIMING=1 (or "on"): the runtime's compiles print how long each step
/// took to stderr (GPUCompileOptions::timing, and ptxas's time).
bool compileTimingRequested();

/// Adds ptxas's cubin to `binary` when a ptxas is there (tl/Compiler/Ptxas.h),
/// and what ptxas reports of a slow path (slowPathNotes) to its warnings;
/// when ptxas fails, warns on stderr and leaves the PTX to the driver's JIT.
void assembleWherePossible(GPUBinary &binary);

/// The options the runtime compiles with: `sharedMemoryLimit` (0: the arch's),
/// and the environment's switches (TLC_WGMMA=0, TLC_TMA=0, TLC_WARP_SPECIALIZE=0,
/// TLC_STMATRIX=0, TLC_LOW_WORD_DESCRIPTORS=0, TLC_TIMING; off by default:
/// TLC_ELIDE_ASYNC_BARRIERS=1, TLC_EARLY_TILE_HAND_BACK=1). `tl-mha --ptx`
/// compiles with them too.
GPUCompileOptions gpuCompileOptions(std::int64_t sharedMemoryLimit = 0);
/// What a cache key says of the target: the arch and every option that
/// changes the code (a kernel compiled under one is not served under another).
std::string gpuCacheTarget(const std::string &arch, const GPUCompileOptions &options);

/// compileForGPU (plus the cubin, where possible) through this process's in-memory cache and the
/// default disk cache (unless disabled by `useCache` or $TLC_CACHE=0). `hit` tells whether a cache
/// served it. `sharedMemoryLimit` as GPUCompileOptions' (0: the arch's); a kernel cached under one
/// limit is not served under another.
GPUBinary compileForGPUCached(const ModuleHandle &program, const std::string &arch,
                              bool useCache = true, bool *hit = nullptr,
                              std::int64_t sharedMemoryLimit = 0);

} // namespace tl::runtime
