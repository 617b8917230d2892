#!/usr/bin/env bash
# Benchmark: the softmax's regularisation path, schmp-logreg --multinomial --standardize --path 20 (one
# process, --tol 1e-6) against R's glmnet(family = "multinomial", standardize = TRUE) at the same lambdas
# (its default thresh), on wine (bundled), scikit-learn's digits and a generated 3-class sparse set. Needs
# R with glmnet (apt-get install r-cran-glmnet); scikit-learn comes into bench/.cache/peers on first use.
# Prints each one's seconds (schmp's whole command, and its solve from the path table; glmnet's fit at
# its default thresh, and how far its objective is then above schmp's at its worst lambda), and glmnet's
# seconds at the first of thresh 1e-9, 1e-11, 1e-13 that brings it within 1e-6 of schmp's objective at
# every lambda, as schmp's certified gap is, with schmp's solve over that.
#
#   bench/logreg_multinomial_path_vs_glmnet.sh
#
# Environment: SCHMP_BUILD (default <repo>/build).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/common.sh
source "$repo/bench/common.sh"
parse_arguments "$@"

logreg=$build/apps/logreg/schmp-logreg
cache=$repo/bench/.cache/multinomial_path
require_built "$logreg"
Rscript -e 'suppressMessages(library(glmnet))' || { log "R's glmnet is not installed"; exit 1; }
mkdir -p "$cache"
peers_venv
"$venv/bin/python" - "$cache" <<'PY'
import sys
import numpy as np
import scipy.sparse as sparse
from sklearn.datasets import dump_svmlight_file, load_digits
digits = load_digits()
dump_svmlight_file(digits.data, digits.target + 1, f"{sys.argv[1]}/digits.svm", zero_based=False)
rng = np.random.default_rng(1)
X = sparse.random(5000, 1000, density=0.03, format="csr", random_state=1, data_rvs=rng.standard_normal)
W = np.zeros((1000, 3))
for c in range(3):
    W[rng.choice(1000, 30, replace=False), c] = rng.standard_normal(30)
y = np.argmax(X @ W + 0.3 * rng.standard_normal((5000, 3)), axis=1) + 1
dump_svmlight_file(X, y, f"{sys.argv[1]}/generated.svm", zero_based=False)
PY

printf '%-10s %10s %10s %14s %12s %10s %9s %8s\n' data schmp_all schmp_solve glmnet_default \
  glmnet_above glmnet_1e-6 thresh /glmnet
for data in "$repo/data/wine.svm" "$cache/digits.svm" "$cache/generated.svm"; do
  table=$cache/$(basename "$data" .svm).csv
  start=$(date +%s.%N)
  "$logreg" --data "$data" --multinomial --standardize --path 20 --tol 1e-6 --progress_seconds 0 \
    --path_table "$table" >/dev/null
  end=$(date +%s.%N)
  solve=$(tail -1 "$table" | cut -d, -f7)
  theirs=$(Rscript "$repo/bench/multinomial_path_glmnet.R" "$data" "$table")
  "$venv/bin/python" - "$(basename "$data" .svm)" "$start" "$end" "$solve" "$theirs" <<'PY'
import json, sys
name, start, end, solve, runs = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), json.loads(sys.argv[5])
default = runs[0]
matched = next((r for r in runs if r["above"] <= 1e-6), None)
tight = f"{matched['seconds']:10.3g} {matched['thresh']:9.0e} {solve / matched['seconds']:8.2f}" if matched else \
    f"{'-':>10} {'-':>9} {'-':>8}"
print(f"{name:10} {end - start:10.3g} {solve:10.3g} {default['seconds']:14.3g} {default['above']:12.2e} {tight}")
PY
done
