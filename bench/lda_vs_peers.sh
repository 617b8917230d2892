#!/usr/bin/env bash
# Benchmark: schmp-lda (2 ranks) against tomotopy (2 threads), same corpus, same model, same
# iterations; WarpLDA's and Mallet's figures from the design notes beside them.
#
#   bench/lda_vs_peers.sh [--quick] [-- EXTRA_SCHMP_FLAGS...]
#
# Peers. tomotopy (PyPI, a C++ library: exact Gibbs draws vectorised with AVX2, threads on
# vocabulary partitions) is installed into bench/.cache and run by bench/tomotopy_lda.py with
# hyperparameter optimisation off. WarpLDA and Mallet cannot be installed here (neither is a Debian
# or PyPI package); the design notes measured them on this machine on techdocs at K = 100, alpha 0.1
# per topic, beta 0.01, 200 iterations, 2 threads: WarpLDA 40.7M tokens/s whole-process, joint
# log-likelihood per token -7.698, 32.1 s; Mallet 12.8M tokens/s, -7.5575, 119 s.
#
# Corpora: techdocs (6.38M tokens) and kjv_chapters from the shared data, and a corpus generated from a
# known LDA model shaped like the notes' peer run (10,000 documents of 100 tokens, 20,000 words, 100
# topics, alpha 0.1, beta 0.01). techdocs and the generated corpus at K = 100 (alpha 0.1 per topic) and
# K = 1000 (alpha 0.01: the same sum, 10); kjv_chapters at K = 100. Beta 0.01, 200 iterations.
# --quick: the generated corpus at K = 100, 50 iterations.
#
# Every run writes a trace: round, seconds, joint log-likelihood per token log p(w, z) / N (the same
# quantity for both programs), every 10 iterations. The table gives the last log-likelihood, the
# whole-process time and throughput (tokens x iterations / wall), and the time each run takes to
# reach tomotopy's final log-likelihood (whole process: loading plus the trace's seconds; for schmp,
# "loading" is the wall time less the solve, so it also holds gathering and writing the model) with ratio =
# tomotopy's time / the run's (above 1: faster than tomotopy). On techdocs at K = 100 it adds the
# time to WarpLDA's and Mallet's final figures. schmp-lda runs twice: its default sampler (sparse:
# exact Gibbs, word by word) and the Metropolis-Hastings one (--sampler mh --mh_steps 2).
#
# Environment:
#   SCHMP_BUILD          build directory (default: <repo>/build)
#   SCHMP_SHARED_DATA    directory holding lda/techdocs_lda (default: <repo>/../shared/data)
#   SCHMP_BENCH_TIMEOUT  seconds allowed to each run (default: 600)
#   SCHMP_LDA_CASES      the cases to run, of techdocs, techdocs-k1000, kjv_chapters, generated, generated-k1000
#                        (default: all five; --quick: generated, 50 iterations)
# Arguments after `--` are passed to every schmp-lda run.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/common.sh
source "$repo/bench/common.sh"
parse_arguments "$@"

lda=$build/apps/lda/schmp-lda
generate=$build/tools/schmp-generate
cache=$repo/bench/.cache
runs=$cache/last-run-lda

require_built "$lda" "$generate"
mkdir -p "$cache"
rm -rf "$runs"
mkdir -p "$runs"
tomotopy_venv

# reach TRACE TARGET LOAD: whole-process seconds at the first trace row with objective >= TARGET.
reach() {
  if [[ ! -s $1 || $2 == - || $3 == - ]]; then
    echo "-"
    return
  fi
  awk -F, -v target="$2" -v load="$3" '
    NR > 1 && $3 >= target { printf "%.1f\n", load + $2; found = 1; exit }
    END { if (!found) print "not reached" }' "$1"
}

# last_objective TRACE: the objective of the trace's last row.
last_objective() { if [[ -s $1 ]]; then tail -n 1 "$1" | awk -F, '{ printf "%.4f\n", $3 }'; else echo "failed, no trace"; fi; }

# row NAME TOKENS ITERATIONS TRACE WALL LOAD: one table row, with the times to the targets ("-" when
# the load time, wall less solve, could not be read).
row() {
  local name=$1 tokens=$2 iterations=$3 trace=$4 wall=$5 load=$6
  local throughput to_peer
  throughput=$(awk -v n="$tokens" -v t="$iterations" -v w="$wall" \
    'BEGIN { if (w ~ /^[0-9.]+$/) printf "%.1fM", n * t / w / 1e6; else print "-" }')
  to_peer=$(reach "$trace" "$PEER_TARGET" "$load")
  local line="| $name | $(last_objective "$trace") | $(secs "$wall") | $throughput | $(secs "$to_peer") | $(ratio "$PEER_TIME" "$to_peer") |"
  if ((REFERENCES)); then
    line+=" $(secs "$(reach "$trace" -7.698 "$load")") | $(secs "$(reach "$trace" -7.5575 "$load")") |"
  fi
  echo "$line"
}

