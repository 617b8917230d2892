#!/usr/bin/env bash
# Benchmark: a 100-lambda path of L1 logistic regression (lambda_max down to lambda_max / 100, no
# intercept), schmp-logreg against liblinear (scikit-learn's copy), celer, skglm and glmnet (where R has
# it: apt-get install r-cran-glmnet), same data, same lambdas, in one run.
#
#   bench/logreg_path_vs_peers.sh
#
# Every solver minimises glmnet's binomial objective, (1/n) sum_i log(1 + exp(-y_i x_i . w)) +
# lambda ||w||_1, without an intercept: celer cannot fit one, so none does (schmp: --fit_intercept=false,
# glmnet: intercept=FALSE). For each set, bench/logreg_path_peers.py runs every solver's whole path at a
# ladder of tolerances (see its header). The table gives the seconds until every lambda of the path is
# within 1e-6 of the best objective found there (then 1e-4), and schmp's ratio to the fastest peer
# (below 1: schmp is ahead). schmp-logreg uses every core; the peers use one. The sets are every
# $SCHMP_SHARED_DATA/logreg/*/*.svm and a generated sparse one. The peers are installed on first use
# into bench/.cache/peers (a virtual environment, from PyPI).
#
# Environment: SCHMP_BUILD (default <repo>/build), SCHMP_SHARED_DATA (default <repo>/../shared/data),
# SCHMP_BENCH_TIMEOUT (seconds allowed to one path, default 60).
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

sets=()
for set in heart_scale_logreg/heart_scale.svm dna_splice_logreg/dna_splice_logreg.svm \
  coil2000_caravan_logreg/coil2000_caravan_logreg.svm grants_logreg/grants_logreg.svm \
  spamassassin_binary/spamassassin.svm; do
  if [[ -f $shared/logreg/$set ]]; then sets+=("$shared/logreg/$set"); else log "skipped $set: not found"; fi
done
sets+=("$(generate_once "$cache/logreg_2000x10000.svm" logreg --rows 2000 --cols 10000 --density 0.01 \
  --support 100)")

results=$cache/logreg_path_vs_peers.jsonl
: >"$results"
for data in "${sets[@]}"; do
  log "== $(basename "$data")"
  "$venv/bin/python" "$repo/bench/logreg_path_peers.py" --data "$data" --schmp "$logreg" \
    --limit "${SCHMP_BENCH_TIMEOUT:-60}" >>"$results"
done

"$venv/bin/python" - "$results" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
solvers = ["liblinear", "celer", "skglm", "glmnet", "schmp"]
def show(x):
    return "-" if x is None else f"{x:.3g}"
for target in ["1e-06", "0.0001"]:
    print(f"{'data':34} " + " ".join(f"{s:>9}" for s in solvers) + f" {'/best':>6}"
          f"   (seconds to {float(target):g} at every lambda)")
    for r in rows:
        s = {k: v[target] for k, v in r["solvers"].items()}
        peers = [v for k, v in s.items() if k != "schmp" and v is not None]
        ratio = "-" if s.get("schmp") is None or not peers else f"{s['schmp'] / min(peers):.2f}"
        print(f"{r['data']:34} " + " ".join(f"{show(s.get(k)):>9}" for k in solvers) + f" {ratio:>6}")
PY
