// tlc: compile tl programs ahead of time.
//
//   tlc FILE.cpp --list
//   tlc FILE.cpp -k NAME [-p key=value ...] [--emit=KIND] [--target=sm_80|sm_90a|cpu]
//       [-o PATH] [--print-ir-after-all] [--timing] [--elide-async-barriers] [--no-stmatrix]
//       [--no-low-word-descriptors] [--early-tile-hand-back]
//   tlc FILE.mlir [--emit=KIND] [--target=...] [-o PATH] [--timing] [--elide-async-barriers]
//       [--no-stmatrix] [--no-low-word-descriptors] [--early-tile-hand-back]
//
// --timing prints how long each compile step took (every MLIR pass, the
// LLVM steps, ptxas) to stderr. --elide-async-barriers lets tl-elide-barriers
// remove the wgmma loops' barriers that order nothing too (off by default: it
// timed level with the default, results/2026-12-05-session33.md).
// --no-stmatrix stores the fragments' 16-bit shared tiles by 32-bit stores on
// sm_90 and sm_90a, not by stmatrix.x4 per 16x16 block; --no-low-word-descriptors
// advances wgmma descriptors by 64-bit adds (both on by default since session
// 36: results/2026-12-05-session35.md timed them, -session36.md tested them;
// --stmatrix and --low-word-descriptors are accepted too). --early-tile-hand-back
// lets a producer warpgroup that reduce-adds a tile in turns (the deterministic
// backward's dQ) hand it back to the consumers once read, before its turn
// passes (off by default: 1-6% slower at D = 128 on the H200,
// results/2026-12-05-session39.md).
//
// FILE.cpp registers programs with TLC_GENERATOR (tl/dsl/Generator.h). tlc
// builds it into a plugin with the host C++ compiler against our headers and
// library (reused while the file is unchanged), loads it, builds the chosen
// program with the parameters given and emits it. FILE.mlir holds one program
// in the tl dialect. KIND: tl (the program), planned (the program with the GPU
// path's decisions: fragment layouts, asynchronous copies, shared-memory
// offsets), thread (after the lowering to threads), llvm (the LLVM IR compiled), ptx, cubin
// (ptxas), header (a typed C++ launcher with the kernel embedded); cpu targets take tl, thread and
// llvm. Exit codes: 0 ok, 1 an error in the user's file or arguments'
// values, 2 usage.
#include "tl/Compiler/CrashHandler.h"
#include "tl/Compiler/GPUCompiler.h"
#include "tl/Compiler/HostJIT.h"
#include "tl/Compiler/Ptxas.h"
#include "tl/dsl.h"
#include "tl/runtime/KernelCache.h"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

struct Options {
  std::string input, program, emit = "tl", target = "sm_90a", output;
  std::vector<std::pair<std::string, std::string>> params;
  bool list = false, printIRAfterAll = false, timing = false, elideAsyncBarriers = false,
       stmatrix = true, lowWordDescriptors = true, earlyTileHandBack = false;
};

[[noreturn]] void usage(const std::string &problem) {
  std::fprintf(
      stderr,
      "tlc: %s\n"
      "usage: tlc FILE.cpp --list\n"
      "       tlc FILE.cpp -k NAME [-p key=value ...] [--emit=KIND]\n"
      "           [--target=sm_80|sm_90a|cpu] [-o PATH] [--print-ir-after-all] [--timing]\n"
      "           [--elide-async-barriers] [--no-stmatrix] [--no-low-word-descriptors]\n"
      "           [--early-tile-hand-back]\n"
      "       tlc FILE.mlir [--emit=KIND] [--target=...] [-o PATH] [--print-ir-after-all]\n"
      "           [--timing] [--elide-async-barriers] [--no-stmatrix] [--no-low-word-descriptors]\n"
      "           [--early-tile-hand-back]\n"
      "KIND: tl, planned, thread, llvm, ptx, cubin or header (cpu: tl, thread, llvm)\n",
      problem.c_str());
  std::exit(2);
}

