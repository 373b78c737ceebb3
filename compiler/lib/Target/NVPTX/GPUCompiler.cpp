//===- GPUCompiler.cpp - lower a tl program and emit PTX ------------------===//
#include "tl/Compiler/GPUCompiler.h"

#include "tl/Compiler/ModuleState.h"
#include "tl/Compiler/Pipeline.h"
#include "tl/Conversion/Passes.h"
#include "tl/Dialect/TL/TLDialect.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVM.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/Allocator.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/StringSaver.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Triple.h"

#include <cstdlib>
#include <mutex>

extern "C" {
void LLVMInitializeNVPTXTargetInfo();
void LLVMInitializeNVPTXTarget();
void LLVMInitializeNVPTXTargetMC();
void LLVMInitializeNVPTXAsmPrinter();
}

using namespace mlir;

namespace tl {
namespace {

void initializeNVPTX() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
    // 32-bit shared, local and const pointers, as nvcc makes them: shared
    // addresses (ldmatrix, cp.async, ld/st.shared) then take one 32-bit
    // add each instead of 64-bit arithmetic and a mask.
    auto &options = llvm::cl::getRegisteredOptions();
    if (auto it = options.find("nvptx-short-ptr"); it != options.end())
      it->second->addOccurrence(0, "nvptx-short-ptr", "true");
  });
  // TLC_LLVM_OPTIONS="-disable-lsr ...": LLVM's own options, parsed once, for
  // measuring what one of LLVM's choices costs or buys.
  static const std::string optionsError = [] {
    const char *extra = std::getenv("TLC_LLVM_OPTIONS");
    if (!extra)
      return std::string();
    llvm::SmallVector<const char *> argv = {"tlc"};
    llvm::BumpPtrAllocator allocator;
    llvm::StringSaver saver(allocator);
    llvm::cl::TokenizeGNUCommandLine(extra, saver, argv);
    std::string errors;
    llvm::raw_string_ostream errorStream(errors);
    if (llvm::cl::ParseCommandLineOptions(static_cast<int>(argv.size()), argv.data(), "",
                                          &errorStream))
      return std::string();
    return "TLC_LLVM_OPTIONS: " + errors;
  }();
  if (!optionsError.empty())
    throw std::invalid_argument(optionsError);
}

void registerGPULowering(MLIRContext &context) {
  DialectRegistry registry;
  registry.insert<gpu::GPUDialect, NVVM::NVVMDialect, LLVM::LLVMDialect>();
  arith::registerConvertArithToLLVMInterface(registry);
  cf::registerConvertControlFlowToLLVMInterface(registry);
  registerConvertFuncToLLVMInterface(registry);
  index::registerConvertIndexToLLVMInterface(registry);
  registerConvertMathToLLVMInterface(registry);
  registerConvertMemRefToLLVMInterface(registry);
  registerConvertNVVMToLLVMInterface(registry);
  ub::registerConvertUBToLLVMInterface(registry);
  vector::registerConvertVectorToLLVMInterface(registry);
  registerBuiltinDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
  context.appendDialectRegistry(registry);
  context.loadAllAvailableDialects();
}

llvm::TargetMachine *nvptxMachine(const std::string &arch) {
  initializeNVPTX();
  llvm::Triple triple("nvptx64-nvidia-cuda");
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    throw std::runtime_error("PTX: " + error);
  // Contract a * b + c into fma, as nvcc does by default (--fmad=true): the
  // softmax's scale-and-subtract becomes one instruction per element.
  llvm::TargetOptions options;
  options.AllowFPOpFusion = llvm::FPOpFusion::Fast;
  // sm_90a needs PTX 8.0, and vector reductions (red.global.add.v4.f32, an
  // accumulator tile's atomic add) 8.1; sm_80 stays on 8.0.
  const bool hopper = arch == "sm_90" || arch == "sm_90a";
  return target->createTargetMachine(triple, arch, hopper ? "+ptx81" : "+ptx80", options,
                                     std::nullopt, std::nullopt, llvm::CodeGenOptLevel::Aggressive);
}

/// LLVM's O3 pipeline for NVPTX (as MLIR's makeOptimizingTransformer builds
/// it) without the SLP vectorizer. Most kernels reach LLVM fully unrolled,
/// and the SLP vectorizer took a tenth of a D=256 forward's compile searching
/// their long straight-line blocks for horizontal reductions, to change no
/// shipped kernel's PTX (scripts/kernel-snapshot.sh). NVPTX's own load/store
/// vectorizer still runs in code generation.
void optimizeO3(llvm::Module &module, llvm::TargetMachine &machine) {
  llvm::LoopAnalysisManager loops;
  llvm::FunctionAnalysisManager functions;
  llvm::CGSCCAnalysisManager sccs;
  llvm::ModuleAnalysisManager modules;
  llvm::PipelineTuningOptions tuning;
  tuning.SLPVectorization = false;
  llvm::PassBuilder builder(&machine, tuning);
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(sccs);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, sccs, modules);
  builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3).run(module, modules);
}

