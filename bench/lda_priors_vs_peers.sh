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
# a burn-in of 50 (tomotopy learns alpha only; schmp-lda alpha_k and beta). schmp-lda runs on 2 ranks,
# tomotopy on 2 workers (PARTITION). tomotopy's model is exported in schmp-lda's format
# (bench/tomotopy_lda.py --export), so that every model is scored alike:
#   - held-out perplexity by document completion: `schmp-lda infer --iterations 100` on the held-out
#     documents (docs/lda.md#held-out-perplexity);
#   - mean UMass and NPMI coherence of the top 10 words over the training documents
#     (bench/lda_coherence.py, docs/lda.md#coherence).
# Seconds are whole-process; for schmp-lda with learning, the share of them spent learning (it prints
# it) is given too.
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

venv=$cache/tomotopy
if [[ ! -x $venv/bin/python ]] || ! "$venv/bin/python" -c 'import tomotopy' 2>/dev/null; then
  log "installing tomotopy into $venv"
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet tomotopy==0.14.0 numpy
fi

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

# row NAME RUN SECONDS SCORES NOTE: one table row.
row() {
  read -r perplexity umass npmi <<< "$4"
  printf '| %s | %s | %.1f | %.2f | %.2f | %.4f | %s |\n' "$1" "$2" "$3" "$perplexity" "$umass" "$npmi" "$5"
}

echo "| corpus | run | seconds | held-out perplexity | UMass | NPMI | note |"
echo "|---|---|---|---|---|---|---|"
for name in "${corpora[@]}"; do
  source_file=$shared/lda/${name}_lda/docword.txt
  if [[ ! -f $source_file ]]; then
    log "skipped $name: $source_file not found"
    continue
  fi
  [[ -s $cache/lda_$name.train ]] || split "$name" "$source_file"
  log "$name: $(sed -n 3p "$cache/lda_$name.train") training entries, $(sed -n 3p "$cache/lda_$name.test") held out"
  for learn in 0 1; do
    flags=()
    ((learn)) && flags=(--optimize_interval 10 --optimize_burn_in 50)
    out=$runs/$name.schmp$learn
    start=$(date +%s.%N)
    timeout "$time_limit" "${mpirun_cmd[@]}" "$lda" --data "$cache/lda_$name.train" "${settings[@]}" \
      --progress_seconds 0 --output "$out" "${flags[@]}" "${extra_flags[@]}" > "$out.out"
    seconds=$(echo "$(date +%s.%N) - $start" | bc)
    note="log-likelihood $(sed -n 's/.*log-likelihood per token \([-0-9.]*\).*/\1/p' "$out.out")"
    if ((learn)); then
      learning=$(sed -n 's/.*(\([0-9.]*\) s of learning).*/\1/p' "$out.out")
      note="$note; learning $learning s ($(echo "scale=2; 100 * $learning / $seconds" | bc)%), $(sed -n 's/learned priors: //p' "$out.out")"
    fi
    row "$name" "schmp-lda, 2 ranks, $( ((learn)) && echo learned || echo fixed) priors" "$seconds" \
      "$(score "$out" "$name")" "$note"
  done
  out=$runs/$name.tomotopy
  start=$(date +%s.%N)
  timeout "$time_limit" "$venv/bin/python" "$repo/bench/tomotopy_lda.py" "$cache/lda_$name.train" --topics 100 \
    --alpha 0.1 --beta 0.01 --iterations "$iterations" --workers 2 --optim_interval 10 --burn_in 50 \
    --trace "$out.csv" --export "$out" > "$out.json"
  seconds=$(echo "$(date +%s.%N) - $start" | bc)
  row "$name" "tomotopy 0.14, 2 workers, learned alpha" "$seconds" "$(score "$out" "$name")" \
    "log-likelihood $(json_field "$out.json" ll_per_word) (tomotopy's own)"
done
