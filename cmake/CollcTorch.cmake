# torch.distributed's "collc" backend (python/collc/torch/csrc): a c10d
# ProcessGroup as a Python extension module, collc.torch._c10d, built
# against Debian's libtorch-dev (torch 1.13) when torch, pybind11 and a
# Python that imports torch are found, and installed with the Python
# package. It calls collc through the C API (libcollc.so) only.
set(COLLC_TORCH_PYTHON "" CACHE FILEPATH
    "The Python the torch backend is built for (empty: /usr/bin/python3, then the one CMake found)")
set(COLLC_TORCH_BACKEND_REASON "")
find_package(Torch QUIET CONFIG)
# pybind11 is headers only; its CMake package would look for a Python of
# its own, which need not be torch's.
find_path(COLLC_PYBIND11_INCLUDE pybind11/pybind11.h)
if(NOT COLLC_TORCH_PYTHON)
  foreach(py /usr/bin/python3 ${Python3_EXECUTABLE})
    execute_process(COMMAND ${py} -c "import torch" RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
    if(rc EQUAL 0)
      set(COLLC_TORCH_PYTHON ${py})
      break()
    endif()
  endforeach()
endif()
# Not in sanitizer or fuzzer builds (the interpreter that would load it is
# not instrumented, and the Python tests do not run there), nor with clang:
# Debian's libtorch 1.13 headers do not compile with clang 14.
if(COLLC_SANITIZE OR COLLC_ENABLE_FUZZER)
  set(COLLC_TORCH_BACKEND_REASON "a sanitizer or fuzzer build (the Release build has it)")
elseif(NOT CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  set(COLLC_TORCH_BACKEND_REASON "${CMAKE_CXX_COMPILER_ID} (libtorch 1.13's headers need GCC)")
elseif(NOT Torch_FOUND)
  set(COLLC_TORCH_BACKEND_REASON "no libtorch (apt-get install libtorch-dev)")
elseif(NOT COLLC_PYBIND11_INCLUDE)
  set(COLLC_TORCH_BACKEND_REASON "no pybind11 (apt-get install pybind11-dev)")
elseif(NOT COLLC_TORCH_PYTHON)
  set(COLLC_TORCH_BACKEND_REASON "no Python here imports torch (apt-get install python3-torch)")
else()
  # The interpreter's own headers and module suffix: the extension is that
  # Python's, whatever Python CMake found for the tests.
  execute_process(COMMAND ${COLLC_TORCH_PYTHON} -c
                  "import sysconfig, torch; print(sysconfig.get_paths()['include']); print(sysconfig.get_config_var('EXT_SUFFIX')); print(torch.__version__)"
                  OUTPUT_VARIABLE py_info OUTPUT_STRIP_TRAILING_WHITESPACE)
  string(REPLACE "\n" ";" py_info "${py_info}")
  list(GET py_info 0 COLLC_TORCH_PYTHON_INCLUDE)
  list(GET py_info 1 COLLC_TORCH_EXT_SUFFIX)
  list(GET py_info 2 COLLC_TORCH_PY_VERSION)
  find_library(COLLC_TORCH_PYTHON_LIBRARY torch_python HINTS ${TORCH_INSTALL_PREFIX}/lib)
  if(NOT EXISTS ${COLLC_TORCH_PYTHON_INCLUDE}/Python.h)
    set(COLLC_TORCH_BACKEND_REASON "no Python.h for ${COLLC_TORCH_PYTHON} (apt-get install python3-dev)")
  elseif(NOT COLLC_TORCH_PYTHON_LIBRARY)
    set(COLLC_TORCH_BACKEND_REASON "no libtorch_python (apt-get install libtorch-dev)")
  endif()
endif()

if(COLLC_TORCH_BACKEND_REASON)
  message(STATUS "collc: torch.distributed backend not built: ${COLLC_TORCH_BACKEND_REASON}")
  return()
endif()
message(STATUS "collc: torch.distributed backend for ${COLLC_TORCH_PYTHON} (torch ${COLLC_TORCH_PY_VERSION})")

add_library(collc_torch_c10d MODULE python/collc/torch/csrc/Module.cpp
            python/collc/torch/csrc/ProcessGroupCollc.cpp)
set_target_properties(collc_torch_c10d PROPERTIES
  OUTPUT_NAME _c10d PREFIX "" SUFFIX ${COLLC_TORCH_EXT_SUFFIX}
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/python/collc/torch
  CXX_VISIBILITY_PRESET hidden
  # libcollc.so beside the package once installed (LIBDIR/python3/
  # site-packages/collc/torch -> LIBDIR), and in the build tree.
  INSTALL_RPATH "\$ORIGIN/../../../..")
# torch's headers warn under collc's -Wall -Wextra: they are the system's.
target_include_directories(collc_torch_c10d SYSTEM PRIVATE ${TORCH_INCLUDE_DIRS}
                           ${COLLC_PYBIND11_INCLUDE} ${COLLC_TORCH_PYTHON_INCLUDE})
target_compile_options(collc_torch_c10d PRIVATE ${TORCH_CXX_FLAGS})
target_compile_definitions(collc_torch_c10d PRIVATE TORCH_EXTENSION_NAME=_c10d)
target_link_libraries(collc_torch_c10d PRIVATE collc::collc ${TORCH_LIBRARIES}
                      ${COLLC_TORCH_PYTHON_LIBRARY})
set(COLLC_TORCH_BACKEND ON)
