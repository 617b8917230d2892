#!/usr/bin/env bash
# Benchmark: schmp-lasso against scikit-learn, celer and skglm, same data, same lambda, in one run.
#
#   bench/lasso_vs_peers.sh [--quick]
#
# For each case, bench/lasso_peers.py times every peer at its best tolerance for each target and
# schmp-lasso at 1, 2 and 4 ranks from its trace (see its header). The table gives the seconds to a
# relative suboptimality of 1e-6 and their ratio to the fastest peer (below 1: schmp is ahead), and
# schmp's seconds to stop at a relative gap of 1e-7 beside its seconds to reach 1e-8 suboptimality.
# The peers are installed on first use into bench/.cache/peers (a virtual environment, from PyPI).
#
# Environment: SCHMP_BUILD (default <repo>/build), SCHMP_SHARED_DATA (default <repo>/../shared/data),
# SCHMP_BENCH_TIMEOUT (seconds allowed to one solve, default 120), SCHMP_BENCH_INTERCEPT (1: every solver
# fits an intercept; default 0, none).
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

cases=()
if ((quick)); then
  cases+=("$(generated_lasso corr200x500 --rows 200 --cols 500 --correlation 0.99 --support 20 --noise 0.1 --seed 1) 0.01")
  cases+=("$(generated_lasso 2000x10000 --rows 2000 --cols 10000 --density 0.01 --support 500 --noise 0.1 --seed 1) 0.05")
else
  sparse=$(generated_lasso 10000x50000 --rows 10000 --cols 50000 --density 0.01 --support 500 --noise 0.1 --seed 1)
  active=$(generated_lasso active10000x50000 --rows 10000 --cols 50000 --density 0.01 --support 5000 --noise 0.1 --seed 3)
  corr=$(generated_lasso corr200x500 --rows 200 --cols 500 --correlation 0.99 --support 20 --noise 0.1 --seed 1)
  corr_wide=$(generated_lasso corr500x2000 --rows 500 --cols 2000 --correlation 0.95 --support 100 --noise 0.1 --seed 2)
  for r in 0.1 0.01; do
    cases+=("$sparse $r" "$active $r" "$corr $r" "$corr_wide $r")
    for set in movielens_small_linreg/movielens_small.linreg.svm all_leukemia_age_lasso/all_leukemia_age_lasso.svm \
      cox2_lasso/cox2_lasso.svm prostate_lasso/prostate_lasso.svm diabetes_lasso/diabetes_lasso.svm; do
      if [[ -f $shared/lasso/$set ]]; then cases+=("$shared/lasso/$set $r"); else log "skipped $set: not found"; fi
    done
  done
fi

intercept=()
if [[ ${SCHMP_BENCH_INTERCEPT:-0} == 1 ]]; then intercept=(--intercept); fi
results=$cache/lasso_vs_peers.jsonl
: >"$results"
for entry in "${cases[@]}"; do
  read -r data ratio <<<"$entry"
  log "== $(basename "$data") lambda_ratio $ratio"
  "$venv/bin/python" "$repo/bench/lasso_peers.py" --data "$data" --lambda_ratio "$ratio" --schmp "$lasso" \
    --mpirun "${launcher[*]}" --limit "${SCHMP_BENCH_TIMEOUT:-120}" "${intercept[@]}" >>"$results"
done

"$venv/bin/python" - "$results" <<'EOF'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
def show(x):
    return "-" if x is None else f"{x:.3g}"
def ratio(a, b):
    return "-" if a is None or b is None or b == 0 else f"{a / b:.2f}"
print(f"{'data':34} {'ratio':>6} {'sklearn':>8} {'celer':>8} {'skglm':>8} {'np1':>8} {'np1/best':>8} "
      f"{'np2/np1':>8} {'np4/np1':>8} {'stop1e-7':>8} {'1e-8':>8}")
for r in rows:
    peers = {p: v["1e-06"] for p, v in r["peers"].items()}
    reached = [v for v in peers.values() if v is not None]
    best = min(reached) if reached else None
    s = r["schmp"]
    one = s["1"]["1e-06"]
    print(f"{r['data']:34} {r['lambda_ratio']:>6} {show(peers.get('sklearn')):>8} {show(peers.get('celer')):>8} "
          f"{show(peers.get('skglm')):>8} {show(one):>8} {ratio(one, best):>8} "
          f"{ratio(s.get('2', {}).get('1e-06'), one):>8} {ratio(s.get('4', {}).get('1e-06'), one):>8} "
          f"{show(s['1']['stop_1e-7']):>8} {show(s['1']['1e-08']):>8}")
print("seconds to a relative suboptimality of 1e-6 (peers at their best tolerance; schmp from its trace);")
print("np1/best: schmp in one process over the fastest peer; np2/np1, np4/np1: mpirun -np 2 and 4 over one process;")
print("stop1e-7: schmp's seconds until its relative gap is at most 1e-7; 1e-8: its seconds to 1e-8 suboptimality")
EOF
