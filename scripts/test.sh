#!/usr/bin/env bash
# The whole test suite, from a fresh machine: set-up, a build with warnings as errors, then ctest
# (unit tests, end-to-end runs under mpirun with 1, 3 and 5 ranks, and the example program built
# outside the tree against the installed framework).
set -euo pipefail
cd "$(dirname "$0")/.."

# mpirun refuses to run as root, and the tests start more ranks than a small machine has cores.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
SCHMP_WERROR=ON scripts/build.sh
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure --timeout 900 -j "$(nproc)"
