//===- HostJIT.cpp - lower a tl program and JIT it for the host -----------===//
#include "tl/Compiler/HostJIT.h"

#include "tl/Compiler/ModuleState.h"
#include "tl/Compiler/Pipeline.h"
#include "tl/Conversion/Passes.h"
#include "tl/Dialect/TL/TLDialect.h"
#include "tl/Support/Half.h"

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/Support/TargetSelect.h"

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

using namespace mlir;

namespace tl {
namespace {

/// How long a block waits for its tl.in_turn turn before the launch fails.
constexpr std::chrono::seconds kTurnTimeout(10);

/// tl.in_turn on the host (TLToCPU.cpp): waits until *counter == turn
/// (acquire) and returns true; returns false, with *status set, once the
/// turn has not come for kTurnTimeout or another block of the launch gave
/// up (its status is the launch's).
extern "C" bool tl_cpu_wait_turn(std::int32_t *counter, std::int32_t turn, std::int32_t *status) {
  std::atomic_ref<std::int32_t> value(*counter), failed(*status);
  const auto start = std::chrono::steady_clock::now();
  for (unsigned spins = 1;; ++spins) {
    if (value.load(std::memory_order_acquire) == turn)
      return true;
    if (failed.load(std::memory_order_relaxed))
      return false;
    if (spins % 256 == 0) {
      if (std::chrono::steady_clock::now() - start > kTurnTimeout) {
        failed.store(1, std::memory_order_relaxed);
        return false;
      }
      std::this_thread::yield();
    }
  }
}

/// f16 conversions for hosts without instructions for them (the JIT then
/// calls these compiler-rt helpers).
extern "C" float tl_extendhfsf2(std::uint16_t h) { return halfToFloat(h); }
extern "C" std::uint16_t tl_truncsfhf2(float f) { return floatToHalf(f); }
/// f32 -> bf16 for hosts without an instruction for it (no AVX512-BF16: the
/// AMD EPYC development machines). The x86-64 ABI returns a bf16 in xmm0's
/// low 16 bits: a float of those bits puts it there.
extern "C" float tl_truncsfbf2(float f) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(floatToBfloat16(f)));
}

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
  std::int32_t *turnStatus = nullptr; // the module's tl_turn_status, if it has one
  std::vector<std::int64_t> grid;
  std::int64_t threads = 0, onChipBytes = 0;
};

HostExecutable::HostExecutable(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HostExecutable::~HostExecutable() = default;
HostExecutable::Entry HostExecutable::entry() const { return impl_->entry; }
const std::vector<std::int64_t> &HostExecutable::grid() const { return impl_->grid; }
std::int64_t HostExecutable::threads() const { return impl_->threads; }
std::int64_t HostExecutable::onChipBytes() const { return impl_->onChipBytes; }

void HostExecutable::clearTurnFailure() const {
  if (impl_->turnStatus)
    std::atomic_ref<std::int32_t>(*impl_->turnStatus).store(0);
}

bool HostExecutable::turnFailed() const {
  return impl_->turnStatus && std::atomic_ref<std::int32_t>(*impl_->turnStatus).load() != 0;
}

std::unique_ptr<HostExecutable> HostExecutable::compile(const ModuleHandle &program, bool timing) {
  DefaultTimingManager timingManager; // prints its report when it goes, if enabled
  timingManager.setEnabled(timing);
  TimingScope root = timingManager.getRootScope();
  TimingScope verification = root.nest("verification");
  program.verify();
  verification.stop();
  ModuleHandle::State &p = program.state();
  MLIRContext *context = p.context.get();
  registerBuiltinDialectTranslation(*context);
  registerLLVMDialectTranslation(*context);

  auto impl = std::make_unique<Impl>();
  p.module->walk([&](KernelOp kernel) {
    impl->grid.assign(kernel.getGrid().begin(), kernel.getGrid().end());
    impl->threads = static_cast<std::int64_t>(kernel.getThreads());
  });
  p.module->walk([&](Operation *op) {
    if (!isa<AllocSharedOp, AllocFragmentOp, AllocLocalOp>(op))
      return;
    auto type = cast<MemRefType>(op->getResult(0).getType());
    impl->onChipBytes += type.getNumElements() * ((type.getElementTypeBitWidth() + 7) / 8);
  });

  OwningOpRef<ModuleOp> module = p.module->clone();
  TimingScope passes = root.nest("MLIR passes");
  runPipelineOrThrow(*module, buildCPUPipeline, "CPU lowering failed", {.timing = &passes});
  passes.stop();
  TimingScope jit = root.nest("LLVM translation, optimization and JIT");

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
    symbols[interner("__extendhfsf2")] = {llvm::orc::ExecutorAddr::fromPtr(&tl_extendhfsf2),
                                          llvm::JITSymbolFlags::Exported};
    symbols[interner("__truncsfhf2")] = {llvm::orc::ExecutorAddr::fromPtr(&tl_truncsfhf2),
                                         llvm::JITSymbolFlags::Exported};
    symbols[interner("__truncsfbf2")] = {llvm::orc::ExecutorAddr::fromPtr(&tl_truncsfbf2),
                                         llvm::JITSymbolFlags::Exported};
    symbols[interner("tl_cpu_wait_turn")] = {llvm::orc::ExecutorAddr::fromPtr(&tl_cpu_wait_turn),
                                             llvm::JITSymbolFlags::Exported};
    return symbols;
  });
  if (module->lookupSymbol("tl_turn_status")) {
    auto status = impl->engine->lookup("tl_turn_status");
    if (!status)
      throw std::runtime_error("host JIT: no tl_turn_status in '" + p.name +
                               "': " + llvm::toString(status.takeError()));
    impl->turnStatus = static_cast<std::int32_t *>(*status);
  }
  auto entry = impl->engine->lookupPacked(p.name);
  if (!entry)
    throw std::runtime_error("host JIT: no entry for '" + p.name +
                             "': " + llvm::toString(entry.takeError()));
  impl->entry = *entry;
  return std::unique_ptr<HostExecutable>(new HostExecutable(std::move(impl)));
}

std::string emitCPUStage(const ModuleHandle &program, const std::string &stage,
                         bool printIRAfterAll) {
  program.verify();
  ModuleHandle::State &p = program.state();
  MLIRContext *context = p.context.get();
  registerBuiltinDialectTranslation(*context);
  registerLLVMDialectTranslation(*context);
  OwningOpRef<ModuleOp> module = p.module->clone();
  std::string text;
  llvm::raw_string_ostream os(text);
  if (stage == "thread") {
    runPipelineOrThrow(*module, [](OpPassManager &pm) { pm.addPass(createConvertTLToCPU()); },
                       "CPU lowering failed", {.printIRAfterAll = printIRAfterAll});
    module->print(os);
    return text;
  }
  if (stage != "llvm")
    throw std::invalid_argument("emitCPUStage: no stage '" + stage + "' (thread or llvm)");
  runPipelineOrThrow(*module, buildCPUPipeline, "CPU lowering failed",
                     {.printIRAfterAll = printIRAfterAll});
  initializeNativeTarget();
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule = translateModuleToLLVMIR(*module, llvmContext, p.name);
  if (!llvmModule)
    throw std::runtime_error("translating '" + p.name + "' to LLVM IR failed");
  if (llvm::Error err = makeOptimizingTransformer(3, 0, nullptr)(llvmModule.get()))
    throw std::runtime_error("optimizing failed: " + llvm::toString(std::move(err)));
  llvmModule->print(os, nullptr);
  return text;
}

} // namespace tl
