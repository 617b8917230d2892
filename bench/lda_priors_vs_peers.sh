#!/usr/bin/env bash
# Benchmark: schmp-lda's learned priors (--optimize_interval) against tomotopy's Mallet-like
# optimisation (optim_interval), and against schmp-lda with fixed priors; same corpus, same model.
#
#   bench/lda_priors_vs_peers.sh [--quick] [-- EXTRA_SCHMP_FLAGS...]
#
# Corpora: techdocs and kjv_chapters from the shared data (--quick: kjv_chapters only). Each is split
# once: documents whose id is a multiple of 10 are held out (renumbered), the others train.
#
# Settings: K = 100, alpha 0.1 per topic, beta 0.01, 200 iterations; learning every 10 iterations after
# a burn-in of 50 (tomotopy learns alpha only; schmp-lda alpha_k and beta, or alpha_k alone with
# --optimize_beta=false). schmp-lda runs on 2 ranks,
# tomotopy on 2 workers (PARTITION). tomotopy's model is exported in schmp-lda's format
# (bench/tomotopy_lda.py --export), so that every model is scored alike:
#   - held-out perplexity by document completion: `schmp-lda infer --iterations 100` on the held-out
#     documents (docs/lda.md#held-out-perplexity);
#   - mean UMass and NPMI coherence of the top 10 words over the training documents
#     (bench/lda_coherence.py, docs/lda.md#coherence).
# Each run is repeated with seeds 1, 2 and 3 (one chain's held-out perplexity moves by 1-2% with the
# seed); the table gives the means. Seconds are whole-process; for schmp-lda with learning, the time
# spent learning (it prints it) and its share of the run.
#
# Environment:
#   SCHMP_BUILD          build directory (default: <repo>/build)
#   SCHMP_SHARED_DATA    directory holding lda/ (default: <repo>/../shared/data)
#   SCHMP_BENCH_TIMEOUT  seconds allowed to each run (default: 600)
# Arguments after `--` are passed to every schmp-lda run.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/common.sh
source "$repo/bench/common.sh"
parse_arguments "$@"

lda=$build/apps/lda/schmp-lda
cache=$repo/bench/.cache
runs=$cache/last-run-lda-priors
require_built "$lda"
mkdir -p "$cache"
rm -rf "$runs"
mkdir -p "$runs"

tomotopy_venv

