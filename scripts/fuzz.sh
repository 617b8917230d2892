#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ with clang (SCHMP_FUZZ=ON, build directory
# ${FUZZ_BUILD_DIR:-build-fuzz}) and runs each for SECONDS_PER_TARGET seconds (default 10) on a working
# copy of its seed corpus. Exits non-zero when a target finds anything (a crash, a sanitizer report, an
# unexpected exception, a leak, a hang, an out-of-memory), naming the target and the input saved for it.
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...] [-- LIBFUZZER_FLAG...]
#   scripts/fuzz.sh 600 libsvm -- -max_len=65536 -jobs=2 -workers=2
# TARGET is a name from fuzz/NAME_fuzzer.cpp (default: all). In the build directory, per target:
#   fuzz-corpus/NAME     the working corpus: the seeds from fuzz/corpus/NAME plus the inputs runs found
#                        (kept from run to run; delete it to start again from the seeds)
#   fuzz-artifacts/NAME  the inputs the last run found a problem with (crash-*, leak-*, timeout-*, oom-*)
#   fuzz-logs/NAME.log   libFuzzer's output of the last run
# docs/fuzzing.md says more: longer campaigns, and how a crash becomes a regression test.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=10
if [[ $# -gt 0 && $1 =~ ^[0-9]+$ ]]; then
  seconds=$1
  shift
fi
targets=()
while [[ $# -gt 0 && $1 != "--" ]]; do
  targets+=("$1")
  shift
done
if [[ $# -gt 0 ]]; then shift; fi
extra=("$@")
if ((${#targets[@]} == 0)); then
  for source in fuzz/*_fuzzer.cpp; do
    name=${source#fuzz/}
    targets+=("${name%_fuzzer.cpp}")
  done
fi

scripts/setup.sh
build="${FUZZ_BUILD_DIR:-build-fuzz}"
cmake -S . -B "$build" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSCHMP_FUZZ=ON -DSCHMP_CUDA=OFF \
  -DSCHMP_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" --target fuzz_targets -j "$(nproc)" >/dev/null
build=$(cd "$build" && pwd)
source_dir=$(pwd)

export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}"
# Each target writes its inputs to a scratch file under TMPDIR: one directory per run, removed at the end.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

for name in "${targets[@]}"; do
  if [[ ! -x $build/fuzz/fuzz_$name ]]; then
    echo "fuzz: no $build/fuzz/fuzz_$name: is schmp_add_fuzz_target($name) in fuzz/CMakeLists.txt?" >&2
    exit 2
  fi
done

status=0
for name in "${targets[@]}"; do
  binary="$build/fuzz/fuzz_$name"
  corpus="$build/fuzz-corpus/$name"
  artifacts="$build/fuzz-artifacts/$name"
  logs="$build/fuzz-logs"
  rm -rf "$artifacts"
  mkdir -p "$corpus" "$artifacts" "$logs" "$scratch/$name"
  if [[ -d fuzz/corpus/$name ]]; then
    cp -R fuzz/corpus/"$name"/. "$corpus"/
  else
    echo "fuzz: $name has no seeds in fuzz/corpus/$name" >&2
  fi
  options=(-max_total_time="$seconds" -timeout=20 -print_final_stats=1 -artifact_prefix="$artifacts/")
  if [[ -f fuzz/$name.dict ]]; then options+=(-dict="$source_dir/fuzz/$name.dict"); fi
  log="$logs/$name.log"
  # From the log directory: with -jobs, libFuzzer writes one fuzz-N.log per job into the current one.
  code=0
  (cd "$logs" && TMPDIR="$scratch/$name" "$binary" "${options[@]}" "${extra[@]}" "$corpus" >"$log" 2>&1) ||
    code=$?
  mapfile -t found < <(find "$artifacts" -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' \
    -o -name 'oom-*' \) | sort)
  if ((code != 0 || ${#found[@]} > 0)); then
    status=1
    echo "fuzz: $name FAILED (exit status $code); the end of $log:"
    tail -n 60 "$log" | sed 's/^/    /'
    for input in "${found[@]}"; do
      echo "fuzz: $name: input that fails: $input"
      echo "fuzz:   reproduce: $binary $input"
    done
  else
    runs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | awk '{s += $2} END {print s + 0}')
    coverage=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 | awk '{print $2}')
    echo "fuzz: $name ok: ${runs} inputs in ${seconds} s, coverage ${coverage:-?} edges," \
      "$(find "$corpus" -type f | wc -l) inputs in $corpus"
  fi
done
exit $status
