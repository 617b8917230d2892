#!/usr/bin/env bash
# Benchmark: schmp-mf --implicit (one process and 2 ranks) against implicit's AlternatingLeastSquares
# (2 threads), same interactions, same objective, same iterations.
#
#   bench/mf_implicit_vs_peers.sh [--quick] [-- EXTRA_SCHMP_FLAGS...]
#
# Data. MovieLens made implicit: movielens_small's ratings of 4 or more are interactions (count 1).
# A generated set: schmp-generate mf (100,000 users x 20,000 items, rank 10, Zipf 0.8 popularity,
# 24M ratings), whose ratings r above 0 become interactions counted 1 + floor(2 r): about 12M. Each
# set is split per user, fixed: each of a user's interactions is held out with probability 0.2, drawn
# by Python's Mersenne Twister seeded 1, in the file's order. --quick: MovieLens only.
#
# Settings: 32 factors, lambda 1, alpha 9 (confidence 1 + 9 r), 15 iterations. implicit (PyPI, CG
# solver, 3 steps) is handed the values 1 + 9 r with its alpha at 1, so that both fit one objective
# (bench/implicit_als.py). Both models are scored by `schmp-mf predict --exclude TRAIN --top 10` on
# the held-out interactions (precision, recall, nDCG and MAP at 10; docs/mf.md#ranking-metrics).
# Times: implicit's fit; schmp's whole command (start-up, reading, fitting, writing the model), and in
# the solver's column its fit alone (the solve it prints). ratio = implicit's time / schmp's whole
# command (above 1: schmp is faster). The objective is schmp's, evaluated at
# each model's factors. Last, from the trace of the one-process run: the first iteration whose objective
# is at most implicit's final one, and a run of that many iterations, its time and its ranking.
#
# Environment:
#   SCHMP_BUILD          build directory (default: <repo>/build)
#   SCHMP_SHARED_DATA    directory holding mf/movielens_small (default: <repo>/../shared/data)
#   SCHMP_BENCH_TIMEOUT  seconds allowed to each run (default: 600)
# Arguments after `--` are passed to every schmp-mf run.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/common.sh
source "$repo/bench/common.sh"
parse_arguments "$@"

mf=$build/apps/mf/schmp-mf
generate=$build/tools/schmp-generate
cache=$repo/bench/.cache
runs=$cache/last-run-mf-implicit
require_built "$mf" "$generate"
mkdir -p "$cache"
rm -rf "$runs"
mkdir -p "$runs"

python_venv implicit "implicit, threadpoolctl" implicit==0.7.3 threadpoolctl numpy scipy

# split NAME: reads 'user item count' lines on stdin; writes $cache/implicit_NAME.{train,test}.
split() {
  python3 -c '
import random, sys
draw = random.Random(1).random
with open(sys.argv[1], "w") as train, open(sys.argv[2], "w") as test:
    for line in sys.stdin:
        (test if draw() < 0.2 else train).write(line)
' "$cache/implicit_$1.train" "$cache/implicit_$1.test"
}

sets=()
movielens=$shared/mf/movielens_small/ratings.txt
if [[ -f $movielens ]]; then
  [[ -s $cache/implicit_movielens.train ]] || awk '$3 >= 4 { print $1, $2, 1 }' "$movielens" | split movielens
  sets+=(movielens)
else
  log "skipped movielens: $movielens not found"
fi
if ((!quick)); then
  if [[ ! -s $cache/implicit_generated.train ]]; then
    log "generating the implicit set"
    "$generate" mf --users 100000 --items 20000 --rank 10 --ratings 24000000 --test_ratings 0 --noise 0.5 \
      --zipf 0.8 --seed 1 --out "$runs/ratings.txt" >&2
    awk '$3 > 0 { print $1, $2, 1 + int(2 * $3) }' "$runs/ratings.txt" | split generated
    rm -f "$runs/ratings.txt" "$runs/ratings.txt.test"
  fi
  sets+=(generated)
fi

settings=(--implicit --rank 32 --lambda 1 --alpha 9)

# metrics MODEL NAME: predict's line of ranking metrics.
metrics() {
  "$mf" predict --model "$1" --data "$cache/implicit_$2.test" --exclude "$cache/implicit_$2.train" --top 10
}

# row NAME SOLVER SECONDS OBJECTIVE METRICS: one table row.
row() {
  printf '| %s | %s | %.3f | %.7g | %s |\n' "$1" "$2" "$3" "$4" "$(echo "$5" | sed 's/  */ /g')"
}

# schmp NAME RANKS ITERATIONS: runs schmp-mf with a trace; sets seconds (whole command), solve (its fit)
# and objective.
schmp() {
  local launch=() out=$runs/$1.schmp$2-$3
  (($2 == 1)) || launch=("${mpirun_cmd[@]}")
  local start
  start=$(date +%s.%N)
  timeout "$time_limit" "${launch[@]}" "$mf" --data "$cache/implicit_$1.train" "${settings[@]}" --iterations "$3" \
    --progress_seconds 0 --output "$out" --trace "$out.csv" "${extra_flags[@]}" > "$out.out"
  seconds=$(echo "$(date +%s.%N) - $start" | bc)
  objective=$(sed -n 's/.* objective \([^ ]*\) .*/\1/p' "$out.out")
  solve=$(sed -n 's/.*(\([0-9.]*\) s, stopped by.*/\1/p' "$out.out")
}

echo "| data | solver | seconds | objective | held-out ranking at 10 |"
echo "|---|---|---|---|---|"
for name in "${sets[@]}"; do
  train=$cache/implicit_$name.train
  log "$name: $(wc -l < "$train") training interactions, $(wc -l < "$cache/implicit_$name.test") held out"
  peer=$(timeout "$time_limit" "$venv/bin/python" "$repo/bench/implicit_als.py" "$train" --factors 32 \
    --regularization 1 --alpha 9 --iterations 15 --threads 2 --model "$runs/$name.implicit")
  read -r peer_seconds peer_objective < <(echo "$peer" |
    "$venv/bin/python" -c 'import json, sys; r = json.load(sys.stdin); print(r["seconds"], r["objective"])')
  row "$name" "implicit ALS, 2 threads" "$peer_seconds" "$peer_objective" "$(metrics "$runs/$name.implicit" "$name")"
  for ranks in 1 2; do
    schmp "$name" "$ranks" 15
    ratio=$(echo "scale=2; $peer_seconds / $seconds" | bc)
    row "$name" "schmp-mf, $ranks rank(s), fit $solve s (ratio $ratio)" "$seconds" "$objective" \
      "$(metrics "$runs/$name.schmp$ranks-15" "$name")"
  done
  # The trace's columns: round, seconds, objective, iteration.
  reached=$(awk -F, -v target="$peer_objective" 'NR > 1 && $3 <= target { print $4; exit }' "$runs/$name.schmp1-15.csv")
  if [[ -n $reached ]]; then
    schmp "$name" 1 "$reached"
    ratio=$(echo "scale=2; $peer_seconds / $seconds" | bc)
    row "$name" "schmp-mf, 1 rank, $reached iterations: implicit's objective, fit $solve s (ratio $ratio)" \
      "$seconds" "$objective" \
      "$(metrics "$runs/$name.schmp1-$reached" "$name")"
  fi
done
