# CUDA is optional: without nvcc the CPU parts build and GPU tests are not
# built at all (a clear message says so). With nvcc, GPU tests are built and
# skip themselves at run time when no device is present.
set(STRATA_HAVE_CUDA OFF)
if(STRATA_ENABLE_CUDA)
  if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX}
     AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    # Hopper (H100/H200); 90a enables wgmma/TMA where a kernel needs them.
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 90)
    endif()
    # One cudart per executable.
    set(CMAKE_CUDA_RUNTIME_LIBRARY Shared)
    set(CMAKE_CUDA_STANDARD 17)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    set(STRATA_HAVE_CUDA ON)
  else()
    message(STATUS "strata: nvcc not found: CUDA kernels, GPU tests and "
                   "GPU benchmarks are not built (CPU parts are)")
  endif()
else()
  message(STATUS "strata: CUDA disabled by STRATA_ENABLE_CUDA=OFF")
endif()