[[noreturn]] void fail(const std::string &message) {
  std::fprintf(stderr, "tlc: error: %s\n", message.c_str());
  std::exit(1);
}

Options parse(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const std::string &flag) -> std::string {
      if (arg.size() > flag.size() && arg.compare(0, flag.size() + 1, flag + "=") == 0)
        return arg.substr(flag.size() + 1);
      if (i + 1 >= argc)
        usage(flag + " needs a value");
      return argv[++i];
    };
    if (arg == "--list")
      o.list = true;
    else if (arg == "--print-ir-after-all")
      o.printIRAfterAll = true;
    else if (arg == "--timing")
      o.timing = true;
    else if (arg == "--elide-async-barriers")
      o.elideAsyncBarriers = true;
    else if (arg == "--stmatrix" || arg == "--no-stmatrix")
      o.stmatrix = arg == "--stmatrix";
    else if (arg == "--low-word-descriptors" || arg == "--no-low-word-descriptors")
      o.lowWordDescriptors = arg == "--low-word-descriptors";
    else if (arg == "--early-tile-hand-back")
      o.earlyTileHandBack = true;
    else if (arg == "-k")
      o.program = value("-k");
    else if (arg == "-o")
      o.output = value("-o");
    else if (arg == "-p") {
      std::string kv = value("-p");
      size_t eq = kv.find('=');
      if (eq == std::string::npos || eq == 0)
        usage("-p takes key=value, got '" + kv + "'");
      o.params.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
    } else if (arg.rfind("--emit", 0) == 0)
      o.emit = value("--emit");
    else if (arg.rfind("--target", 0) == 0)
      o.target = value("--target");
    else if (arg == "-h" || arg == "--help")
      usage("compile tl programs ahead of time");
    else if (!arg.empty() && arg[0] == '-')
      usage("unknown option '" + arg + "'");
    else if (o.input.empty())
      o.input = arg;
    else
      usage("more than one input file");
  }
  if (o.input.empty())
    usage("no input file");
  bool mlir = o.input.ends_with(".mlir");
  if (!mlir && !o.list && o.program.empty())
    usage("say which program: -k NAME (or --list)");
  if (mlir && !o.params.empty())
    usage("-p sets a C++ generator's parameters; a .mlir file has none");
  const std::vector<std::string> kinds = {"tl",  "planned", "thread", "llvm",
                                          "ptx", "cubin",   "header"};
  if (std::find(kinds.begin(), kinds.end(), o.emit) == kinds.end())
    usage("--emit takes tl, planned, thread, llvm, ptx, cubin or header, got '" + o.emit + "'");
  if (o.target != "sm_80" && o.target != "sm_90a" && o.target != "cpu")
    usage("--target takes sm_80, sm_90a or cpu, got '" + o.target + "'");
  if (o.target == "cpu" &&
      (o.emit == "planned" || o.emit == "ptx" || o.emit == "cubin" || o.emit == "header"))
    usage("--emit=" + o.emit +
          " needs a GPU target (sm_80 or sm_90a); cpu emits tl, thread "
          "or llvm");
  return o;
}

