#!/usr/bin/env bash
# Benchmark: a 100-lambda Lasso path (lambda_max down to lambda_max / 100), schmp-lasso against
# scikit-learn's lasso_path, celer, skglm and glmnet (where R has it: apt-get install r-cran-glmnet),
# same data, same lambdas, in one run.
#
#   bench/lasso_path_vs_peers.sh
#
# For each set, bench/lasso_path_peers.py runs every solver's whole path at a ladder of tolerances
# (see its header). The table gives the seconds until every lambda of the path is within 1e-6 of the
# best objective found there, and schmp's ratio to the fastest peer (below 1: schmp is ahead). The
# peers are installed on first use into bench/.cache/peers (a virtual environment, from PyPI).
#
# Environment: SCHMP_BUILD (default <repo>/build), SCHMP_SHARED_DATA (default <repo>/../shared/data),
# SCHMP_BENCH_TIMEOUT (seconds allowed to one path, default 120).
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

results=$cache/lasso_path_vs_peers.jsonl
: >"$results"
for data in "${sets[@]}"; do
  log "== $(basename "$data")"
  "$venv/bin/python" "$repo/bench/lasso_path_peers.py" --data "$data" --schmp "$lasso" \
    --limit "${SCHMP_BENCH_TIMEOUT:-120}" >>"$results"
done

"$venv/bin/python" - "$results" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
def show(x):
    return "-" if x is None else f"{x:.3g}"
print(f"{'data':34} {'sklearn':>8} {'celer':>8} {'skglm':>8} {'glmnet':>8} {'schmp':>8} {'/best':>6}   (seconds to 1e-6 at every lambda)")
for r in rows:
    s = {k: v["1e-06"] for k, v in r["solvers"].items()}
    peers = [v for k, v in s.items() if k != "schmp" and v is not None]
    ratio = "-" if s.get("schmp") is None or not peers else f"{s['schmp'] / min(peers):.2f}"
    print(f"{r['data']:34} {show(s.get('sklearn')):>8} {show(s.get('celer')):>8} {show(s.get('skglm')):>8} "
          f"{show(s.get('glmnet')):>8} "
          f"{show(s.get('schmp')):>8} {ratio:>6}")
PY