# compare TITLE DOCWORD K ALPHA ITERATIONS REFERENCES: tomotopy, then schmp-lda's samplers; a case whose
# corpus is missing is left out, with a line on stderr.
compare() {
  local title=$1 docword=$2 topics=$3 alpha=$4 iterations=$5
  REFERENCES=$6
  [[ " $cases " == *" $title "* ]] || return 0
  if [[ ! -s $docword ]]; then
    log "lda_vs_peers: no $docword: $title left out"
    return 0
  fi
  local tokens
  tokens=$(awk 'NR > 3 { n += $3 } END { print n }' "$docword")

  log "$title: tomotopy"
  timed "tomotopy-$title" "$venv/bin/python" "$repo/bench/tomotopy_lda.py" "$docword" \
    --topics "$topics" --alpha "$alpha" --beta 0.01 --iterations "$iterations" --workers 2 \
    --trace "$runs/tomotopy-$title.csv"
  local tomotopy_wall=$WALL tomotopy_load
  tomotopy_load=$(awk -v w="$WALL" -v t="$(json_field "$runs/tomotopy-$title.out" train_seconds 2>/dev/null || echo)" \
    'BEGIN { if (w ~ /^[0-9.]+$/ && t != "") printf "%.2f", w - t; else print "-" }')
  PEER_TARGET=-
  if [[ -s $runs/tomotopy-$title.csv ]]; then PEER_TARGET=$(tail -n 1 "$runs/tomotopy-$title.csv" | cut -d, -f3); fi
  PEER_TIME=$(reach "$runs/tomotopy-$title.csv" "$PEER_TARGET" "$tomotopy_load")

  echo
  echo "### $title: K = $topics, alpha $alpha, beta 0.01, $iterations iterations ($tokens tokens)"
  echo
  local shown_target=-
  if [[ $PEER_TARGET != - ]]; then shown_target=$(printf '%.4f' "$PEER_TARGET"); fi
  local header="| run | log-likelihood per token | wall | tokens/s | time to tomotopy's $shown_target | ratio |"
  local rule="|---|---|---|---|---|---|"
  if ((REFERENCES)); then
    header+=" time to WarpLDA's -7.698 | time to Mallet's -7.5575 |"
    rule+="---|---|"
  fi
  echo "$header"
  echo "$rule"
  row "tomotopy, 2 threads" "$tokens" "$iterations" "$runs/tomotopy-$title.csv" "$tomotopy_wall" "$tomotopy_load"
  local sampler name
  for sampler in "sparse" "mh --mh_steps 2"; do
    name="$title-${sampler%% *}"
    log "$title: schmp-lda --sampler $sampler"
    # shellcheck disable=SC2086
    timed "$name" "${mpirun_cmd[@]}" "$lda" --data "$docword" --topics "$topics" --alpha "$alpha" --beta 0.01 \
      --iterations "$iterations" --eval_every 10 --sampler $sampler --progress_seconds 0 \
      --trace "$runs/$name.csv" "${extra_flags[@]}"
    local wall=$WALL solve load
    solve=$(sed -n 's/.*(\([0-9.]*\) s, .* tokens\/s.*/\1/p' "$runs/$name.out")
    load=$(awk -v w="$wall" -v s="$solve" 'BEGIN { if (w ~ /^[0-9.]+$/ && s != "") printf "%.2f", w - s; else print "-" }')
    row "schmp-lda np 2, --sampler $sampler" "$tokens" "$iterations" "$runs/$name.csv" "$wall" "$load"
  done
  if ((REFERENCES)); then
    echo "| WarpLDA, 2 threads (design notes) | -7.698 | 32.1 s | 40.7M | | | 32.1 s | not reached |"
    echo "| Mallet, 2 threads (design notes) | -7.5575 | 119 s | 12.8M | | | | 119 s |"
  fi
}

generated=$cache/lda_10000x20000_k100_s1.txt
if [[ ! -s $generated ]]; then
  log "generating $generated"
  "$generate" lda --documents 10000 --words 20000 --topics 100 --document_length 100 --alpha 0.1 --beta 0.01 \
    --seed 1 --out "$generated" >&2
fi

cases=${SCHMP_LDA_CASES:-techdocs techdocs-k1000 kjv_chapters generated generated-k1000}
{
  if ((quick)); then
    compare generated "$generated" 100 0.1 50 0
  else
    techdocs=$shared/lda/techdocs_lda/docword.txt
    compare techdocs "$techdocs" 100 0.1 200 1
    compare techdocs-k1000 "$techdocs" 1000 0.01 200 0
    compare kjv_chapters "$shared/lda/kjv_chapters_lda/docword.txt" 100 0.1 200 0
    compare generated "$generated" 100 0.1 200 0
    compare generated-k1000 "$generated" 1000 0.01 200 0
  fi
} | tee "$runs/table.txt"
