# The sanitizer configuration (docs/testing.md): AddressSanitizer and
# UndefinedBehaviorSanitizer on every C and C++ file, and optionally the
# libFuzzer targets of tests/fuzz. scripts/test.sh builds it in build-san
# next to the normal build.
#
# Included after StrataCUDA.cmake (CUDA must be off) and before any target
# is defined (the flags are global).
if(NOT STRATA_SANITIZE AND NOT STRATA_ENABLE_FUZZERS)
  return()
endif()

if(STRATA_ENABLE_FUZZERS AND NOT STRATA_SANITIZE)
  message(FATAL_ERROR "strata: STRATA_ENABLE_FUZZERS needs STRATA_SANITIZE=ON "
                      "(a fuzzer without sanitizers misses most bugs)")
endif()
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "strata: the sanitizer build needs clang (libFuzzer and "
                      "the sanitizer runtimes of clang 16 come from Debian's "
                      "libclang-rt-16-dev); configure with CC=clang-16 "
                      "CXX=clang++-16")
endif()
# nvcc-compiled code would not be instrumented, and the host code it would
# bring is what the CPU build already runs: the sanitizer build is CPU-only.
if(STRATA_HAVE_CUDA)
  message(FATAL_ERROR "strata: the sanitizer build is CPU-only; configure it "
                      "with -DSTRATA_ENABLE_CUDA=OFF")
endif()

# -fno-sanitize-recover: undefined behaviour stops the program, so that a
# test or a fuzzer fails instead of printing a warning nobody reads.
set(STRATA_SANITIZER_FLAGS -fsanitize=address,undefined
    -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:${STRATA_SANITIZER_FLAGS}>")
add_link_options(-fsanitize=address,undefined)

if(STRATA_ENABLE_FUZZERS)
  # Coverage feedback for libFuzzer in every library a fuzzer calls; only the
  # fuzz targets themselves link libFuzzer's main (-fsanitize=fuzzer), the
  # other executables get the sanitizer runtime's no-op coverage hooks.
  add_compile_options(
    "$<$<COMPILE_LANGUAGE:C,CXX>:-fsanitize=fuzzer-no-link>")
endif()

# Sanitizer reports that are known, reported and being fixed in code this
# build must not change, turned off as narrowly as the compiler allows (one
# check, one file) so that the rest of the suite keeps running under the
# sanitizers. Each entry names its pending input (tests/fuzz/pending/,
# replayed by `scripts/fuzz.sh --pending`); when the fix lands, delete the
# entry and move the input to tests/fuzz/regressions/.
function(strata_sanitizer_exempt file flag)
  get_filename_component(dir ${PROJECT_SOURCE_DIR}/${file} DIRECTORY)
  set_source_files_properties(${PROJECT_SOURCE_DIR}/${file}
    DIRECTORY ${dir} PROPERTIES COMPILE_OPTIONS ${flag})
endfunction()

function(strata_sanitizer_exemptions)
  # None at present.
endfunction()

# The default options below go into every executable, so that a sanitizer
# report behaves the same under ctest, lit, a script or a shell: it aborts
# (a crash, which `not` and %expect-exit cannot mistake for a clean error
# exit) with a symbolized stack.
function(strata_sanitizer_defaults_in dir)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(t ${targets})
    get_target_property(type ${t} TYPE)
    if(type STREQUAL "EXECUTABLE")
      target_sources(${t} PRIVATE
                     ${PROJECT_SOURCE_DIR}/cmake/SanitizerDefaults.cpp)
    endif()
  endforeach()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub ${subdirs})
    strata_sanitizer_defaults_in(${sub})
  endforeach()
endfunction()

# Called once at the end of the top-level CMakeLists.txt, when every target
# and source exists.
function(strata_sanitizer_finish)
  strata_sanitizer_defaults_in(${PROJECT_SOURCE_DIR})
  strata_sanitizer_exemptions()
endfunction()