/// The kernel module as optimized LLVM IR for `machine` (what NVPTX compiles).
std::unique_ptr<llvm::Module> optimizedLLVM(Operation *gpuModule, llvm::TargetMachine &machine,
                                            const std::string &name, llvm::LLVMContext &llvmContext,
                                            TimingScope &timing) {
  TimingScope translation = timing.nest("LLVM IR translation");
  std::unique_ptr<llvm::Module> llvmModule = translateModuleToLLVMIR(gpuModule, llvmContext, name);
  translation.stop();
  if (!llvmModule)
    throw std::runtime_error("PTX: translating '" + name + "' to LLVM IR failed");
  llvmModule->setTargetTriple(machine.getTargetTriple());
  llvmModule->setDataLayout(machine.createDataLayout());
  // Shared tiles are planned at 128-byte offsets of the dynamic shared
  // memory, and the lowering's swizzled addresses rely on the base being
  // 128-byte aligned too (ldmatrixAddress); wgmma operands and TMA tiles at
  // 1024-byte offsets, whose swizzle follows the address bits (WgmmaOperands.h).
  bool wgmma = false;
  gpuModule->walk([&](Operation *op) {
    if (auto assembly = dyn_cast<LLVM::InlineAsmOp>(op))
      wgmma |= assembly.getAsmString().contains("wgmma.mma_async");
    wgmma |= isa<NVVM::CpAsyncBulkTensorSharedCTAToGlobalOp,
                 NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp>(op);
  });
  llvm::Align sharedAlign(wgmma ? 1024 : 128);
  for (llvm::GlobalVariable &global : llvmModule->globals())
    if (global.getAddressSpace() == 3 && global.getAlign().valueOrOne() < sharedAlign)
      global.setAlignment(sharedAlign);
  TimingScope optimization = timing.nest("LLVM optimization (O3)");
  optimizeO3(*llvmModule, machine);
  return llvmModule;
}

std::string emitPTX(Operation *gpuModule, const std::string &arch, const std::string &name,
                    TimingScope &timing) {
  std::unique_ptr<llvm::TargetMachine> machine(nvptxMachine(arch));
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      optimizedLLVM(gpuModule, *machine, name, llvmContext, timing);
  TimingScope codegen = timing.nest("NVPTX code generation");
  std::string ptx;
  {
    llvm::raw_string_ostream os(ptx);
    llvm::buffer_ostream stream(os);
    llvm::legacy::PassManager passes;
    if (machine->addPassesToEmitFile(passes, stream, nullptr, llvm::CodeGenFileType::AssemblyFile))
      throw std::runtime_error("PTX: the NVPTX backend cannot emit assembly");
    passes.run(*llvmModule);
  }
  return ptx;
}

/// The code generator uses sm_80's instructions (mma.sync m16n8k16,
/// cp.async, ldmatrix) and PTX 8.0: anything older cannot run them, anything
/// newer than sm_90a wants a newer PTX ISA. An unknown name would otherwise
/// reach LLVM, which aborts.
void checkArch(const std::string &arch) {
  for (const char *known : {"sm_80", "sm_86", "sm_87", "sm_89", "sm_90", "sm_90a"})
    if (arch == known)
      return;
  throw std::invalid_argument("tlc compiles for sm_80, sm_86, sm_87, sm_89, sm_90 and sm_90a; "
                              "got '" +
                              arch + "'");
}

GPUPipelineOptions pipelineOptions(const std::string &arch, const GPUCompileOptions &options) {
  return {arch,
          options.sharedMemoryLimit ? options.sharedMemoryLimit : sharedMemoryLimit(arch),
          options.fastMath,
          /*wgmma=*/arch == "sm_90a" && options.wgmma,
          options.tma,
          options.warpSpecialize,
          options.elideAsyncBarriers,
          options.stmatrix,
          options.lowWordDescriptors,
          options.earlyTileHandBack};
}

/// The program lowered by buildGPUPipeline, and its kernel module.
std::pair<OwningOpRef<ModuleOp>, gpu::GPUModuleOp> lowerForGPU(const ModuleHandle &program,
                                                               const std::string &arch,
                                                               const GPUCompileOptions &options,
                                                               TimingScope &timing) {
  checkArch(arch);
  TimingScope verification = timing.nest("verification");
  program.verify();
  verification.stop();
  ModuleHandle::State &p = program.state();
  registerGPULowering(*p.context);
  OwningOpRef<ModuleOp> module = p.module->clone();
  GPUPipelineOptions pipeline = pipelineOptions(arch, options);
  TimingScope passes = timing.nest("MLIR passes");
  runPipelineOrThrow(*module, [&](OpPassManager &pm) { buildGPUPipeline(pm, pipeline); },
                     "GPU lowering failed",
                     {.printIRAfterAll = options.printIRAfterAll, .timing = &passes});
  gpu::GPUModuleOp gpuModule;
  module->walk([&](gpu::GPUModuleOp op) { gpuModule = op; });
  if (!gpuModule)
    throw std::runtime_error("GPU lowering of '" + p.name + "' produced no kernel");
  return {std::move(module), gpuModule};
}

