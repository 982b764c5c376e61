# MLIR 16 from Debian's llvm-16 packages. The unversioned llvm-config on PATH
# may be another LLVM, hence the explicit hint.
find_package(MLIR 16 REQUIRED CONFIG HINTS /usr/lib/llvm-16/lib/cmake/mlir)
message(STATUS "strata: MLIR from ${MLIR_DIR}")

# Debian's MLIR 16 static libraries are built with clang. GCC lays out the
# closures of lambdas in MLIR's inline functions differently (capture order),
# and the linker keeps one copy of each such inline function for the whole
# program, so clang-compiled MLIR code ends up calling GCC-compiled callbacks
# with the wrong closure: strata-opt then crashes while parsing plain
# func.return ops.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  message(FATAL_ERROR "strata: the MLIR side cannot be built with GCC: "
                      "Debian's MLIR 16 libraries are built with clang and "
                      "the tools crash when GCC-compiled code is linked with "
                      "them (lambda closures in inline functions). Configure "
                      "a fresh build folder with CC=clang-16 CXX=clang++-16 "
                      "(scripts/setup.sh does), or -DSTRATA_ENABLE_MLIR=OFF "
                      "for the runtime alone.")
endif()

# LLVM 16 writes tablegen depfiles that make Ninja re-run mlir-tblgen on
# every build under the new policy.
cmake_policy(SET CMP0116 OLD)

list(APPEND CMAKE_MODULE_PATH "${MLIR_CMAKE_DIR}" "${LLVM_CMAKE_DIR}")
# Only these three: HandleLLVMOptions would rewrite global flags (CUDA too).
include(TableGen)
include(AddLLVM)
include(AddMLIR)

set(STRATA_MLIR_INCLUDE_DIRS ${LLVM_INCLUDE_DIRS} ${MLIR_INCLUDE_DIRS})
separate_arguments(STRATA_LLVM_DEFINITIONS NATIVE_COMMAND
                   "${LLVM_DEFINITIONS}")

# Debian's LLVM 16 is built with RTTI and without exceptions: everything that
# includes MLIR headers follows suit. Exceptions never cross MLIR frames.
function(strata_mlir_target target)
  target_include_directories(${target} SYSTEM PUBLIC
                             ${STRATA_MLIR_INCLUDE_DIRS})
  target_compile_definitions(${target} PUBLIC ${STRATA_LLVM_DEFINITIONS})
  target_compile_options(${target} PRIVATE
                         $<$<COMPILE_LANGUAGE:CXX>:-fno-exceptions>)
endfunction()
