#!/usr/bin/env bash
# Set-up and build: installs the Debian packages (scripts/setup.sh), configures and builds schmp in
# $BUILD_DIR (default build/). Extra arguments go to CMake. SCHMP_WERROR=ON turns warnings into errors.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
# CUDA is optional; CMake finds nvcc only when it is on PATH or named by CUDACXX.
if [[ -z "${CUDACXX:-}" && -x /usr/local/cuda/bin/nvcc ]]; then
  export PATH="/usr/local/cuda/bin:$PATH"
  export CUDACXX=/usr/local/cuda/bin/nvcc
fi
build="${BUILD_DIR:-build}"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DSCHMP_WERROR="${SCHMP_WERROR:-OFF}" "$@" >/dev/null
cmake --build "$build" -j "$(nproc)"