# split NAME DOCWORD: writes $cache/lda_NAME.{train,test}, every tenth document held out.
split() {
  python3 -c '
import sys
entries = {"train": [], "test": []}
with open(sys.argv[1]) as lines:
    documents, words, _ = (int(next(lines)) for _ in range(3))
    for line in lines:
        d, w, c = line.split()
        d = int(d)
        part, number = ("test", d // 10) if d % 10 == 0 else ("train", d - d // 10)
        entries[part].append(f"{number} {w} {c}\n")
for part, count in (("train", documents - documents // 10), ("test", documents // 10)):
    with open(f"{sys.argv[2]}.{part}", "w") as out:
        out.write(f"{count}\n{words}\n{len(entries[part])}\n")
        out.writelines(entries[part])
' "$2" "$cache/lda_$1"
}

corpora=(kjv_chapters)
((quick)) || corpora=(techdocs kjv_chapters)
iterations=200
settings=(--topics 100 --alpha 0.1 --beta 0.01 --iterations "$iterations")

# score PREFIX NAME: "perplexity umass npmi" of a model.
score() {
  local perplexity coherence
  perplexity=$("$lda" infer --model "$1" --data "$cache/lda_$2.test" --iterations 100 |
    sed -n 's/.*held-out perplexity \([0-9.]*\).*/\1/p')
  coherence=$("$venv/bin/python" "$repo/bench/lda_coherence.py" "$1.word_topic" "$cache/lda_$2.train" |
    "$venv/bin/python" -c 'import json, sys; r = json.load(sys.stdin); print(r["umass"], r["npmi"])')
  echo "$perplexity $coherence"
}

# Each run's line in $runs/NAME.results: "RUN SEED SECONDS PERPLEXITY UMASS NPMI LEARNING_SECONDS".
# schmp_run NAME RUN SEED FLAGS...: schmp-lda on 2 ranks.
schmp_run() {
  local name=$1 run=$2 seed=$3 out=$runs/$1.$2.$3 start seconds learning
  shift 3
  start=$(date +%s.%N)
  timeout "$time_limit" "${mpirun_cmd[@]}" "$lda" --data "$cache/lda_$name.train" "${settings[@]}" --seed "$seed" \
    --progress_seconds 0 --output "$out" "$@" "${extra_flags[@]}" > "$out.out"
  seconds=$(echo "$(date +%s.%N) - $start" | bc)
  learning=$(sed -n 's/.*(\([0-9.]*\) s of learning).*/\1/p' "$out.out")
  echo "$run $seed $seconds $(score "$out" "$name") ${learning:-0}" >> "$runs/$name.results"
}

# tomotopy_run NAME SEED: tomotopy on 2 workers, learning alpha.
tomotopy_run() {
  local name=$1 seed=$2 out=$runs/$1.tomotopy.$2 start seconds
  start=$(date +%s.%N)
  timeout "$time_limit" "$venv/bin/python" "$repo/bench/tomotopy_lda.py" "$cache/lda_$name.train" --topics 100 \
    --alpha 0.1 --beta 0.01 --iterations "$iterations" --workers 2 --seed "$seed" --optim_interval 10 --burn_in 50 \
    --trace "$out.csv" --export "$out" > "$out.json"
  seconds=$(echo "$(date +%s.%N) - $start" | bc)
  echo "tomotopy $seed $seconds $(score "$out" "$name") 0" >> "$runs/$name.results"
}

learn=(--optimize_interval 10 --optimize_burn_in 50)
declare -A label=(
  [fixed]="schmp-lda, 2 ranks, fixed priors"
  [learned]="schmp-lda, 2 ranks, learned alpha_k and beta"
  [alpha]="schmp-lda, 2 ranks, learned alpha_k (--optimize_beta=false)"
  [tomotopy]="tomotopy 0.14, 2 workers, learned alpha"
)
echo "| corpus | run | seconds | held-out perplexity (seeds 1-3: mean, min-max) | UMass | NPMI | learning |"
echo "|---|---|---|---|---|---|---|"
for name in "${corpora[@]}"; do
  source_file=$shared/lda/${name}_lda/docword.txt
  if [[ ! -f $source_file ]]; then
    log "skipped $name: $source_file not found"
    continue
  fi
  [[ -s $cache/lda_$name.train ]] || split "$name" "$source_file"
  log "$name: $(sed -n 3p "$cache/lda_$name.train") training entries, $(sed -n 3p "$cache/lda_$name.test") held out"
  for seed in 1 2 3; do
    schmp_run "$name" fixed "$seed"
    schmp_run "$name" learned "$seed" "${learn[@]}"
    schmp_run "$name" alpha "$seed" "${learn[@]}" --optimize_beta=false
    tomotopy_run "$name" "$seed"
  done
  for run in fixed learned alpha tomotopy; do
    awk -v run="$run" -v name="$name" -v label="${label[$run]}" '$1 == run {
        n++; seconds += $3; p += $4; u += $5; q += $6; learning += $7
        if (n == 1 || $4 < low) low = $4
        if (n == 1 || $4 > high) high = $4 }
      END { printf "| %s | %s | %.1f | %.1f (%.1f-%.1f) | %.2f | %.4f | %s |\n", name, label, seconds / n, p / n,
              low, high, u / n, q / n, (learning > 0) ? sprintf("%.3f s, %.2f%%", learning / n, 100 * learning / seconds) : "" }' \
      "$runs/$name.results"
  done
done
