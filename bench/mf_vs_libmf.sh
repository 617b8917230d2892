#!/usr/bin/env bash
# Benchmark: schmp-mf (ccd and sgd, 1 and 2 ranks) against LIBMF, same ratings, same objective.
#
#   bench/mf_vs_libmf.sh [--quick] [-- EXTRA_SCHMP_FLAGS...]
#
# LIBMF is built here from its own sources (the libmf 0.9.2 source package on PyPI carries LIBMF's
# mf.cpp and mf.h) with bench/libmf_driver.cpp, -O3 -march=native -DUSEAVX -fopenmp, into
# bench/.cache; nothing of it enters the tree.
#
# Data: a generated set shaped like the design notes' peer run (100,000 users x 20,000 items, rank 10,
# noise 0.5, Zipf 0.8 item popularity, 5M train / 0.5M test ratings) and movielens_small's 90/10
# split (--quick: MovieLens only). On each, LIBMF runs first with the notes' settings and prints its
# test RMSE (va_rmse) after every iteration: the best of them is the target. LIBMF's time to it is its
# whole-process time less the share of its fit time spent on the iterations after the best (its
# iterations cost the same; the driver prints the fit time). LIBMF now and then hangs after its last
# iteration (its scheduler's shutdown): a run that does is killed after a minute and run again.
# schmp-mf then runs each setting with a trace: its time to target is its loading time (the wall time
# less the solve, so also gathering and writing the model) plus the solve seconds of the first trace
# row whose test RMSE is at most the target; its best is the trace's least
# test RMSE. ratio = LIBMF's time / schmp's (above 1: schmp is faster). Last, LIBMF's own calc_rmse is
# run on schmp's model file, to show that LIBMF reads it and predicts what schmp-mf does.
#
# Environment:
#   SCHMP_BUILD          build directory (default: <repo>/build)
#   SCHMP_SHARED_DATA    directory holding mf/movielens_small (default: <repo>/../shared/data)
#   SCHMP_PYTHON         interpreter whose pip downloads LIBMF's sources (default: /usr/bin/python3)
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
runs=$cache/last-run-mf
libmf=$cache/libmf-driver

require_built "$mf" "$generate"
mkdir -p "$cache"
rm -rf "$runs"
mkdir -p "$runs"

if [[ ! -x $libmf ]]; then
  log "building LIBMF from its PyPI source package"
  src=$cache/libmf-src
  rm -rf "$src"
  mkdir -p "$src"
  "$python" -m pip download --quiet --no-deps --no-binary :all: libmf==0.9.2 -d "$src"
  tar -xzf "$src"/libmf-0.9.2.tar.gz -C "$src"
  g++ -O3 -pthread -std=c++11 -march=native -DUSEAVX -DUSEOMP -fopenmp -I"$src/libmf-0.9.2/src_cpp" \
    "$src/libmf-0.9.2/src_cpp/mf.cpp" "$repo/bench/libmf_driver.cpp" -o "$libmf"
fi

# libmf_best OUT: "RMSE ITERATION" of the least va_rmse LIBMF printed (iterations counted from 1).
libmf_best() {
  awk '$1 ~ /^[0-9]+$/ && NF >= 3 { if (best == "" || $3 < best) { best = $3; at = $1 + 1 } }
       END { print best, at }' "$1"
}

# schmp_row NAME DATA TEST TARGET NP FLAGS...: runs schmp-mf on NP (1 or 2) ranks, prints its table row.
schmp_row() {
  local name=$1 data=$2 test=$3 target=$4 np=$5
  shift 5
  local trace=$runs/$name.csv
  local command=("$mf")
  if ((np == 2)); then command=("${mpirun_cmd[@]}" "$mf"); fi
  timed "$name" "${command[@]}" --data "$data" --test "$test" --trace "$trace" --progress_seconds 0 \
    --output "$runs/$name.model" "$@" "${extra_flags[@]}"
  local wall=$WALL solve best reached load
  if [[ ! -s $trace ]]; then
    echo "| schmp-mf np $np $* | $STATUS, no trace | - | $(secs "$wall") | - |"
    return 0
  fi
  solve=$(sed -n 's/.*(\([0-9.]*\) s, stopped by.*/\1/p' "$runs/$name.out")
  load=$(awk -v w="$wall" -v s="$solve" 'BEGIN { if (w ~ /^[0-9.]+$/ && s != "") printf "%.2f", w - s; else print "-" }')
  best=$(awk -F, 'NR > 1 && (b == "" || $6 < b) { b = $6; at = $4 } END { printf "%.4f (it %d)", b, at }' "$trace")
  reached=$(awk -F, -v t="$target" -v load="$load" \
    'NR > 1 && $6 <= t { printf "%.2f", load + $2; found = 1; exit } END { if (!found) print "not reached" }' "$trace")
  echo "| schmp-mf np $np $* | $best | $(secs "$reached") | $(secs "$wall") | $(ratio "$LIBMF_TTT" "$reached") |"
}

