#!/usr/bin/env bash
# Benchmark: every app on the CPU (one rank, every core) and on one GPU (--device gpu), same data,
# same settings, side by side in one run.
#
#   bench/gpu_vs_cpu.sh [--quick] [-- EXTRA_FLAGS...]
#
# Data, generated once into bench/.cache (sizes that fill a GPU of 80 GB; --quick: a tenth of the rows,
# columns, users, items and documents, so a hundredth of Lasso's nonzeros and a tenth of the rest):
#   lasso  1,000,000 x 1,000,000, 100 nonzeros per row (100M nonzeros), 1,000 true coefficients
#   mf     2,000,000 users x 100,000 items, 100M training ratings, rank 32 (SGD)
#   lda    500,000 documents x 200 tokens (100M tokens), 100,000 words, K = 1000
#
# Each app runs a fixed amount of work with a trace: Lasso 2,000 rounds of 1,024 coordinates, MF 5
# SGD epochs, LDA 10 iterations. The table gives, per app and device, the solve seconds per round
# (per epoch or iteration for MF and LDA), the throughput, the GPU/CPU ratio of throughputs, and the
# fraction of the GPU's memory bandwidth the throughput implies under each kernel's byte count (its
# floor: what a kernel must at least read and write per unit of work):
#   lasso  24 bytes per nonzero touched (a 4-byte row index, an 8-byte value, and the 8-byte residual
#          entry read for x_j.r, and read and written again by the commit: 4+8+8 and 4+8+8+8,
#          averaged); nonzeros touched = rounds x 1,024 x nonzeros per column, twice (dots, commit)
#   mf     16 + 4 x 8 x rank bytes per rating (the rating, and both factor rows read and written)
#   lda    4 x K bytes per token (the token's document row of n_dk, dense, is read once per draw)
# Peak bandwidth comes from the GPU's name (H100 SXM 3.35 TB/s, H100 PCIe 2.0, H100 NVL 3.9, H200
# 4.8, A100 80GB 2.0), or from SCHMP_GPU_BANDWIDTH (GB/s).
#
# Environment: SCHMP_BUILD (default <repo>/build), SCHMP_BENCH_TIMEOUT (seconds per run, default 600),
# SCHMP_BENCH_SCALE (divides every size; default 1, --quick 10).
# Arguments after `--` are passed to every run.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/common.sh
source "$repo/bench/common.sh"
parse_arguments "$@"

lasso=$build/apps/lasso/schmp-lasso
mf=$build/apps/mf/schmp-mf
lda=$build/apps/lda/schmp-lda
generate=$build/tools/schmp-generate
cache=$repo/bench/.cache
runs=$cache/last-run-gpu
require_built "$lasso" "$mf" "$lda" "$generate"
mkdir -p "$cache"
rm -rf "$runs"
mkdir -p "$runs"

if ! nvidia-smi >/dev/null 2>&1; then
  echo "gpu_vs_cpu: no GPU here (nvidia-smi fails): nothing to compare" >&2
  exit 1
fi
gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
case "${SCHMP_GPU_BANDWIDTH:-$gpu_name}" in
  [0-9]*) bandwidth=$SCHMP_GPU_BANDWIDTH ;;
  *H200*) bandwidth=4800 ;;
  *H100*NVL*) bandwidth=3900 ;;
  *H100*PCIe*) bandwidth=2000 ;;
  *H100*) bandwidth=3350 ;;
  *A100*) bandwidth=2000 ;;
  *) echo "gpu_vs_cpu: unknown peak bandwidth of '$gpu_name': set SCHMP_GPU_BANDWIDTH (GB/s)" >&2; exit 1 ;;
esac

scale=${SCHMP_BENCH_SCALE:-1}
if ((quick)); then scale=10; fi
cores=$(nproc)
cpu_run=(mpirun -np 1 --bind-to none)
if [[ $(id -u) -eq 0 ]]; then cpu_run+=(--allow-run-as-root); fi