std::string readFile(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// Builds (or reuses) the plugin for `input`; returns its path.
fs::path buildPlugin(const std::string &input) {
  if (!fs::exists(input))
    fail("cannot read '" + input + "'");
  std::string command = std::string(TLC_CXX) + " -std=c++20 -O1 -shared -fPIC";
  std::istringstream includes(TLC_INCLUDE_DIRS);
  for (std::string dir; std::getline(includes, dir, ':');)
    command += " -I" + dir;
  std::string link =
      std::string(" -L") + TLC_LIBRARY_DIR + " -ltl_kernels -ltlc -Wl,-rpath," + TLC_LIBRARY_DIR;
  fs::path dir = fs::path(tl::runtime::KernelCache::defaultDirectory()) / "plugins";
  fs::create_directories(dir);
  // The plugin links the libraries and inlines their headers: a rebuilt
  // library (whose headers may have changed a struct the plugin passes) must
  // not meet a plugin compiled against the old one.
  std::string libraries;
  for (const char *name : {"libtlc.so", "libtl_kernels.a"}) {
    std::error_code error;
    fs::path library = fs::path(TLC_LIBRARY_DIR) / name;
    auto size = fs::file_size(library, error);
    auto time = fs::last_write_time(library, error);
    libraries += library.string() + ":" + std::to_string(error ? 0 : size) + ":" +
                 std::to_string(error ? 0 : time.time_since_epoch().count()) + ";";
  }
  std::string key = tl::runtime::contentHash(readFile(input) + command + link + libraries +
                                             fs::absolute(input).string());
  fs::path plugin = dir / (key + ".so");
  if (fs::exists(plugin))
    return plugin;
  fs::path tmp = dir / (key + ".so.tmp." + std::to_string(::getpid()));
  fs::path log = dir / (key + ".log." + std::to_string(::getpid()));
  std::string full = command + " " + fs::absolute(input).string() + " -o " + tmp.string() + link +
                     " > " + log.string() + " 2>&1";
  int status = std::system(full.c_str());
  std::string output = readFile(log);
  fs::remove(log);
  if (status != 0) {
    fs::remove(tmp);
    std::fprintf(stderr, "%s", output.c_str());
    fail("compiling '" + input + "' failed");
  }
  fs::rename(tmp, plugin);
  return plugin;
}

std::string quoted(const std::string &text) { return "\"" + text + "\""; }

/// A C++ header embedding the PTX and a typed launcher: one HostTensor&
/// per input, the outputs returned (out_idx), on the GPU through the runtime.
std::string header(const tl::GPUBinary &b, const std::string &source) {
  std::ostringstream h;
  std::string fn = b.name;
  h << "// Generated by tlc from " << source << " (" << b.name << ", " << b.arch
    << "). Do not edit.\n#pragma once\n\n#include \"tl/runtime/GPUKernel.h\"\n\n"
    << "namespace tlc_generated {\n\n"
    << "inline const tl::GPUBinary &" << fn << "_binary() {\n"
    << "  static const tl::GPUBinary binary = [] {\n    tl::GPUBinary b;\n"
    << "    b.name = " << quoted(b.name) << ";\n    b.arch = " << quoted(b.arch) << ";\n"
    << "    b.grid = {";
  for (std::size_t i = 0; i < b.grid.size(); ++i)
    h << (i ? ", " : "") << b.grid[i];
  h << "};\n    b.threads = " << b.threads << ";\n    b.sharedBytes = " << b.sharedBytes
    << ";\n    b.fragmentLayout = " << quoted(b.fragmentLayout) << ";\n    b.params = {\n";
  for (const tl::dsl::Param &p : b.params) {
    h << "        {" << quoted(p.name) << ", {";
    for (std::size_t i = 0; i < p.shape.size(); ++i)
      h << (i ? ", " : "") << p.shape[i];
    h << "}, tl::DType::" << tl::toString(p.dtype) << ", " << (p.output ? "true" : "false")
      << "},\n";
  }
  h << "    };\n";
  if (!b.tensorMaps.empty()) { // TMA descriptors, encoded at each launch
    h << "    b.tensorMaps = {\n";
    for (const tl::TensorMapParam &map : b.tensorMaps) {
      h << "        {" << map.param << ", {";
      for (std::size_t i = 0; i < map.box.size(); ++i)
        h << (i ? ", " : "") << map.box[i];
      h << "}, " << map.swizzle << "},\n";
    }
    h << "    };\n";
  }
  h << "    b.ptx = R\"tlc_ptx(" << b.ptx << ")tlc_ptx\";\n";
  if (!b.cubin.empty()) { // ptxas's cubin for b.arch (the PTX stays as a fallback)
    h << "    static const unsigned char cubin[] = {";
    for (std::size_t i = 0; i < b.cubin.size(); ++i)
      h << (i % 24 ? "" : "\n        ")
        << static_cast<unsigned>(static_cast<unsigned char>(b.cubin[i])) << ",";
    h << "};\n    b.cubin.assign(reinterpret_cast<const char *>(cubin), sizeof cubin);\n";
  }
  h << "    return b;\n  }();\n"
    << "  return binary;\n}\n\n"
    << "/// Runs " << b.name << " on the GPU: the inputs in order, the outputs returned.\n"
    << "inline std::vector<tl::runtime::HostTensor> " << fn << "(";
  bool first = true;
  for (const tl::dsl::Param &p : b.params)
    if (!p.output) {
      h << (first ? "" : ", ") << "tl::runtime::HostTensor &" << p.name;
      first = false;
    }
  h << ") {\n  static const tl::runtime::GPUKernel kernel(" << fn
    << "_binary());\n  return kernel({";
  first = true;
  for (const tl::dsl::Param &p : b.params)
    if (!p.output) {
      h << (first ? "" : ", ") << "&" << p.name;
      first = false;
    }
  h << "});\n}\n\n"
    << "/// The same on device tensors (every parameter, outputs included), queued on\n"
    << "/// `stream` and not waited for.\n"
    << "inline void " << fn << "(";
  for (const tl::dsl::Param &p : b.params)
    h << "tl::runtime::DeviceTensor &" << p.name << ", ";
  h << "tl::runtime::CUstream stream = nullptr) {\n  static const tl::runtime::GPUKernel kernel("
    << fn << "_binary());\n  kernel.launch({";
  first = true;
  for (const tl::dsl::Param &p : b.params) {
    h << (first ? "" : ", ") << "&" << p.name;
    first = false;
  }
  h << "}, stream);\n}\n\n} // namespace tlc_generated\n";
  return h.str();
}

long long parseValue(const std::string &name, const std::string &text) {
  if (text == "true")
    return 1;
  if (text == "false")
    return 0;
  char *end = nullptr;
  long long value = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0')
    fail("parameter '" + name + "' takes an integer (or true/false), got '" + text + "'");
  return value;
}

void write(const std::string &text, const Options &o) {
  if (o.output.empty() || o.output == "-") {
    if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0)
      fail("cannot write to standard output");
    return;
  }
  std::ofstream out(o.output, std::ios::binary);
  if (!out)
    fail("cannot open '" + o.output + "' for writing");
  out << text;
  out.close(); // a full disk shows when the buffer is flushed
  if (!out)
    fail("cannot write '" + o.output + "'");
}

