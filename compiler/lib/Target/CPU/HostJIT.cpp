//===- HostJIT.cpp - lower a tl program and JIT it for the host -----------===//
#include "tl/Compiler/HostJIT.h"

#include "BuildState.h"
#include "tl/Compiler/Pipeline.h"
#include "tl/Dialect/TL/TLDialect.h"

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/Support/TargetSelect.h"

#include <cstring>
#include <mutex>

using namespace mlir;

namespace tl {
namespace {

/// IEEE half <-> float, for code that converts f16 where the host has no
/// instructions for it (the JIT then calls these compiler-rt helpers).
float halfToFloat(std::uint16_t h) {
  std::uint32_t sign = (h & 0x8000u) << 16, exponent = (h >> 10) & 0x1f,
                mantissa = h & 0x3ff, bits;
  if (exponent == 0x1f)
    bits = sign | 0x7f800000u | (mantissa << 13);
  else if (exponent != 0)
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  else if (mantissa == 0)
    bits = sign;
  else {
    int shift = 0;
    while (!(mantissa & 0x400)) {
      mantissa <<= 1;
      ++shift;
    }
    bits = sign | ((113 - shift) << 23) | ((mantissa & 0x3ff) << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

std::uint16_t floatToHalf(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, 4);
  std::uint32_t sign = (x >> 16) & 0x8000u;
  std::uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) // inf or nan
    return static_cast<std::uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0));
  if (abs >= 0x477ff000u) // rounds to >= 65520: overflow to inf
    return static_cast<std::uint16_t>(sign | 0x7c00u);
  if (abs < 0x38800000u) { // subnormal half (or zero)
    if (abs < 0x33000000u)
      return static_cast<std::uint16_t>(sign);
    std::uint32_t mantissa = (abs & 0x7fffffu) | 0x800000u;
    int shift = 126 - static_cast<int>(abs >> 23);
    std::uint32_t rounded = mantissa >> (shift + 10 - 1);
    std::uint32_t rest = mantissa & ((1u << (shift + 10 - 1)) - 1);
    std::uint32_t half = (rounded >> 1) + ((rounded & 1) && (rest || ((rounded >> 1) & 1)));
    return static_cast<std::uint16_t>(sign | half);
  }
  std::uint32_t rounded = abs + 0xfffu + ((abs >> 13) & 1); // nearest even
  return static_cast<std::uint16_t>(sign | ((rounded - 0x38000000u) >> 13));
}

extern "C" float tl_extendhfsf2(std::uint16_t h) { return halfToFloat(h); }
extern "C" std::uint16_t tl_truncsfhf2(float f) { return floatToHalf(f); }

void initializeNativeTarget() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

} // namespace

struct HostExecutable::Impl {
  std::unique_ptr<ExecutionEngine> engine;
  Entry entry = nullptr;
  std::vector<std::int64_t> grid;
  std::int64_t threads = 0;
};

HostExecutable::HostExecutable(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
HostExecutable::~HostExecutable() = default;
HostExecutable::Entry HostExecutable::entry() const { return impl_->entry; }
const std::vector<std::int64_t> &HostExecutable::grid() const {
  return impl_->grid;
}
std::int64_t HostExecutable::threads() const { return impl_->threads; }

std::unique_ptr<HostExecutable> HostExecutable::compile(const dsl::Program &program) {
  program.verify();
  dsl::detail::ProgramImpl &p = program.impl();
  MLIRContext *context = p.context.get();
  registerBuiltinDialectTranslation(*context);
  registerLLVMDialectTranslation(*context);

  auto impl = std::make_unique<Impl>();
  p.module->walk([&](KernelOp kernel) {
    impl->grid.assign(kernel.getGrid().begin(), kernel.getGrid().end());
    impl->threads = static_cast<std::int64_t>(kernel.getThreads());
  });

  OwningOpRef<ModuleOp> module = p.module->clone();
  dsl::detail::runPipelineOrThrow(p, *module, buildCPUPipeline, "CPU lowering failed");

  initializeNativeTarget();
  ExecutionEngineOptions options;
  auto transformer = makeOptimizingTransformer(/*optLevel=*/3, /*sizeLevel=*/0,
                                               /*targetMachine=*/nullptr);
  options.transformer = transformer;
  options.jitCodeGenOptLevel = llvm::CodeGenOptLevel::Aggressive;
  auto engine = ExecutionEngine::create(*module, options);
  if (!engine)
    throw std::runtime_error("host JIT failed for '" + p.name +
                             "': " + llvm::toString(engine.takeError()));
  impl->engine = std::move(*engine);
  impl->engine->registerSymbols([](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap symbols;
    symbols[interner("__extendhfsf2")] = {
        llvm::orc::ExecutorAddr::fromPtr(&tl_extendhfsf2),
        llvm::JITSymbolFlags::Exported};
    symbols[interner("__truncsfhf2")] = {
        llvm::orc::ExecutorAddr::fromPtr(&tl_truncsfhf2),
        llvm::JITSymbolFlags::Exported};
    return symbols;
  });
  auto entry = impl->engine->lookupPacked(p.name);
  if (!entry)
    throw std::runtime_error("host JIT: no entry for '" + p.name +
                             "': " + llvm::toString(entry.takeError()));
  impl->entry = *entry;
  return std::unique_ptr<HostExecutable>(new HostExecutable(std::move(impl)));
}

} // namespace tl