std::string printed(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  op->print(os);
  return text;
}

} // namespace

std::int64_t sharedMemoryLimit(const std::string &arch) {
  constexpr std::int64_t KiB = 1024;
  static const std::pair<const char *, std::int64_t> limits[] = {
      {"sm_70", 96 * KiB},   {"sm_72", 96 * KiB},   {"sm_75", 64 * KiB},    {"sm_80", 163 * KiB},
      {"sm_86", 99 * KiB},   {"sm_87", 163 * KiB},  {"sm_89", 99 * KiB},    {"sm_90", 227 * KiB},
      {"sm_90a", 227 * KiB}, {"sm_100", 227 * KiB}, {"sm_100a", 227 * KiB}, {"sm_120", 99 * KiB},
      {"sm_120a", 99 * KiB}};
  for (auto [name, bytes] : limits)
    if (arch == name)
      return bytes;
  return 48 * KiB;
}

GPUBinary compileForGPU(const ModuleHandle &program, const std::string &arch,
                        const GPUCompileOptions &options) {
  DefaultTimingManager timingManager; // prints its report when it goes, if enabled
  timingManager.setEnabled(options.timing);
  TimingScope timing = timingManager.getRootScope();
  auto [module, gpuModule] = lowerForGPU(program, arch, options, timing);
  ModuleHandle::State &p = program.state();
  GPUBinary binary;
  binary.name = p.name;
  binary.arch = arch;
  binary.params = p.params;
  gpuModule.walk([&](LLVM::LLVMFuncOp func) {
    TLDialect &tl = tlDialect(func);
    if (auto grid = tl.getGridAttrHelper().getAttr(func))
      binary.grid.assign(grid.asArrayRef().begin(), grid.asArrayRef().end());
    if (auto threads = tl.getThreadsAttrHelper().getAttr(func))
      binary.threads = threads.getInt();
    if (auto shared = tl.getSharedBytesAttrHelper().getAttr(func))
      binary.sharedBytes = shared.getInt();
    if (auto layout = tl.getFragmentLayoutAttrHelper().getAttr(func))
      binary.fragmentLayout = layout.str();
    if (auto maps = tl.getTensorMapsAttrHelper().getAttr(func))
      for (auto map : maps.getAsRange<TensorMapAttr>())
        binary.tensorMaps.push_back(
            {map.getParam(), {map.getBox().begin(), map.getBox().end()}, map.getSwizzle()});
  });
  binary.ptx = emitPTX(gpuModule, arch, p.name, timing);
  // Correct but slow: gemms that did not get a tensor-core layout.
  if (binary.fragmentLayout.starts_with("row: ") && binary.fragmentLayout != "row: no gemm")
    binary.warnings.push_back("fragments take the Row layout (no tensor cores): " +
                              binary.fragmentLayout.substr(5));
  return binary;
}

std::string emitGPUStage(const ModuleHandle &program, const std::string &arch,
                         const std::string &stage, const GPUCompileOptions &options) {
  checkArch(arch);
  DefaultTimingManager timingManager;
  timingManager.setEnabled(options.timing);
  TimingScope timing = timingManager.getRootScope();
  if (stage == "planned" || stage == "thread") {
    program.verify();
    ModuleHandle::State &p = program.state();
    registerGPULowering(*p.context);
    OwningOpRef<ModuleOp> module = p.module->clone();
    GPUPipelineOptions pipeline = pipelineOptions(arch, options);
    TimingScope passes = timing.nest("MLIR passes");
    runPipelineOrThrow(*module,
                       [&](OpPassManager &pm) {
                         if (stage == "planned")
                           buildGPUPlanning(pm, pipeline);
                         else
                           buildGPULowering(pm, pipeline);
                       },
                       "GPU lowering failed",
                       {.printIRAfterAll = options.printIRAfterAll, .timing = &passes});
    return printed(*module);
  }
  if (stage != "llvm")
    throw std::invalid_argument("emitGPUStage: no stage '" + stage + "' (planned, thread or llvm)");
  auto [module, gpuModule] = lowerForGPU(program, arch, options, timing);
  std::unique_ptr<llvm::TargetMachine> machine(nvptxMachine(arch));
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      optimizedLLVM(gpuModule, *machine, program.name(), llvmContext, timing);
  std::string text;
  llvm::raw_string_ostream os(text);
  llvmModule->print(os, nullptr);
  return text;
}

} // namespace tl
