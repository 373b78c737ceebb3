// The on-disk GPU kernel cache: keys, the entry format, atomic writes.
#include "tl/runtime/KernelCache.h"

#include "tl/CompilerFingerprint.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>
#include <unistd.h>
#include <unordered_map>

namespace fs = std::filesystem;

namespace tl::runtime {
namespace {

/// Changes whenever the compiler's output for the same IR may: a hash of the
/// compiler's sources and the LLVM it links (compiler/CMakeLists.txt writes
/// it at build time), so an entry cannot outlive the code that made it.
constexpr const char *kCompilerVersion = TL_COMPILER_FINGERPRINT;
constexpr const char *kMagic = "tlc-kernel-cache-v3"; // v3: dtypes by name
/// The cubin field of an entry whose PTX ptxas failed to assemble.
constexpr const char *kNoCubin = "tlc: ptxas failed";

std::uint64_t fnv1a(const std::string &text, std::uint64_t seed) {
  std::uint64_t hash = seed;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

std::string hex(std::uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
  return text;
}

/// Length-prefixed fields: "<size>\n<bytes>\n".
void putField(std::ostringstream &out, const std::string &field) {
  out << field.size() << '\n' << field << '\n';
}

bool getField(std::istringstream &in, std::string &field) {
  std::size_t size = 0;
  if (!(in >> size) || in.get() != '\n' || size > (1u << 30))
    return false;
  field.resize(size);
  if (!in.read(field.data(), static_cast<std::streamsize>(size)))
    return false;
  return in.get() == '\n';
}

std::string serialize(const GPUBinary &b) {
  std::ostringstream out;
  putField(out, b.name);
  putField(out, b.arch);
  std::ostringstream grid;
  for (std::int64_t g : b.grid)
    grid << g << ' ';
  putField(out, grid.str());
  putField(out, std::to_string(b.threads));
  putField(out, std::to_string(b.sharedBytes));
  putField(out, b.fragmentLayout);
  putField(out, std::to_string(b.params.size()));
  for (const Param &p : b.params) {
    std::ostringstream shape;
    for (std::int64_t s : p.shape)
      shape << s << ' ';
    putField(out, p.name);
    putField(out, shape.str());
    putField(out, toString(p.dtype)); // by name: the enum's order may change
    putField(out, p.output ? "1" : "0");
  }
  putField(out, std::to_string(b.warnings.size()));
  for (const std::string &warning : b.warnings)
    putField(out, warning);
  putField(out, std::to_string(b.tensorMaps.size()));
  for (const TensorMapParam &map : b.tensorMaps) {
    std::ostringstream box;
    for (std::int64_t extent : map.box)
      box << extent << ' ';
    putField(out, std::to_string(map.param));
    putField(out, box.str());
    putField(out, std::to_string(map.swizzle));
  }
  putField(out, b.ptx);
  putField(out, b.cubin);
  return out.str();
}

std::vector<std::int64_t> numbers(const std::string &text) {
  std::istringstream in(text);
  std::vector<std::int64_t> values;
  for (std::int64_t v; in >> v;)
    values.push_back(v);
  return values;
}

std::optional<GPUBinary> deserialize(const std::string &payload) {
  std::istringstream in(payload);
  GPUBinary b;
  std::string grid, threads, shared, count;
  if (!getField(in, b.name) || !getField(in, b.arch) || !getField(in, grid) ||
      !getField(in, threads) || !getField(in, shared) || !getField(in, b.fragmentLayout) ||
      !getField(in, count))
    return std::nullopt;
  b.grid = numbers(grid);
  b.threads = std::atoll(threads.c_str());
  b.sharedBytes = std::atoll(shared.c_str());
  for (long i = 0, n = std::atol(count.c_str()); i < n; ++i) {
    Param p{};
    std::string shape, dtype, output;
    if (!getField(in, p.name) || !getField(in, shape) || !getField(in, dtype) ||
        !getField(in, output))
      return std::nullopt;
    p.shape = numbers(shape);
    std::optional<DType> type = parseDType(dtype);
    if (!type)
      return std::nullopt;
    p.dtype = *type;
    p.output = output == "1";
    b.params.push_back(std::move(p));
  }
  if (!getField(in, count))
    return std::nullopt;
  for (long i = 0, n = std::atol(count.c_str()); i < n; ++i)
    if (!getField(in, b.warnings.emplace_back()))
      return std::nullopt;
  if (!getField(in, count))
    return std::nullopt;
  for (long i = 0, n = std::atol(count.c_str()); i < n; ++i) {
    std::string param, box, swizzle;
    if (!getField(in, param) || !getField(in, box) || !getField(in, swizzle))
      return std::nullopt;
    b.tensorMaps.push_back({std::atoll(param.c_str()), numbers(box), std::atoll(swizzle.c_str())});
  }
  if (!getField(in, b.ptx) || !getField(in, b.cubin))
    return std::nullopt;
  return b;
}

} // namespace

std::string contentHash(const std::string &text) {
  return hex(fnv1a(text, 0xcbf29ce484222325ULL)) + hex(fnv1a(text, 0x84222325cbf29ce4ULL));
}

KernelCache::KernelCache(std::string directory) : directory_(std::move(directory)) {}

std::string KernelCache::defaultDirectory() {
  if (const char *dir = std::getenv("TLC_CACHE_DIR"); dir && *dir)
    return dir;
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return std::string(xdg) + "/tlc";
  if (const char *home = std::getenv("HOME"); home && *home)
    return std::string(home) + "/.cache/tlc";
  return (fs::temp_directory_path() / "tlc-cache").string();
}

bool KernelCache::enabledByEnvironment() {
  const char *flag = std::getenv("TLC_CACHE");
  return !flag || (std::string(flag) != "0" && std::string(flag) != "off");
}

std::string KernelCache::key(const ModuleHandle &program, const std::string &arch) {
  return contentHash(program.str() + '\n' + kCompilerVersion + '\n' + arch);
}

std::string KernelCache::path(const std::string &key) const {
  return directory_ + "/" + key + ".tlk";
}

std::optional<GPUBinary> KernelCache::load(const std::string &key) const {
  std::ifstream in(path(key), std::ios::binary);
  if (!in)
    return std::nullopt;
  std::stringstream content;
  content << in.rdbuf();
  std::string text = content.str();
  // <magic>\n<payload><checksum, 16 hex digits>\n
  std::string magic = std::string(kMagic) + '\n';
  if (text.size() < magic.size() + 17 || text.compare(0, magic.size(), magic) != 0 ||
      text.back() != '\n')
    return std::nullopt;
  std::string payload = text.substr(magic.size(), text.size() - magic.size() - 17);
  std::string checksum = text.substr(text.size() - 17, 16);
  if (hex(fnv1a(payload, 0xcbf29ce484222325ULL)) != checksum)
    return std::nullopt;
  return deserialize(payload);
}

bool writeFileAtomically(const std::string &path, const std::string &contents) {
  static std::atomic<unsigned> counter{0};
  std::error_code error;
  fs::create_directories(fs::path(path).parent_path(), error);
  std::ostringstream tmpName;
  tmpName << path << ".tmp." << ::getpid() << '.'
          << std::hash<std::thread::id>()(std::this_thread::get_id()) << '.' << counter++;
  std::string tmp = tmpName.str();
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out)
      return false;
    out << contents;
    if (!out.flush())
      return fs::remove(tmp, error), false;
  }
  fs::rename(tmp, path, error); // atomic: readers see the old or the new file
  if (error)
    fs::remove(tmp, error);
  return !error;
}

