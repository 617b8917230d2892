#!/usr/bin/env bash
# --help of every program: exit 0, the usage first, then the program's own flags before the framework's,
# each with its default, and nothing of glog's or gflags' own flags (--helpfull keeps those).
# usage: help_test.sh BUILD_DIR
set -euo pipefail
build=$1
fail() { echo "help_test: $*" >&2; exit 1; }
for program in apps/lasso/schmp-lasso apps/logreg/schmp-logreg apps/mf/schmp-mf apps/lda/schmp-lda \
  tools/schmp-generate tools/schmp-shard; do
  name=$(basename "$program")
  help=$("$build/$program" --help) || fail "$name --help exited $?"
  grep -q "^usage: .*$name" <<<"$(head -n 3 <<<"$help")" || fail "$name --help does not start with its usage"
  first=$(grep -m 1 -n '^  --' <<<"$help" | cut -d: -f1)
  own=$(grep -m 1 -n "^$name's flags:" <<<"$help" | cut -d: -f1)
  [[ -n "$own" && -n "$first" && "$first" -eq $((own + 1)) ]] || fail "$name --help lists another's flag first"
  if framework=$(grep -m 1 -n '^Framework flags' <<<"$help" | cut -d: -f1); then
    ((framework > own)) || fail "$name --help lists the framework's flags before its own"
  fi
  for internal in logtostderr minloglevel log_dir stderrthreshold flagfile=FILE tryfromenv=NAMES; do
    if grep -q -- "^  --$internal" <<<"$help"; then fail "$name --help lists --$internal"; fi
  done
  if [[ $program == apps/* ]]; then
    grep -q -- '-logtostderr' <("$build/$program" --helpfull) || fail "$name --helpfull lacks glog's flags"
  fi
done
# A value that breaks a declared rule is refused in one line, before any work.
if out=$("$build/apps/mf/schmp-mf" --data x --rank 0 2>&1); then fail "schmp-mf --rank 0 ran"; fi
[[ "$out" == "schmp-mf: error: --rank must be between 1 and 10000, not 0" ]] || fail "schmp-mf --rank 0 said: $out"
if out=$("$build/apps/lasso/schmp-lasso" --data x --device tpu 2>&1); then fail "--device tpu ran"; fi
[[ "$out" == "schmp-lasso: error: --device must be cpu or gpu, not 'tpu'" ]] || fail "--device tpu said: $out"
echo "help_test: every program's --help lists its own flags first, and no internal flag"
