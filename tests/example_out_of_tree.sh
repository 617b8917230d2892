#!/usr/bin/env bash
# Builds examples/ridge with find_package(schmp) against schmp installed from a build tree into a
# scratch prefix, and against the build tree itself (-Dschmp_DIR), and runs each under mpirun: the
# paths a user's own program takes.
# usage: example_out_of_tree.sh SOURCE_DIR BUILD_DIR MPIEXEC
set -euo pipefail
source_dir=$1 build_dir=$2 mpiexec=$3
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cmake --install "$build_dir" --prefix "$scratch/prefix" >/dev/null
for package in "-DCMAKE_PREFIX_PATH=$scratch/prefix" "-Dschmp_DIR=$build_dir"; do
  rm -rf "$scratch/build"
  cmake -S "$source_dir/examples/ridge" -B "$scratch/build" "$package" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$scratch/build" >/dev/null
  for ranks in 1 3; do
    output=$("$mpiexec" --allow-run-as-root --oversubscribe -np $ranks "$scratch/build/ridge" --progress_seconds 0)
    echo "$output"
    grep -q "^ridge: converged" <<<"$output"
  done
done
