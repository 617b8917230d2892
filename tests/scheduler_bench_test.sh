#!/usr/bin/env bash
# bench/schmp-scheduler-bench on bundled data: the same blocks twice for one seed (the checksum that
# compares builds), other blocks for another seed, the first scheduler's share of the columns, and a
# missing file refused with one line and a non-zero exit.
# usage: scheduler_bench_test.sh BENCH DATA_DIR
set -euo pipefail
bench=$1 data=$2
run() { "$bench" --data "$data/diabetes.svm" --schedule_size 4 --blocks 200 --rho 0.5 "$@"; }
first=$(run)
echo "$first"
grep -q "^200 blocks of up to 4: .* ms per block" <<<"$first"
grep -q "^per block: median .* ms, 99th percentile .* ms, slowest .* ms$" <<<"$first"
checksum() { run "$@" | grep "^checksum "; }
[[ $(checksum) == "$(checksum)" ]] || { echo "two runs with one seed differ"; exit 1; }
[[ $(checksum) != "$(checksum --seed 2)" ]] || { echo "another seed, the same blocks"; exit 1; }
two=$(run --schedulers 2)
grep -q "^scheduler 1 of 2: 5 of 10 columns" <<<"$two" || { echo "$two"; exit 1; }
if error=$("$bench" --data "$data/no-such-file.svm" 2>&1); then
  echo "a missing file was accepted"
  exit 1
fi
echo "$error"
[[ $(wc -l <<<"$error") == 1 && $error == "schmp-scheduler-bench: error: "*no-such-file.svm* ]]
