# libtlc.so: the union of the four layers' objects (support/, compiler/,
# dsl/, runtime/), linking MLIR/LLVM once. Everything else links it.
add_library(tlc SHARED
  $<TARGET_OBJECTS:tl_support> $<TARGET_OBJECTS:tl_compiler>
  $<TARGET_OBJECTS:tl_dsl> $<TARGET_OBJECTS:tl_runtime>)
target_include_directories(tlc PUBLIC
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/support/include>
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/compiler/include>
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/dsl/include>
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/runtime/include>
  $<INSTALL_INTERFACE:include>)
if(TLC_CARRY)
  # Static MLIR/LLVM and header-only fmt, none of their symbols exported;
  # libstdc++ stays shared so exceptions cross into the executables. The GPU
  # machine (Ubuntu 24.04) has libstdc++, libc, libm, libz and libzstd.
  target_link_libraries(tlc PRIVATE ${TL_MLIR_STATIC_LIBS} fmt::fmt-header-only zstd z ${CMAKE_DL_LIBS}
    -Wl,--gc-sections -Wl,--exclude-libs,ALL
    -Wl,--version-script=${PROJECT_SOURCE_DIR}/cmake/tlc-carry.map)
else()
  target_link_libraries(tlc PRIVATE MLIR LLVM fmt::fmt ${CMAKE_DL_LIBS})
endif()
set_target_properties(tlc PROPERTIES CXX_VISIBILITY_PRESET default)