void KernelCache::store(const std::string &key, const GPUBinary &binary) const {
  std::string payload = serialize(binary);
  writeFileAtomically(path(key), std::string(kMagic) + '\n' + payload +
                                     hex(fnv1a(payload, 0xcbf29ce484222325ULL)) + '\n');
}

void KernelCache::clear() const {
  std::error_code error;
  for (const auto &entry : fs::directory_iterator(directory_, error))
    if (std::string name = entry.path().filename().string();
        entry.path().extension() == ".tlk" || name.starts_with("autotune-") ||
        name.find(".tmp.") != std::string::npos)
      fs::remove(entry.path(), error);
}

bool compileTimingRequested() {
  const char *flag = std::getenv("TLC_TIMING");
  return flag && (std::string(flag) == "1" || std::string(flag) == "on");
}

void assembleWherePossible(GPUBinary &binary) {
  std::string ptxas = findPtxas();
  if (ptxas.empty() || !binary.cubin.empty())
    return;
  try {
    auto start = std::chrono::steady_clock::now();
    std::string report;
    binary.cubin = assembleCubin(ptxas, binary.ptx, binary.arch, &report);
    for (std::string &note : slowPathNotes(report))
      binary.warnings.push_back(std::move(note));
    if (compileTimingRequested())
      std::fprintf(
          stderr, "tlc: ptxas %s for %s: %.1f ms\n", binary.arch.c_str(), binary.name.c_str(),
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count());
  } catch (const std::exception &error) {
    // The driver can still JIT the PTX (an older ptxas may not know the PTX
    // version we emit); say so once per kernel rather than fail.
    std::fprintf(stderr, "tlc: %s: %s\nthe CUDA driver will JIT the PTX instead\n",
                 binary.name.c_str(), error.what());
  }
}

