# `cmake --install`: libtlc, the kernels library, the light public headers
# (no MLIR) and a CMake package, so that an application can
#   find_package(tlc REQUIRED)
#   target_link_libraries(app PRIVATE tlc::tlc)        # or tlc::tl_kernels
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The installed libtlc finds libMLIR/libLLVM where they were at build time.
set_target_properties(tlc PROPERTIES INSTALL_RPATH "${LLVM_LIBRARY_DIR}")
install(TARGETS tlc tl_kernels EXPORT tlcTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY support/include/ dsl/include/ runtime/include/
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES compiler/include/tl/Compiler/GPUCompiler.h compiler/include/tl/Compiler/HostJIT.h
              compiler/include/tl/Compiler/Ptxas.h compiler/include/tl/Compiler/ModuleHandle.h
              compiler/include/tl/Compiler/CrashHandler.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tl/Compiler)
install(FILES kernels/mha/mha.h kernels/mha/attention.h kernels/mha/reference.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/mha)
install(EXPORT tlcTargets NAMESPACE tlc:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tlc)
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/tlcConfig.cmake
     "include(\"\${CMAKE_CURRENT_LIST_DIR}/tlcTargets.cmake\")\n")
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/tlcConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/tlcConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/tlcConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tlc)
