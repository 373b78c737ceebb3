# Helpers shared by the project's CMake files.

# Compile options for sources that include MLIR/LLVM headers (the compiler
# library only). Everything else includes just the light public headers.
function(tl_use_mlir target)
  target_include_directories(${target} SYSTEM PRIVATE ${LLVM_INCLUDE_DIRS} ${MLIR_INCLUDE_DIRS})
  separate_arguments(_llvm_defs NATIVE_COMMAND "${LLVM_DEFINITIONS}")
  target_compile_options(${target} PRIVATE ${_llvm_defs})
endfunction()

# The part of libtlc.so a folder compiles (an OBJECT library): position
# independent; in the carry build each function and datum in its own section
# (the link drops what nothing uses); fmt as libtlc links it.
function(tl_library_objects target)
  set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  if(TLC_CARRY)
    target_compile_options(${target} PRIVATE -ffunction-sections -fdata-sections)
    target_link_libraries(${target} PRIVATE fmt::fmt-header-only)
  else()
    target_link_libraries(${target} PRIVATE fmt::fmt)
  endif()
endfunction()
