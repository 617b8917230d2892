#!/usr/bin/env bash
# Benchmark: schmp-logreg (L1) against liblinear, celer and skglm, same data, same C, in one run.
#
#   bench/logreg_vs_peers.sh [--quick]
#
# For each case, bench/logreg_peers.py times every peer at its best tolerance for each target and
# schmp-logreg at 1, 2 and 4 ranks from its trace (see its header). liblinear is scikit-learn's copy.
# The table gives the seconds to a relative suboptimality of 1e-6 and their ratio to the fastest peer
# (below 1: schmp is ahead), and schmp's seconds to stop at --tol 1e-4 (its default). The cases are
# every set under $SCHMP_SHARED_DATA/logreg and two generated shapes (schmp-generate logreg, made on
# first use in bench/.cache: dense 1,000 x 2,000 with neighbouring columns correlated 0.95, and sparse
# 20,000 x 50,000 with 5,000 true features), at C = 0.1, 1 and 10; `--quick` runs heart_scale and
# dna_splice at C = 1. The peers are installed on first use into bench/.cache/peers (a virtual
# environment, from PyPI).
#
# Environment: SCHMP_BUILD (default <repo>/build), SCHMP_SHARED_DATA (default <repo>/../shared/data),
# SCHMP_BENCH_TIMEOUT (seconds allowed to one solve, default 120).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/common.sh
source "$repo/bench/common.sh"
parse_arguments "$@"

logreg=$build/apps/logreg/schmp-logreg
generate=$build/tools/schmp-generate
cache=$repo/bench/.cache
require_built "$logreg" "$generate"
mkdir -p "$cache"

peers_venv

cases=()
if ((quick)); then
  heart=$shared/logreg/heart_scale_logreg/heart_scale.svm
  if [[ ! -f $heart ]]; then heart=$repo/data/heart_scale.svm; fi
  cases+=("$heart 1")
  dna=$shared/logreg/dna_splice_logreg/dna_splice_logreg.svm
  if [[ -f $dna ]]; then cases+=("$dna 1"); else log "skipped dna_splice: $dna not found"; fi
else
  sets=()
  for set in "$shared"/logreg/*/*.svm; do
    if [[ -f $set ]]; then sets+=("$set"); fi
  done
  if ((${#sets[@]} == 0)); then
    log "no data sets under $shared/logreg: set SCHMP_SHARED_DATA"
    exit 1
  fi
  sets+=("$(generated logreg corr1000x2000 --rows 1000 --cols 2000 --correlation 0.95 --support 100 --noise 0.1 \
    --seed 4)")
  sets+=("$(generated logreg active20000x50000 --rows 20000 --cols 50000 --density 0.002 --support 5000 \
    --noise 0.1 --seed 5)")
  for C in 0.1 1 10; do
    for set in "${sets[@]}"; do cases+=("$set $C"); done
  done
fi

results=$cache/logreg_vs_peers.jsonl
: >"$results"
for entry in "${cases[@]}"; do
  read -r data C <<<"$entry"
  log "== $(basename "$data") C $C"
  "$venv/bin/python" "$repo/bench/logreg_peers.py" --data "$data" --C "$C" --schmp "$logreg" \
    --mpirun "${launcher[*]}" --limit "${SCHMP_BENCH_TIMEOUT:-120}" >>"$results"
done

"$venv/bin/python" - "$results" <<'EOF'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
def show(x):
    return "-" if x is None else f"{x:.3g}"
def ratio(a, b):
    return "-" if a is None or b is None or b == 0 else f"{a / b:.2f}"
print(f"{'data':28} {'C':>5} {'liblinear':>9} {'celer':>8} {'skglm':>8} {'np1':>8} {'np1/best':>8} "
      f"{'np2/np1':>8} {'np4/np1':>8} {'stop1e-4':>8}")
for r in rows:
    peers = {p: v["1e-06"] for p, v in r["peers"].items()}
    reached = [v for v in peers.values() if v is not None]
    best = min(reached) if reached else None
    s = r["schmp"]
    one = s["1"]["1e-06"]
    print(f"{r['data']:28} {r['C']:>5g} {show(peers.get('liblinear')):>9} {show(peers.get('celer')):>8} "
          f"{show(peers.get('skglm')):>8} {show(one):>8} {ratio(one, best):>8} "
          f"{ratio(s.get('2', {}).get('1e-06'), one):>8} {ratio(s.get('4', {}).get('1e-06'), one):>8} "
          f"{show(s['1']['stop_1e-4']):>8}")
print("seconds to a relative suboptimality of 1e-6 (peers at their best tolerance; schmp from its trace);")
print("np1/best: schmp in one process over the fastest peer; np2/np1, np4/np1: mpirun -np 2 and 4 over one process;")
print("stop1e-4: schmp's solve seconds in one process until it stops at --tol 1e-4 (its default)")
EOF
