#!/usr/bin/env bash
# Benchmark: multiclass L1 logistic regression, one-vs-rest with liblinear's penalised bias,
# schmp-logreg --multiclass (2 ranks: the classes side by side) against liblinear-train -s 6 -B 1 and
# scikit-learn's LogisticRegression(penalty='l1', solver='liblinear'), same C, same 80/20 split, in one
# run: seconds and held-out accuracy (bench/logreg_multiclass_peers.py has the cases); then the softmax,
# schmp-logreg --multinomial against scikit-learn's saga: seconds, accuracy and objective. liblinear-tools
# comes with scripts/setup.sh; scikit-learn is installed on first use into bench/.cache/peers.
#
#   bench/logreg_multiclass_vs_peers.sh
#
# Environment: SCHMP_BUILD (default <repo>/build).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/common.sh
source "$repo/bench/common.sh"
parse_arguments "$@"

logreg=$build/apps/logreg/schmp-logreg
cache=$repo/bench/.cache
require_built "$logreg"
mkdir -p "$cache/multiclass"
peers_venv

results=$cache/logreg_multiclass_vs_peers.jsonl
"$venv/bin/python" "$repo/bench/logreg_multiclass_peers.py" --schmp "$logreg" --wine "$repo/data/wine.svm" \
  --launcher "mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2" --directory "$cache/multiclass" \
  >"$results"

"$venv/bin/python" - "$results" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
print(f"{'data':10} {'shape':>20} {'liblinear':>16} {'sklearn':>16} {'schmp':>16} {'/best':>6}   (seconds, held-out accuracy)")
for r in rows:
    show = lambda s: f"{r[s]['seconds']:.3g} s {100 * r[s]['accuracy']:.2f}%"
    best = min(r["liblinear"]["seconds"], r["sklearn"]["seconds"])
    shape = f"{r['rows']}x{r['cols']}, {r['classes']}"
    print(f"{r['data']:10} {shape:>20} {show('liblinear'):>16} {show('sklearn'):>16} {show('schmp'):>16} "
          f"{r['schmp']['seconds'] / best:6.2f}")
print()
print(f"{'softmax':10} {'sklearn saga':>34} {'schmp --multinomial':>34}   (seconds, accuracy, objective over schmp's)")
for r in rows:
    m = r["multinomial"]
    base = m["schmp"]["objective"]
    show = lambda s: f"{m[s]['seconds']:.3g} s {100 * m[s]['accuracy']:.2f}% {m[s]['objective'] / base:.6f}"
    print(f"{r['data']:10} {show('sklearn') + ' (' + str(m['sklearn']['epochs']) + ' ep)':>34} {show('schmp'):>34}")
PY
