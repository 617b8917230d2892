#!/usr/bin/env bash
# Writes docs/flags.md from the programs' own flag declarations (each program's --helpmarkdown), so that
# the docs cannot drift from the code. --check compares instead, and fails when they differ.
# usage: scripts/flag-docs.sh [--check] [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
check=0
if [[ "${1:-}" == --check ]]; then check=1; shift; fi
build=${1:-${BUILD_DIR:-build}}

generate() {
  cat <<'HEAD'
# Flags

Every flag of every program, made from the flags' declarations by `scripts/flag-docs.sh`. `PROGRAM
--help` prints the same for one program. A value that breaks a flag's rule is refused in one line.

Flags are read from the command line (`--name=value` or `--name value`), from flag files
(`--flagfile=FILE`) and from the environment (`--fromenv=NAMES`). [running.md](running.md) says how.

## Framework flags (every app)

Rotation programs (MF, LDA) refuse the dynamic schedule's flags, all but `--priority`.

HEAD
  "$build/apps/lasso/schmp-lasso" --helpmarkdown=framework
  "$build/apps/lasso/schmp-lasso" --helpmarkdown
  "$build/apps/logreg/schmp-logreg" --helpmarkdown
  "$build/apps/mf/schmp-mf" --helpmarkdown
  "$build/apps/lda/schmp-lda" --helpmarkdown
  "$build/tools/schmp-generate" --helpmarkdown
  "$build/tools/schmp-shard" --helpmarkdown
}

if ((check)); then
  if ! diff -u docs/flags.md <(generate); then
    echo "docs/flags.md differs from the flags' declarations (above): run scripts/flag-docs.sh" >&2
    exit 1
  fi
  echo "docs/flags.md matches the flags' declarations"
else
  generate >docs/flags.md
  echo "wrote docs/flags.md"
fi
