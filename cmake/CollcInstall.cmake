# `cmake --install build --prefix P`: the C API (collc/collc.h, the
# generated collc/version.h, libcollc.so), the static libraries, the CMake
# package (collcConfig.cmake, its version file, collc::collc and, with
# COMPONENTS static, collc::compiler and collc::runtime), collc.pc, the
# Python package (with the torch backend's extension) and the collc tool.
# Every destination is GNUInstallDirs' (CMAKE_INSTALL_LIBDIR may be lib64 or
# lib/x86_64-linux-gnu): the targets, the CMake package, collc.pc
# (cmake/CollcPkgConfig.cmake) and the Python package agree on it.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(FILES api/include/collc/collc.h ${CMAKE_BINARY_DIR}/api/include/collc/version.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/collc)

install(TARGETS collc_shared EXPORT collcTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT collcTargets NAMESPACE collc:: FILE collcTargets.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/collc)

# collc_compiler is collc::compiler, collc_runtime collc::runtime, ...
foreach(lib ${COLLC_LIBRARIES})
  string(REGEX REPLACE "^collc_" "" name ${lib})
  set_target_properties(${lib} PROPERTIES EXPORT_NAME ${name})
endforeach()
install(TARGETS ${COLLC_LIBRARIES} EXPORT collcStaticTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT collcStaticTargets NAMESPACE collc:: FILE collcStaticTargets.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/collc)

if(TARGET collc_mpi)
  set(COLLC_HAVE_MPI_INSTALL TRUE)
else()
  set(COLLC_HAVE_MPI_INSTALL FALSE)
endif()
# collc_process links the nccl backend where this build has it: its
# consumers find the CUDA toolkit (the NCCL library is named by its path).
if(TARGET collc_nccl)
  set(COLLC_HAVE_NCCL_INSTALL TRUE)
else()
  set(COLLC_HAVE_NCCL_INSTALL FALSE)
endif()
configure_package_config_file(cmake/collcConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/collcConfig.cmake
                              INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/collc)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/collcConfigVersion.cmake
                                 COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_BINARY_DIR}/collcConfig.cmake ${CMAKE_BINARY_DIR}/collcConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/collc)

include(cmake/CollcPkgConfig.cmake)
collc_write_pc(${CMAKE_BINARY_DIR}/collc.pc "${CMAKE_INSTALL_LIBDIR}" "${CMAKE_INSTALL_INCLUDEDIR}"
               "${PROJECT_VERSION}")
install(FILES ${CMAKE_BINARY_DIR}/collc.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# The Python package (docs/python.md), beside libcollc.so: installed as
# LIBDIR/python3/site-packages/collc, it loads LIBDIR/libcollc.so; with it
# the torch.distributed backend's extension where this build has it
# (cmake/CollcTorch.cmake: its RPATH finds LIBDIR from there).
set(COLLC_PYTHON_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/python3/site-packages)
install(DIRECTORY python/collc DESTINATION ${COLLC_PYTHON_INSTALL_DIR}
        PATTERN __pycache__ EXCLUDE PATTERN csrc EXCLUDE)
if(TARGET collc_torch_c10d)
  install(TARGETS collc_torch_c10d LIBRARY DESTINATION ${COLLC_PYTHON_INSTALL_DIR}/collc/torch)
endif()

# The collc tool (docs/cli.md).
install(TARGETS collc RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
