# The "carry" build (TLC_CARRY=ON): one libtlc.so with the static MLIR and
# LLVM libraries inside, hidden, so that it runs on the GPU machine, which has
# no LLVM/MLIR (see shared/device.md). The everyday build links the shared
# libMLIR.so / libLLVM.so instead.
#
# MLIR's exported static targets link to the shared `LLVM` (and a few to the
# shared `MLIR`); re-point them to the static libraries.
llvm_map_components_to_libnames(tl_llvm_static_libs
  Core Support Passes IPO Analysis TransformUtils Target TargetParser
  OrcJIT ExecutionEngine RuntimeDyld JITLink MC Object BitReader BitWriter
  native NVPTX AsmPrinter CodeGen FrontendOpenMP Linker IRReader AsmParser
  PerfJITEvents)

set(TL_MLIR_STATIC_LIBS
  MLIRIR MLIRSupport MLIRParser MLIRPass MLIRTransforms MLIRTransformUtils
  MLIRArithDialect MLIRFuncDialect MLIRMathDialect MLIRMemRefDialect
  MLIRSCFDialect MLIRAffineDialect MLIRAffineUtils MLIRMemRefTransforms
  MLIRArithToLLVM MLIRControlFlowToLLVM MLIRFuncToLLVM MLIRIndexToLLVM
  MLIRMathToLLVM MLIRMemRefToLLVM MLIRAffineToStandard
  MLIRReconcileUnrealizedCasts MLIRSCFToControlFlow MLIRExecutionEngineUtils
  MLIRExecutionEngine MLIRBuiltinToLLVMIRTranslation
  MLIRLLVMToLLVMIRTranslation MLIRLLVMDialect MLIRTargetLLVMIRExport
  MLIRGPUDialect MLIRNVVMDialect MLIRGPUToNVVMTransforms MLIRNVVMToLLVM
  MLIRUBToLLVM MLIRGPUToLLVMIRTranslation MLIRNVVMToLLVMIRTranslation)

get_directory_property(tl_imported_targets DIRECTORY ${PROJECT_SOURCE_DIR} IMPORTED_TARGETS)
foreach(target IN LISTS tl_imported_targets)
  if(NOT target MATCHES "^MLIR." OR NOT TARGET ${target})
    continue()
  endif()
  get_target_property(type ${target} TYPE)
  get_target_property(links ${target} INTERFACE_LINK_LIBRARIES)
  if(NOT type STREQUAL "STATIC_LIBRARY" OR NOT links)
    continue()
  endif()
  set(changed FALSE)
  if("LLVM" IN_LIST links)
    list(REMOVE_ITEM links LLVM)
    list(APPEND links ${tl_llvm_static_libs})
    set(changed TRUE)
  endif()
  if("MLIR" IN_LIST links)
    list(REMOVE_ITEM links MLIR)
    set(changed TRUE)
  endif()
  if(changed)
    set_target_properties(${target} PROPERTIES INTERFACE_LINK_LIBRARIES "${links}")
  endif()
endforeach()
