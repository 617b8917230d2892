#!/usr/bin/env bash
# Set-up and build: installs the Debian packages (scripts/setup.sh), configures and builds schmp in
# $BUILD_DIR (default build/). Extra arguments go to CMake. SCHMP_WERROR=ON turns warnings into errors.
# SCHMP_SKIP_SETUP=1 leaves the packages alone: on a machine without apt (or offline) whose libraries
# are already where CMake finds them.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ "${SCHMP_SKIP_SETUP:-0}" != 1 ]]; then scripts/setup.sh; fi
# CUDA is optional; CMake finds nvcc only when it is on PATH or named by CUDACXX.
if [[ -z "${CUDACXX:-}" && -x /usr/local/cuda/bin/nvcc ]]; then
  export PATH="/usr/local/cuda/bin:$PATH"
  export CUDACXX=/usr/local/cuda/bin/nvcc
fi
build="${BUILD_DIR:-build}"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DSCHMP_WERROR="${SCHMP_WERROR:-OFF}" "$@" >/dev/null
cmake --build "$build" -j "$(nproc)"
