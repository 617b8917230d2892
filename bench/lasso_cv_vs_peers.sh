#!/usr/bin/env bash
# Benchmark: 5-fold cross-validation of a 100-lambda Lasso path with an intercept (lambda_max down to
# lambda_max / 100), schmp-lasso --cv against scikit-learn's LassoCV and glmnet's cv.glmnet, same folds,
# same lambdas, in one run.
#
#   bench/lasso_cv_vs_peers.sh
#
# bench/lasso_cv_peers.py runs each set (see its header). schmp runs on 2 ranks (the folds side by
# side), LassoCV with n_jobs=2. The table gives each solver's seconds and the index of its lambda_min
# on the path, and schmp's time over the fastest peer's (below 1: schmp is ahead). cv.glmnet runs where
# R has glmnet (Debian: apt-get install r-cran-glmnet). The Python peers are installed on first use
# into bench/.cache/peers (a virtual environment, from PyPI).
#
# Environment: SCHMP_BUILD (default <repo>/build), SCHMP_SHARED_DATA (default <repo>/../shared/data),
# SCHMP_BENCH_TIMEOUT (seconds allowed to schmp's run, default 600).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/common.sh
source "$repo/bench/common.sh"
parse_arguments "$@"

lasso=$build/apps/lasso/schmp-lasso
generate=$build/tools/schmp-generate
cache=$repo/bench/.cache
require_built "$lasso" "$generate"
mkdir -p "$cache"
peers_venv

path_sets
command -v Rscript >/dev/null || log "cv.glmnet skipped: no Rscript (apt-get install r-cran-glmnet)"

results=$cache/lasso_cv_vs_peers.jsonl
: >"$results"
for data in "${sets[@]}"; do
  log "== $(basename "$data")"
  "$venv/bin/python" "$repo/bench/lasso_cv_peers.py" --data "$data" --schmp "$lasso" \
    --launcher "mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2" \
    --limit "${SCHMP_BENCH_TIMEOUT:-600}" >>"$results"
done

"$venv/bin/python" - "$results" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
def show(r, solver):
    return "-" if solver not in r else f"{r[solver]['seconds']:.3g} s @{r[solver]['index']}"
print(f"{'data':34} {'LassoCV':>14} {'cv.glmnet':>14} {'schmp':>14} {'/best':>6}   (seconds @ lambda_min's index)")
for r in rows:
    peers = [r[s]["seconds"] for s in ("sklearn", "glmnet") if s in r]
    ratio = f"{r['schmp']['seconds'] / min(peers):.2f}" if peers else "-"
    print(f"{r['data']:34} {show(r, 'sklearn'):>14} {show(r, 'glmnet'):>14} {show(r, 'schmp'):>14} {ratio:>6}")
PY