/// The GPU compiler's options from tlc's flags.
tl::GPUCompileOptions gpuOptions(const Options &o) {
  return {.printIRAfterAll = o.printIRAfterAll,
          .timing = o.timing,
          .elideAsyncBarriers = o.elideAsyncBarriers,
          .stmatrix = o.stmatrix,
          .lowWordDescriptors = o.lowWordDescriptors,
          .earlyTileHandBack = o.earlyTileHandBack};
}

/// The chosen program's output of kind `o.emit` for `o.target`.
std::string emit(const tl::dsl::Program &program, const Options &o) {
  if (o.emit == "tl")
    return program.str();
  if (o.emit == "planned" || o.emit == "thread" || o.emit == "llvm")
    return o.target == "cpu" ? tl::emitCPUStage(program, o.emit, o.printIRAfterAll)
                             : tl::emitGPUStage(program, o.target, o.emit, gpuOptions(o));
  tl::GPUBinary binary = tl::compileForGPU(program, o.target, gpuOptions(o));
  auto warn = [&](const std::vector<std::string> &warnings) { // correct but slow
    for (const std::string &warning : warnings)
      std::fprintf(stderr, "tlc: warning: %s: %s\n", binary.name.c_str(), warning.c_str());
  };
  warn(binary.warnings);
  if (o.emit == "ptx")
    return binary.ptx;
  if (o.emit == "cubin") {
    std::string ptxas = tl::findPtxas();
    if (ptxas.empty())
      fail("--emit=cubin needs ptxas: install the CUDA toolkit, put ptxas on PATH or name it "
           "in TLC_PTXAS");
    auto start = std::chrono::steady_clock::now();
    std::string report;
    std::string cubin = tl::assembleCubin(ptxas, binary.ptx, o.target, &report);
    warn(tl::slowPathNotes(report));
    if (o.timing)
      std::fprintf(
          stderr, "tlc: ptxas %s: %.1f ms\n", o.target.c_str(),
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count());
    return cubin;
  }
  std::size_t before = binary.warnings.size();
  tl::runtime::assembleWherePossible(binary); // the header embeds the cubin where it can
  warn({binary.warnings.begin() + static_cast<std::ptrdiff_t>(before), binary.warnings.end()});
  return header(binary, fs::path(o.input).filename().string());
}

