#!/usr/bin/env bash
# Installs the Debian 12 packages schmp builds and tests with. Idempotent: packages already present are
# left alone, and apt-get is not touched at all when nothing is missing.
#   scripts/setup.sh           build and test dependencies (liblinear-tools: the tests check that
#                              liblinear-predict reads schmp-logreg's models; python3-matplotlib:
#                              schmp-trace plots; clang and its runtime: the libFuzzer targets;
#                              iproute2: scripts/netns-cluster's simulated hosts)
#   scripts/setup.sh --bench   also the peers the benchmarks compare against (scikit-learn; pip, with
#                              which the benchmarks fetch LIBMF's source and tomotopy)
set -euo pipefail

packages=(cmake g++ make pkg-config
  libopenmpi-dev openmpi-bin
  libeigen3-dev libtbb-dev libgflags-dev libgoogle-glog-dev
  libgtest-dev libgmock-dev
  liblinear-tools
  python3-matplotlib
  clang libclang-rt-14-dev
  iproute2)
if [[ "${1:-}" == "--bench" ]]; then
  packages+=(python3-sklearn python3-numpy python3-scipy python3-pip python3-venv)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if ((${#missing[@]} == 0)); then
  exit 0
fi

# Passed on the command line: sudo resets the environment, so an exported setting would not reach apt.
as_root=(env DEBIAN_FRONTEND=noninteractive)
if [[ $(id -u) -ne 0 ]]; then as_root=(sudo "${as_root[@]}"); fi
echo "setup: installing ${missing[*]}" >&2
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
