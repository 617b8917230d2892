#!/usr/bin/env bash
# Benchmark: schmp-lasso against scikit-learn's Lasso, same data, same lambda, same objective.
#
#   bench/lasso_vs_sklearn.sh [--quick] [-- EXTRA_SCHMP_FLAGS...]
#
# For each case, scikit-learn (cyclic coordinate descent, default tol) sets the target objective O_sk;
# schmp-lasso then runs to a tight tolerance with a trace, and its time-to-target is the solver time
# (trace column `seconds`) of the first trace row with objective <= O_sk * (1 + 1e-9). See bench/README.md.
#
# Environment:
#   SCHMP_BUILD          build directory (default: <repo>/build)
#   SCHMP_SHARED_DATA    directory holding lasso/<name>/<file>.svm (default: <repo>/../shared/data)
#   SCHMP_PYTHON         interpreter with scikit-learn (default: /usr/bin/python3)
#   SCHMP_BENCH_TIMEOUT  seconds allowed to each solver run (default: 600)
# Arguments after `--` are passed to every schmp-lasso run.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/common.sh
source "$repo/bench/common.sh"
parse_arguments "$@"

tight_tol=1e-9   # schmp-lasso's stopping tolerance (relative duality gap)
match=1e-9       # "reached" means objective <= O_sk * (1 + match)

lasso=$build/apps/lasso/schmp-lasso
generate=$build/tools/schmp-generate
cache=$repo/bench/.cache   # generated data sets, kept between runs
runs=$cache/last-run       # traces, models and logs of the latest run of this script

require_built "$lasso" "$generate"
if ! "$python" -c 'import sklearn, numpy, scipy' 2>/dev/null; then
  echo "lasso_vs_sklearn: $python cannot import sklearn/numpy/scipy: run scripts/setup.sh --bench" >&2
  exit 1
fi

mkdir -p "$cache"
rm -rf "$runs"
mkdir -p "$runs"

# generated ROWS COLS: prints the path of the synthetic data set, generating it on first use.
generated() {
  local rows=$1 cols=$2 density=0.01 support=500 noise=0.1 seed=1
  local file=$cache/lasso_${rows}x${cols}_d${density}_k${support}_s${seed}.svm
  if [[ ! -s $file || ! -s $file.truth ]]; then
    log "generating $file"
    local tmp=$cache/.tmp.$$.svm
    timeout "$time_limit" "$generate" lasso --rows "$rows" --cols "$cols" --density "$density" \
      --support "$support" --noise "$noise" --seed "$seed" --out "$tmp" >&2
    mv "$tmp.truth" "$file.truth"
    mv "$tmp" "$file"
  fi
  echo "$file"
}

# schmp_summary NAME: "objective O, nnz K, <stop reason> after N rounds" from schmp-lasso's stdout.
schmp_summary() {
  awk '$1 == "schmp-lasso:" { stop = $2 " after " $4 " rounds" }
       $1 == "objective"    { obj = $2; for (i = 3; i < NF; i++) if ($i == "nonzeros") nnz = $(i + 1) }
       END { printf "objective %s, nnz %s, %s\n", obj, nnz, stop }' "$runs/$1.out"
}

# check_lambda NAME SKLEARN_LAMBDA: warns when schmp-lasso's lambda (printed to 6 digits) differs.
check_lambda() {
  awk -v sk="$2" -v run="$1" '$1 == "lambda" { d = ($2 - sk) / sk; if (d < 0) d = -d
    if (d > 1e-5) printf "  WARNING: %s used lambda %s, sklearn %s\n", run, $2, sk }' "$runs/$1.out" >&2
}

rows=()

