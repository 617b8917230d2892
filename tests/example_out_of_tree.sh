#!/usr/bin/env bash
# Builds the examples (examples/first, examples/ridge) with find_package(schmp) against schmp installed
# from a build tree into a scratch prefix, and against the build tree itself (-Dschmp_DIR), and runs each
# under mpirun: the paths a user's own program takes.
# usage: example_out_of_tree.sh SOURCE_DIR BUILD_DIR MPIEXEC
set -euo pipefail
source_dir=$1 build_dir=$2 mpiexec=$3
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# Open MPI's session directory of its own: mpiruns of other tests starting at the same moment race
# to create the shared one (open-mpi/ompi#8510).
export OMPI_MCA_orte_tmpdir_base="$scratch"
cmake --install "$build_dir" --prefix "$scratch/prefix" >/dev/null
for package in "-DCMAKE_PREFIX_PATH=$scratch/prefix" "-Dschmp_DIR=$build_dir"; do
  for example in first ridge; do
    rm -rf "$scratch/build"
    cmake -S "$source_dir/examples/$example" -B "$scratch/build" "$package" -DCMAKE_BUILD_TYPE=Release >/dev/null
    cmake --build "$scratch/build" >/dev/null
    # Three ranks as the engine lays them out (on a small machine, one process) and each in its role.
    for job in "1" "3" "3 --layout all"; do
      read -r ranks layout <<<"$job"
      # shellcheck disable=SC2086 # $layout is empty or a flag and its value
      output=$("$mpiexec" --allow-run-as-root --oversubscribe -np $ranks "$scratch/build/$example" --progress_seconds 0 $layout)
      echo "$output"
      grep -q "^$example: converged" <<<"$output"
      # The first example's data were made from w*_j = j: it must find them, to the noise's precision.
      if [[ $example == first ]]; then
        sed -n 's/^first: .*; w = //p' <<<"$output" |
          awk '{ for (j = 1; j <= NF; ++j) if ($j - (j - 1) > 0.05 || (j - 1) - $j > 0.05) exit 1; found = NF == 8 }
               END { exit !found }'
      fi
    done
  done
done