/// The environment variable `name` is set to `value`.
static bool variableIs(const char *name, const char *value) {
  const char *set = std::getenv(name);
  return set && std::string(set) == value;
}

GPUCompileOptions gpuCompileOptions(std::int64_t sharedMemoryLimit) {
  GPUCompileOptions options{.timing = compileTimingRequested(),
                            .sharedMemoryLimit = sharedMemoryLimit};
  // =0 turns a step off to compare the paths: sm_90a's gemms on mma.sync,
  // the wgmma path's loads on cp.async, no producer warpgroup.
  options.wgmma = !variableIs("TLC_WGMMA", "0");
  options.tma = !variableIs("TLC_TMA", "0");
  options.warpSpecialize = !variableIs("TLC_WARP_SPECIALIZE", "0");
  // stmatrix stores and 32-bit descriptor steps (GPUCompileOptions) too.
  options.stmatrix = !variableIs("TLC_STMATRIX", "0");
  options.lowWordDescriptors = !variableIs("TLC_LOW_WORD_DESCRIPTORS", "0");
  // =1 turns on what is off by default: the barrier elision through the
  // async proxy, the early hand-back of a reduce-added tile in turns.
  options.elideAsyncBarriers = variableIs("TLC_ELIDE_ASYNC_BARRIERS", "1");
  options.earlyTileHandBack = variableIs("TLC_EARLY_TILE_HAND_BACK", "1");
  return options;
}

std::string gpuCacheTarget(const std::string &arch, const GPUCompileOptions &options) {
  std::int64_t limit = options.sharedMemoryLimit;
  // LLVM's options (TLC_LLVM_OPTIONS, read by the compiler) change the code too.
  const char *llvm = std::getenv("TLC_LLVM_OPTIONS");
  return (limit ? arch + " shared<=" + std::to_string(limit) : arch) +
         (options.wgmma ? "" : " mma.sync") + (options.tma ? "" : " cp.async") +
         (options.warpSpecialize ? "" : " no-producer-warp") +
         (options.elideAsyncBarriers ? " elide-async-barriers" : "") +
         (options.stmatrix ? "" : " no-stmatrix") +
         (options.lowWordDescriptors ? "" : " no-low-word-descriptors") +
         (options.earlyTileHandBack ? " early-tile-hand-back" : "") +
         (llvm && *llvm ? std::string(" llvm:") + llvm : "");
}

GPUBinary compileForGPUCached(const ModuleHandle &program, const std::string &arch, bool useCache,
                              bool *hit, std::int64_t sharedMemoryLimit) {
  if (hit)
    *hit = false;
  GPUCompileOptions options = gpuCompileOptions(sharedMemoryLimit);
  if (!useCache || !KernelCache::enabledByEnvironment()) {
    GPUBinary binary = compileForGPU(program, arch, options);
    assembleWherePossible(binary);
    return binary;
  }
  // In memory first (this process compiled or loaded it already), then disk.
  static std::mutex mutex;
  static std::unordered_map<std::string, GPUBinary> memory;
  std::string key = KernelCache::key(program, gpuCacheTarget(arch, options));
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = memory.find(key); it != memory.end()) {
      if (hit)
        *hit = true;
      return it->second;
    }
  }
  KernelCache cache(KernelCache::defaultDirectory());
  std::optional<GPUBinary> binary = cache.load(key);
  if (hit)
    *hit = binary.has_value();
  // An entry without a cubin gets one when a ptxas has appeared since; one
  // whose assembly failed says so (kNoCubin) and is not retried.
  if (binary && binary->cubin == kNoCubin) {
    binary->cubin.clear();
  } else if (!binary || (binary->cubin.empty() && !findPtxas().empty())) {
    if (!binary)
      binary = compileForGPU(program, arch, options);
    assembleWherePossible(*binary);
    GPUBinary entry = *binary;
    if (entry.cubin.empty() && !findPtxas().empty())
      entry.cubin = kNoCubin;
    cache.store(key, entry);
  }
  std::lock_guard<std::mutex> lock(mutex);
  memory.emplace(key, *binary);
  return *binary;
}

} // namespace tl::runtime
