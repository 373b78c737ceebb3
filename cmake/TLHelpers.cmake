# Helpers shared by the project's CMake files.

# Compile options for sources that include MLIR/LLVM headers (the compiler
# library only). Everything else includes just the light public headers.
function(tl_use_mlir target)
  target_include_directories(${target} SYSTEM PRIVATE ${LLVM_INCLUDE_DIRS} ${MLIR_INCLUDE_DIRS})
  separate_arguments(_llvm_defs NATIVE_COMMAND "${LLVM_DEFINITIONS}")
  target_compile_options(${target} PRIVATE ${_llvm_defs})
endfunction()
