#!/usr/bin/env bash
# Benchmark: how each app scales with worker ranks on one machine (or, with MPIRUN_FLAGS naming a
# hostfile, on a cluster).
#
#   bench/scaling.sh [--quick] [-- EXTRA_FLAGS...]
#
# Strong scaling: the same problem on 1, 2, 4, ... worker ranks (powers of two up to the cores, or
# SCHMP_WORKERS="1 2 4 8 16"), each one thread (--threads 1), a fixed amount of work per run. MF and
# LDA make every rank a worker; Lasso and logreg add the coordinator and a scheduler rank (workers + 2
# ranks, docs/scheduling.md). Weak scaling: the data grows with the workers (rows, users or documents
# in proportion), the same work per worker. Then the scheduler at the most workers: Lasso with
# lock-step rounds (--staleness 0) against pipelined ones (--staleness 2), and with two and four scheduler
# ranks (--schedulers 2, 4); with 8 cores or more, also every rank on a core of its own, a quarter,
# three eighths and one less than half of the cores given to scheduler ranks. That table adds the
# busiest scheduler's work as a share of the solve: near 100% the schedulers are the bottleneck, well
# below it they only add latency.
#
# Problems (generated once into bench/.cache, all at once, one generator per core; --quick: a twentieth):
#   lasso  1,600,000 x 200,000, 50 nonzeros per row (80M nonzeros); at most 3,000 rounds of 256 coordinates
#          (a round over 400 nonzeros per column is about 8 ms of one core's work: at 16 workers still
#          several times the cost of a round's messages)
#   logreg 800,000 x 100,000, 50 nonzeros per row (40M nonzeros), L1 at C = 1; at most 3,000 rounds of
#          256 coordinates (a round costs about as much as Lasso's on the same columns: the exponentials
#          are taken once per Newton step, not per round)
#   mf     400,000 users x 40,000 items, 20M ratings, rank 16, CCD++; 3 iterations
#   lda    100,000 documents x 100 tokens (10M tokens), 20,000 words, K = 100; 20 iterations
# Weak scaling takes the problem of one worker to be the strong problem divided by the most workers.
#
# Each row: seconds per round (the trace's solve seconds over its rounds, or iterations for MF and
# LDA), speedup and parallel efficiency against one rank (weak: efficiency = t1 / tN), where the
# time went (the trace's cumulative split, docs/trace.md) as shares of the solve time,
# and the seconds before the solve (start-up, each worker reading its byte range of the data and
# handing over what belongs to another).
# More ranks than cores run unbound; timings from such rows measure oversubscription, not scaling.
#
# Environment: SCHMP_BUILD (default <repo>/build), SCHMP_BENCH_TIMEOUT (seconds per run, default 600),
# SCHMP_WORKERS (worker counts), SCHMP_APPS (default "lasso logreg mf lda"), MPIRUN_FLAGS (extra mpirun flags, e.g. "--hostfile hosts").
# SCHMP_SIMULATED_HOSTS=N runs every job across N hosts simulated on this machine (scripts/netns-cluster:
# root, iproute2), the ranks dealt to the hosts in turn (--map-by node) and not bound, as the hosts
# share the cores; SCHMP_LINK_RATE (e.g. 10gbit) caps each host's link (netns-cluster --rate), so that
# the messages between hosts cost what that network would.
# Arguments after `--` are passed to every run.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/common.sh
source "$repo/bench/common.sh"
parse_arguments "$@"

lasso=$build/apps/lasso/schmp-lasso
logreg=$build/apps/logreg/schmp-logreg
mf=$build/apps/mf/schmp-mf
lda=$build/apps/lda/schmp-lda
generate=$build/tools/schmp-generate
cache=$repo/bench/.cache
runs=$cache/last-run-scaling
require_built "$lasso" "$logreg" "$mf" "$lda" "$generate"
mkdir -p "$cache"
rm -rf "$runs"
mkdir -p "$runs"

cores=$(nproc)
if [[ -n ${SCHMP_WORKERS:-} ]]; then
  read -r -a worker_counts <<<"$SCHMP_WORKERS"
else
  worker_counts=()
  for ((n = 1; n <= cores; n *= 2)); do worker_counts+=("$n"); done
fi
largest=${worker_counts[-1]}
read -r -a apps <<<"${SCHMP_APPS:-lasso logreg mf lda}"
scale=1
if ((quick)); then scale=20; fi

simulated_hosts=${SCHMP_SIMULATED_HOSTS:-}
if [[ -n $simulated_hosts ]]; then
  launcher=("$repo/scripts/netns-cluster" --hosts "$simulated_hosts")
  if [[ -n ${SCHMP_LINK_RATE:-} ]]; then launcher+=(--rate "$SCHMP_LINK_RATE"); fi
  launcher+=(-- --map-by node)
else
  launcher=(mpirun --bind-to core)
  if [[ $(id -u) -eq 0 ]]; then launcher+=(--allow-run-as-root); fi
fi
# More ranks than cores (the scheduler ranks at the largest count) must be allowed, and then not bound.
launcher+=(--oversubscribe)
read -r -a user_mpirun_flags <<<"${MPIRUN_FLAGS:-}"
launcher+=("${user_mpirun_flags[@]}")

