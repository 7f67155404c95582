# Detects the CUDA toolkit and NCCL for the NCCL backend. On these machines
# NCCL ships inside the toolkit (its include/ and lib64/). When either is
# missing the build goes on without the backend and says so.
set(COLLC_HAVE_NCCL OFF)
set(COLLC_NCCL_REASON "disabled by COLLC_ENABLE_NCCL=OFF")
if(COLLC_ENABLE_NCCL)
  if(NOT DEFINED CUDAToolkit_ROOT AND EXISTS /usr/local/cuda)
    set(CUDAToolkit_ROOT /usr/local/cuda)
  endif()
  find_package(CUDAToolkit QUIET)
  if(NOT CUDAToolkit_FOUND)
    set(COLLC_NCCL_REASON "no CUDA toolkit found (set CUDAToolkit_ROOT)")
  else()
    find_path(COLLC_NCCL_INCLUDE_DIR nccl.h
              HINTS ${CUDAToolkit_INCLUDE_DIRS} ${CUDAToolkit_LIBRARY_ROOT}/include
                    $ENV{NCCL_HOME}/include /usr/include)
    find_library(COLLC_NCCL_LIBRARY nccl
                 HINTS ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_LIBRARY_ROOT}/lib64
                       $ENV{NCCL_HOME}/lib /usr/lib/x86_64-linux-gnu)
    if(NOT COLLC_NCCL_INCLUDE_DIR OR NOT COLLC_NCCL_LIBRARY)
      set(COLLC_NCCL_REASON "CUDA ${CUDAToolkit_VERSION} found but no nccl.h/libnccl (set NCCL_HOME)")
    else()
      file(STRINGS ${COLLC_NCCL_INCLUDE_DIR}/nccl.h _nccl_ver REGEX "#define NCCL_(MAJOR|MINOR|PATCH) ")
      string(REGEX REPLACE ".*NCCL_MAJOR ([0-9]+).*" "\\1" _maj "${_nccl_ver}")
      string(REGEX REPLACE ".*NCCL_MINOR ([0-9]+).*" "\\1" _min "${_nccl_ver}")
      string(REGEX REPLACE ".*NCCL_PATCH ([0-9]+).*" "\\1" _pat "${_nccl_ver}")
      set(COLLC_NCCL_VERSION "${_maj}.${_min}.${_pat}")
      set(COLLC_HAVE_NCCL ON)
      set(COLLC_NCCL_REASON "CUDA ${CUDAToolkit_VERSION}, NCCL ${COLLC_NCCL_VERSION} at ${COLLC_NCCL_LIBRARY}")
    endif()
  endif()
endif()
if(COLLC_HAVE_NCCL)
  message(STATUS "collc: NCCL backend ON (${COLLC_NCCL_REASON})")
else()
  message(STATUS "collc: NCCL backend OFF: ${COLLC_NCCL_REASON}")
endif()
