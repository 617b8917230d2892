#!/usr/bin/env bash
# The README's main job: set-up and build, then Lasso on the bundled diabetes data with 4 ranks
# (a coordinator, a scheduler and two workers), writing the model and the convergence trace.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/build.sh
root_flags=()
if [[ $(id -u) -eq 0 ]]; then root_flags=(--allow-run-as-root); fi
out="${OUT_DIR:-demo}"
mkdir -p "$out"
set -x
mpirun "${root_flags[@]}" --oversubscribe -np 4 "${BUILD_DIR:-build}/apps/lasso/schmp-lasso" \
  --data data/diabetes.svm --lambda_ratio 0.01 --tol 1e-8 \
  --output "$out/diabetes.model" --trace "$out/diabetes.trace.csv" --progress_seconds 0.5