# compare TITLE DATA TEST K L2 ITERATIONS SCHMP_RUNS...: LIBMF, then each schmp run ("NP FLAGS").
compare() {
  local title=$1 data=$2 test=$3 k=$4 l2=$5 iterations=$6
  shift 6
  local attempt
  for attempt in 1 2 3; do
    time_limit=60 timed "libmf-$title" "$libmf" train "$data" "$test" "$runs/libmf-$title.model" "$k" "$l2" 0.1 \
      "$iterations" 2
    [[ $STATUS == timeout ]] || break
    log "  LIBMF hung (attempt $attempt): running it again"
  done
  local full_wall=$WALL target at fit
  read -r target at < <(libmf_best "$runs/libmf-$title.out")
  fit=$(awk '/^fit_seconds/ { print $2 }' "$runs/libmf-$title.out")
  LIBMF_TTT=$(awk -v w="$full_wall" -v f="$fit" -v at="$at" -v n="$iterations" \
    'BEGIN { if (w ~ /^[0-9.]+$/ && f != "") printf "%.2f", w - f * (1 - at / n); else print "-" }')
  echo
  echo "### $title"
  echo
  echo "LIBMF \`-k $k -l2 $l2 -r 0.1 -t $iterations -s 2\`: best test RMSE $target at iteration $at; $(secs "$LIBMF_TTT") to" \
    "get there (whole process), $(secs "$full_wall") for all $iterations iterations."
  echo
  echo "| run | best test RMSE | time to $target | wall | ratio |"
  echo "|---|---|---|---|---|"
  local index=0
  for run in "$@"; do
    index=$((index + 1))
    # shellcheck disable=SC2086
    schmp_row "$title-$index" "$data" "$test" "$target" $run
  done
  local model=$runs/$title-1.model
  if [[ -s $model ]]; then
    echo
    echo "LIBMF's calc_rmse on schmp-mf's first model: $("$libmf" predict "$test" "$model" | awk '{print $2}');" \
      "schmp-mf predict: $("$mf" predict --model "$model" --data "$test" | sed -n 's/.*RMSE \([-+0-9.eE]*\).*/\1/p')."
  fi
}

movielens=$shared/mf/movielens_small
if [[ -s $movielens/ratings_train.txt ]]; then
  compare movielens "$movielens/ratings_train.txt" "$movielens/ratings_test.txt" 50 0.1 50 \
    "1 --algorithm ccd --rank 20 --lambda 0.15 --iterations 12 --biases" \
    "2 --algorithm ccd --rank 20 --lambda 0.15 --iterations 12 --biases" \
    "1 --algorithm sgd --rank 50 --lambda 0.1 --iterations 40 --biases" \
    "1 --algorithm sgd --rank 10 --lambda 0.1 --iterations 30 --biases" \
    "1 --algorithm ccd --rank 20 --lambda 0.15 --iterations 40 --biases --early_stop 3" \
    "1 --algorithm sgd --rank 50 --lambda 0.1 --iterations 40" \
    "1 --algorithm ccd --rank 50 --lambda 0.15 --iterations 30"
else
  log "mf_vs_libmf: no $movielens: MovieLens left out"
fi

if ((quick == 0)); then
  generated=$cache/mf_100000x20000_r10_s1.txt
  if [[ ! -s $generated || ! -s $generated.test ]]; then
    log "generating $generated"
    "$generate" mf --users 100000 --items 20000 --rank 10 --ratings 5000000 --test_ratings 500000 \
      --noise 0.5 --zipf 0.8 --seed 1 --out "$generated"
  fi
  compare generated "$generated" "$generated.test" 20 0.05 20 \
    "1 --algorithm sgd --rank 20 --lambda 0.05 --iterations 20" \
    "2 --algorithm sgd --rank 20 --lambda 0.05 --iterations 20" \
    "1 --algorithm ccd --rank 20 --lambda 0.05 --iterations 10" \
    "2 --algorithm ccd --rank 20 --lambda 0.05 --iterations 10"
fi