# bench_case LABEL FILE LAMBDA_RATIO
bench_case() {
  local label=$1 data=$2 ratio_=$3
  local name=${label}_${ratio_}
  log "== $label, lambda_ratio $ratio_"

  # (a) scikit-learn at its default tolerance sets the target.
  local sk_obj=- sk_fit=- sk_lambda=- sk_wall
  timed "$name.sklearn" "$python" "$repo/bench/sklearn_lasso.py" --data "$data" --lambda_ratio "$ratio_"
  sk_wall=$WALL
  if [[ $STATUS == ok ]]; then
    sk_obj=$(json_field "$runs/$name.sklearn.out" objective)
    sk_fit=$(json_field "$runs/$name.sklearn.out" fit_seconds)
    sk_lambda=$(json_field "$runs/$name.sklearn.out" lambda)
    log "  sklearn:        objective $sk_obj, nnz $(json_field "$runs/$name.sklearn.out" nnz)," \
      "$(json_field "$runs/$name.sklearn.out" n_iter) epochs, converged $(json_field "$runs/$name.sklearn.out" converged)," \
      "load $(printf %.2f "$(json_field "$runs/$name.sklearn.out" load_seconds)") s, fit $(printf %.3f "$sk_fit") s, wall $sk_wall s"
  fi

  # (b), (c) schmp-lasso to a tight tolerance: one process, two MPI ranks, and uniform sampling.
  local -A ttt wall
  local variant
  for variant in single np2 uniform; do
    local cmd=("$lasso") flags=()
    case $variant in
      np2) cmd=("${mpirun_cmd[@]}" "$lasso") ;;
      uniform) flags=(--priority=false) ;;
    esac
    local run=$name.$variant
    # scikit-learn fits without an intercept here (sklearn_lasso.py).
    timed "$run" "${cmd[@]}" --data "$data" --lambda_ratio "$ratio_" --tol "$tight_tol" --fit_intercept=false \
      --trace "$runs/$run.trace.csv" --output "$runs/$run.model" --progress_seconds 0 \
      ${flags[@]+"${flags[@]}"} ${extra_flags[@]+"${extra_flags[@]}"}
    wall[$variant]=$WALL
    ttt[$variant]=$(time_to_target "$runs/$run.trace.csv" "$sk_obj")
    local summary=""
    if [[ $STATUS == ok ]]; then
      summary="$(schmp_summary "$run"), "
      if [[ $sk_lambda != - ]]; then check_lambda "$run" "$sk_lambda"; fi
    fi
    log "$(printf '  schmp %-8s  %stime-to-target %s, wall %s' "$variant:" "$summary" "$(secs "${ttt[$variant]}")" "$(secs "${wall[$variant]}")")"
  done

  local sk_obj_shown=$sk_obj sk_fit_shown=$sk_fit
  if [[ $sk_obj != - ]]; then
    sk_obj_shown=$(printf %.10g "$sk_obj")
    sk_fit_shown=$(printf %.3f "$sk_fit")
  fi
  rows+=("$(printf '%-22s %6s %14s %8s %8s %11s %8s %8s %11s %8s %11s %7s' \
    "$label" "$ratio_" "$sk_obj_shown" "$sk_fit_shown" "$sk_wall" \
    "${ttt[single]}" "${wall[single]}" "$(ratio "$sk_fit" "${ttt[single]}")" \
    "${ttt[np2]}" "${wall[np2]}" \
    "${ttt[uniform]}" "$(ratio "${ttt[uniform]}" "${ttt[single]}")")")
}

if ((quick)); then
  bench_case gen2000x10000 "$(generated 2000 10000)" 0.05
else
  synthetic=$(generated 10000 50000)
  for r in 0.05 0.01; do bench_case gen10000x50000 "$synthetic" "$r"; done
  for entry in movielens_small:movielens_small_linreg/movielens_small.linreg.svm \
    all_leukemia_age:all_leukemia_age_lasso/all_leukemia_age_lasso.svm; do
    label=${entry%%:*}
    file=$shared/lasso/${entry#*:}
    if [[ ! -f $file ]]; then
      log "== $label: skipped, $file not found (set SCHMP_SHARED_DATA)"
      continue
    fi
    for r in 0.1 0.01; do bench_case "$label" "$file" "$r"; done
  done
fi

{
  echo
  echo "schmp-lasso vs scikit-learn Lasso: $(nproc) cores; schmp --tol $tight_tol; sklearn tol 1e-4 (default)"
  printf '%-22s %6s %14s %8s %8s %11s %8s %8s %11s %8s %11s %7s\n' \
    data lambda sklearn_obj sk_fit_s sk_wall_s ttt_s wall_s sk/ttt np2_ttt_s np2_wall uniform_ttt prio_x
  printf '%s\n' "${rows[@]}"
  echo
  echo "ttt_s: schmp-lasso (1 process) solver seconds until objective <= sklearn_obj*(1+$match)"
  echo "wall_s, sk_wall_s, np2_wall: whole process (loading, MPI start-up, solving to tolerance)"
  echo "sk/ttt: sk_fit_s / ttt_s (> 1: schmp reaches sklearn's objective sooner than sklearn's fit)"
  echo "np2_*: mpirun -np 2; uniform_ttt: --priority=false (1 process); prio_x: uniform_ttt / ttt_s"
  echo "traces, models and logs: $runs"
} | tee "$runs/table.txt"