# measure NAME RANKS COUNTER COMMAND...: runs COMMAND on RANKS ranks with a trace; sets PER_ROUND
# (seconds per COUNTER step, or "-"), SPLIT (the four time shares as table cells), BUSY (the busiest
# scheduler's work as a share of the solve) and STARTUP (the whole run's wall time less the solve's:
# starting the ranks, reading and handing over the data).
measure() {
  local name=$1 ranks=$2 counter=$3
  shift 3
  local trace=$runs/$name.csv
  local bind=()
  if ((ranks > cores)) && [[ -z $simulated_hosts ]]; then bind=(--bind-to none); fi
  timed "$name" "${launcher[@]}" "${bind[@]}" -np "$ranks" "$@" --threads 1 --trace "$trace" \
    --progress_seconds 0 "${extra_flags[@]}"
  PER_ROUND=-
  SPLIT="- | - | - | -"
  BUSY=-
  STARTUP=-
  [[ $STATUS == ok && -s $trace ]] || return 0
  local seconds steps
  seconds=$(last_value "$trace" seconds)
  steps=$(last_value "$trace" "$counter")
  STARTUP=$(awk -v w="$WALL" -v s="$seconds" 'BEGIN { printf "%.2f", w - s }')
  PER_ROUND=$(awk -v s="$seconds" -v n="$steps" 'BEGIN { if (n > 0) printf "%.4g", s / n; else print "-" }')
  SPLIT=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next } { for (k in c) v[k] = $c[k] }
    END { t = v["seconds"]; if (t <= 0) t = 1
          printf "%.1f%% | %.1f%% | %.1f%% | %.1f%%", 100 * v["scheduler_s"] / t, 100 * v["compute_s"] / t,
                 100 * v["communication_s"] / t, 100 * v["idle_s"] / t }' "$trace")
  BUSY=$(awk -v s="$seconds" -v b="$(last_value "$trace" scheduler_busy_s)" \
    'BEGIN { if (s > 0 && b ~ /^[0-9.]+$/) printf "%.1f%%", 100 * b / s; else print "-" }')
}

# table_header TITLE COUNTER [COLUMN]: a table's title and header, with COLUMN after the time split.
table_header() {
  local extra="" extra_rule=""
  if [[ -n ${3:-} ]]; then extra=" $3 |" extra_rule="---|"; fi
  echo
  echo "### $1"
  echo
  echo "| workers (ranks) | seconds per $2 | speedup | efficiency | scheduler | compute | communication | idle |$extra start-up and loading (s) |"
  echo "|---|---|---|---|---|---|---|---|$extra_rule---|"
}

# series KIND APP COUNTER EXTRA_RANKS: the strong or weak scaling table of one app, whose runs take
# EXTRA_RANKS ranks beside the workers.
series() {
  local kind=$1 app=$2 counter=$3 extra_ranks=$4
  local base=- workers
  table_header "$app: $kind scaling" "$counter"
  for workers in "${worker_counts[@]}"; do
    local command ranks=$((workers + extra_ranks))
    command=$("command_$app" "$kind" "$workers")
    # shellcheck disable=SC2086
    measure "$app-$kind-$workers" "$ranks" "$counter" $command
    if [[ $workers == "${worker_counts[0]}" ]]; then base=$PER_ROUND; fi
    if [[ $kind == strong && $app == lasso ]]; then lasso_base=$base; fi
    local speedup efficiency
    speedup=$(ratio "$base" "$PER_ROUND")
    if [[ $kind == strong ]]; then
      efficiency=$(awk -v s="$speedup" -v n="$workers" -v n0="${worker_counts[0]}" \
        'BEGIN { if (s ~ /^[0-9.]+$/) printf "%.0f%%", 100 * s * n0 / n; else print "-" }')
    else
      efficiency=$(awk -v s="$speedup" 'BEGIN { if (s ~ /^[0-9.]+$/) printf "%.0f%%", 100 * s; else print "-" }')
    fi
    echo "| $workers ($ranks) | $PER_ROUND | $speedup | $efficiency | $SPLIT | $STARTUP |"
  done
}

# sparse_problem GENERATOR ROWS COLS KIND WORKERS: the path of a generated sparse problem of 50 nonzeros
# a row (ROWS and COLS at full size; weak scaling takes the workers' share of the rows).
sparse_problem() {
  local generator=$1 rows=$(($2 / scale)) cols=$(($3 / scale))
  if [[ $4 == weak ]]; then rows=$((rows * $5 / largest)); fi
  generate_once "$cache/scaling-$generator-$rows-s$scale.txt" "$generator" --rows "$rows" --cols "$cols" \
    --density "$(awk -v c="$cols" 'BEGIN { printf "%.8g", 50 / c }')" --support 2000 --noise 0.1
}