/// The generators a .cpp file registers: its plugin built (or reused) and loaded.
const std::vector<tl::dsl::Generator> &loadGenerators(const Options &o) {
  fs::path plugin = buildPlugin(o.input);
  if (!dlopen(plugin.c_str(), RTLD_NOW | RTLD_LOCAL))
    fail(std::string("cannot load the plugin: ") + dlerror());
  return tl::dsl::registeredGenerators();
}

/// The program a .cpp generator file builds with the parameters given.
tl::dsl::Program fromGenerator(const Options &o) {
  const std::vector<tl::dsl::Generator> &generators = loadGenerators(o);
  const tl::dsl::Generator *chosen = nullptr;
  std::string names;
  for (const tl::dsl::Generator &g : generators) {
    names += (names.empty() ? "" : ", ") + g.name;
    if (g.name == o.program)
      chosen = &g;
  }
  if (!chosen)
    fail("no program named '" + o.program + "' in " + o.input + "; it has: " + names);
  std::map<std::string, long long> values(chosen->params.begin(), chosen->params.end());
  for (const auto &[name, text] : o.params) {
    if (!values.count(name)) {
      std::string allowed;
      for (const auto &param : chosen->params)
        allowed += (allowed.empty() ? "" : ", ") + param.first;
      fail("'" + chosen->name + "' has no parameter '" + name + "'; it takes: " + allowed);
    }
    values[name] = parseValue(name, text);
  }
  tl::dsl::Program program = chosen->build(tl::dsl::GeneratorArgs(values));
  program.verify();
  return program;
}

/// "flash_fwd(Q: f16[8, 256, 32, 64], ..., -> Output: f16[...])"
std::string signature(const tl::dsl::Program &program) {
  std::string text = program.name() + "(";
  for (const tl::dsl::Param &p : program.params()) {
    std::string shape;
    for (std::int64_t e : p.shape)
      shape += (shape.empty() ? "" : ", ") + std::to_string(e);
    text += std::string(text.back() == '(' ? "" : ", ") + (p.output ? "-> " : "") + p.name + ": " +
            tl::dsl::toString(p.dtype) + "[" + shape + "]";
  }
  return text + ")";
}

} // namespace

int main(int argc, char **argv) {
  tl::installCrashHandler(argc, argv);
  Options o = parse(argc, argv);
  try {
    if (o.input.ends_with(".mlir")) {
      if (!fs::exists(o.input))
        fail("cannot read '" + o.input + "'");
      tl::dsl::Program program = tl::dsl::Program::parse(readFile(o.input), o.input);
      if (o.list) {
        std::printf("%s\n", signature(program).c_str());
        return 0;
      }
      if (!o.program.empty() && o.program != program.name())
        fail("no program named '" + o.program + "' in " + o.input + "; it has: " + program.name());
      write(emit(program, o), o);
      return 0;
    }
    if (o.list) {
      for (const tl::dsl::Generator &g : loadGenerators(o)) {
        std::string text = g.name;
        for (const auto &[name, value] : g.params)
          text += " " + name + "=" + std::to_string(value);
        std::printf("%s\n", text.c_str());
      }
      return 0;
    }
    write(emit(fromGenerator(o), o), o);
  } catch (const tl::dsl::Error &error) {
    std::fprintf(stderr, "%s\n", error.what());
    return 1;
  } catch (const std::exception &error) {
    fail(error.what());
  }
  return 0;
}