# row APP DEVICE COUNTER UNITS_PER_COUNT BYTES_PER_UNIT COMMAND...: runs one side and prints its table
# row; COUNTER is the trace column that counts the work done (round, iteration). Sets THROUGHPUT (units
# per second); the GPU row's ratio is against CPU_THROUGHPUT.
row() {
  local app=$1 device=$2 counter=$3 units=$4 bytes=$5
  shift 5
  local trace=$runs/$app-$device.csv
  timed "$app-$device" "$@" --device "$device" --trace "$trace" --progress_seconds 0 "${extra_flags[@]}"
  THROUGHPUT=-
  if [[ $STATUS != ok ]]; then
    echo "| $app | $device | $STATUS | - | - | - | - |"
    return
  fi
  local seconds rounds
  seconds=$(last_value "$trace" seconds)
  rounds=$(last_value "$trace" "$counter")
  THROUGHPUT=$(awk -v u="$units" -v r="$rounds" -v s="$seconds" 'BEGIN { printf "%.4g", u * r / s }')
  local per_round fraction=- speedup=-
  per_round=$(awk -v r="$rounds" -v s="$seconds" 'BEGIN { printf "%.4g", s / r }')
  if [[ $device == gpu ]]; then
    fraction=$(awk -v t="$THROUGHPUT" -v b="$bytes" -v peak="$bandwidth" \
      'BEGIN { printf "%.1f%%", 100 * t * b / (peak * 1e9) }')
    speedup=$(ratio "$THROUGHPUT" "$CPU_THROUGHPUT")
  fi
  echo "| $app | $device | $per_round s | $THROUGHPUT | $WALL s | $fraction | $speedup |"
}

# compare APP UNIT COUNTER UNITS_PER_COUNT BYTES_PER_UNIT COMMAND...: the CPU row, then the GPU row.
compare() {
  local app=$1 unit=$2 counter=$3 units=$4 bytes=$5
  shift 5
  echo
  echo "### $app"
  echo
  echo "| app | device | seconds per $counter | $unit/s | wall | of peak bandwidth | GPU/CPU |"
  echo "|---|---|---|---|---|---|---|"
  row "$app" cpu "$counter" "$units" "$bytes" "${cpu_run[@]}" "$@" --threads "$cores"
  CPU_THROUGHPUT=$THROUGHPUT
  row "$app" gpu "$counter" "$units" "$bytes" "$@"
}

echo "## GPU against CPU: $gpu_name ($bandwidth GB/s), $cores cores"

# Lasso: a round moves 1,024 coordinates: nonzeros per column (rows x the density, 100 / scale) each,
# twice. Rows and columns both shrink with the scale, so the nonzeros shrink with its square.
rows=$((1000000 / scale))
data=$(generate_once "$cache/gpu-lasso-s$scale.txt" lasso --rows "$rows" --cols "$rows" --density 0.0001 \
  --support 1000 --noise 0.1)
compare lasso nonzeros round $((2 * 1024 * 100 / scale)) 24 "$lasso" --data "$data" --lambda_ratio 0.1 \
  --schedule_size 1024 --max_rounds 2000 --rho 1 --tol 1e-12

# MF: a round is an epoch over every training rating.
ratings=$((100000000 / scale))
data=$(generate_once "$cache/gpu-mf-s$scale.txt" mf --users $((2000000 / scale)) --items $((100000 / scale)) \
  --rank 32 --ratings "$ratings" \
  --test_ratings 0 --noise 0.5 --zipf 0.8)
compare mf ratings iteration "$ratings" $((16 + 4 * 8 * 32)) "$mf" --data "$data" --algorithm sgd --rank 32 \
  --lambda 0.05 --iterations 5

# LDA: a round is an iteration over every token.
documents=$((500000 / scale))
data=$(generate_once "$cache/gpu-lda-s$scale.txt" lda --documents "$documents" --words 100000 --topics 1000 \
  --document_length 200 \
  --alpha 0.01 --beta 0.01)
compare lda tokens iteration $((documents * 200)) $((4 * 1000)) "$lda" --data "$data" --topics 1000 --alpha 0.01 \
  --beta 0.01 --iterations 10