# command_APP KIND WORKERS: the app's command line for a series, its data generated on first use.
# (The data is assigned before it is echoed, so that a failed generation fails the function.)
command_lasso() {
  local data
  data=$(sparse_problem lasso 1600000 200000 "$@")
  echo "$lasso --data $data --lambda_ratio 0.05 --schedule_size 256 --max_rounds 3000 --tol 1e-12"
}
command_logreg() {
  local data
  data=$(sparse_problem logreg 800000 100000 "$@")
  echo "$logreg --data $data --penalty l1 --C 1 --schedule_size 256 --max_rounds 3000 --tol 1e-12"
}
command_mf() {
  local users=$((400000 / scale)) ratings=$((20000000 / scale))
  if [[ $1 == weak ]]; then
    users=$((users * $2 / largest))
    ratings=$((ratings * $2 / largest))
  fi
  local data
  data=$(generate_once "$cache/scaling-mf-$users-s$scale.txt" mf --users "$users" --items $((40000 / scale)) \
    --rank 16 --ratings "$ratings" \
    --test_ratings 0 --noise 0.5 --zipf 0.8)
  echo "$mf --data $data --algorithm ccd --rank 16 --lambda 0.05 --iterations 3"
}
command_lda() {
  local documents=$((100000 / scale))
  if [[ $1 == weak ]]; then documents=$((documents * $2 / largest)); fi
  local data
  data=$(generate_once "$cache/scaling-lda-$documents-s$scale.txt" lda --documents "$documents" --words 20000 \
    --topics 100 --document_length 100 --alpha 0.1 --beta 0.01)
  echo "$lda --data $data --topics 100 --iterations 20"
}

# Every problem is generated before the first run, side by side (the generator uses one core): the
# strong ones first, as the weak problem of the most workers is the strong one.
# A problem that failed to generate stops the script here, rather than every run of it failing later.
wait_for_all() {
  local pid
  for pid in "$@"; do
    if ! wait "$pid"; then
      echo "scaling: generating a problem failed (see above)" >&2
      exit 1
    fi
  done
}
generate_all() {
  local app workers pids=()
  for app in "${apps[@]}"; do
    "command_$app" strong "$largest" >/dev/null &
    pids+=($!)
  done
  wait_for_all "${pids[@]}"
  pids=()
  for app in "${apps[@]}"; do
    for workers in "${worker_counts[@]}"; do
      if ((workers < largest)); then
        "command_$app" weak "$workers" >/dev/null &
        pids+=($!)
      fi
    done
  done
  wait_for_all "${pids[@]}"
}
generate_all

echo "## Scaling on $(hostname): $cores cores, workers ${worker_counts[*]}"
if [[ -n $simulated_hosts ]]; then
  echo
  echo "(Across $simulated_hosts hosts simulated on these cores, links ${SCHMP_LINK_RATE:-uncapped}: scripts/netns-cluster.)"
fi
if ((largest < 16)); then
  echo
  echo "(At most $largest workers here: this machine has $cores cores.)"
fi

# series_of KIND APP: the series with the app's counter and the ranks it takes beside the workers.
series_of() {
  case $2 in
    lasso | logreg) series "$1" "$2" round 2 ;;
    *) series "$1" "$2" iteration 0 ;;
  esac
}
for kind in strong weak; do
  for app in "${apps[@]}"; do series_of "$kind" "$app"; done
done

# The scheduler: pipelining and more scheduler ranks at the most workers; then every rank on a core of
# its own, the workers giving up cores to the schedulers (a quarter, three eighths and one less than half
# of the cores; on 16, the last is the layout whose wait for blocks stayed under 5%: docs/cluster.md).
# Speedup and efficiency are against the lock-step run of the strong series' first worker count.
lasso_base=${lasso_base:--}
scheduler_row() {
  local workers=$1 setting=$2 schedulers=1
  if [[ $setting =~ --schedulers\ ([0-9]+) ]]; then schedulers=${BASH_REMATCH[1]}; fi
  local ranks=$((workers + 1 + schedulers)) speedup efficiency
  # shellcheck disable=SC2046,SC2086
  measure "lasso-scheduler-$workers${setting// /}" "$ranks" round $(command_lasso strong "$largest") $setting
  speedup=$(ratio "$lasso_base" "$PER_ROUND")
  efficiency=$(awk -v s="$speedup" -v n="$workers" -v n0="${worker_counts[0]}" \
    'BEGIN { if (s ~ /^[0-9.]+$/) printf "%.0f%%", 100 * s * n0 / n; else print "-" }')
  echo "| $workers ($ranks; $setting) | $PER_ROUND | $speedup | $efficiency | $SPLIT | $BUSY | $STARTUP |"
}
if [[ " ${apps[*]} " == *" lasso "* ]]; then
  table_header "lasso: the scheduler" round "busiest scheduler's work"
  for setting in "--staleness 0" "--staleness 2" "--staleness 2 --schedulers 2" "--staleness 2 --schedulers 4"; do
    scheduler_row "$largest" "$setting"
  done
  if ((cores >= 8)); then
    previous=0
    for schedulers in $((cores / 4)) $((cores * 3 / 8)) $((cores / 2 - 1)); do
      ((schedulers > previous)) || continue
      scheduler_row $((cores - 1 - schedulers)) "--staleness 2 --schedulers $schedulers"
      previous=$schedulers
    done
  fi
fi
