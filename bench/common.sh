# Shared by the benchmark scripts: their settings and command line, running a solver under a time
# limit and reading its results. The sourcing script sets repo (the repository root) before sourcing,
# and before using the helpers: runs (a directory for outputs) and match (relative slack of "reached
# the target objective").

# Settings from the environment (see bench/README.md).
build=${SCHMP_BUILD:-$repo/build}
shared=${SCHMP_SHARED_DATA:-$(dirname "$repo")/shared/data}
python=${SCHMP_PYTHON:-/usr/bin/python3}
time_limit=${SCHMP_BENCH_TIMEOUT:-600}

log() { echo "$*" >&2; }

# parse_arguments "$@": sets quick (--quick) and extra_flags (everything after --); --help prints the
# sourcing script's header comment.
parse_arguments() {
  quick=0
  extra_flags=()
  while (($# > 0)); do
    case "$1" in
      --quick) quick=1 ;;
      -h | --help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
      --) shift; extra_flags=("$@"); break ;;
      *) echo "$(basename "$0" .sh): unknown argument '$1' (try --help)" >&2; exit 2 ;;
    esac
    shift
  done
}

# generated KIND NAME FLAGS...: the path of a schmp-generate set of KIND (lasso or logreg) in $cache,
# made on first use with $generate.
generated() {
  local kind=$1 name=$2
  shift 2
  local file=$cache/${kind}_$name.svm
  if [[ ! -s $file ]]; then
    log "generating $file"
    "$generate" "$kind" "$@" --out "$file.tmp" >&2
    mv "$file.tmp" "$file"
    rm -f "$file.tmp.truth"
  fi
  echo "$file"
}

# generated_lasso NAME FLAGS...: generated lasso NAME FLAGS...
generated_lasso() { generated lasso "$@"; }

# path_sets: sets the array `sets` to the path benchmarks' data: the generated 10,000 x 50,000 problem,
# then all_leukemia_age and movielens_small_linreg where the shared data has them.
path_sets() {
  sets=("$(generated_lasso 10000x50000 --rows 10000 --cols 50000 --density 0.01 --support 500 --noise 0.1 --seed 1)")
  local set
  for set in all_leukemia_age_lasso/all_leukemia_age_lasso.svm movielens_small_linreg/movielens_small.linreg.svm; do
    if [[ -f $shared/lasso/$set ]]; then sets+=("$shared/lasso/$set"); else log "skipped $set: not found"; fi
  done
}

# require_built TOOL...: stops with a message when a schmp binary has not been built.
require_built() {
  local tool
  for tool in "$@"; do
    if [[ ! -x $tool ]]; then
      echo "$(basename "$0" .sh): $tool not found: build first (scripts/build.sh), or set SCHMP_BUILD" >&2
      exit 1
    fi
  done
}

# timed NAME COMMAND...: runs COMMAND under `timeout`, stdout and stderr to $runs/NAME.{out,err}.
# Sets WALL (whole-process seconds, ">LIMIT" or "failed(rc)") and STATUS ("ok", "timeout" or "failed(rc)"); never exits the script.
timed() {
  local name=$1 t0 t1 rc=0
  shift
  t0=$(date +%s.%N)
  timeout "$time_limit" "$@" >"$runs/$name.out" 2>"$runs/$name.err" || rc=$?
  t1=$(date +%s.%N)
  WALL=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
  case $rc in
    0) STATUS=ok ;;
    124) STATUS=timeout; WALL=">$time_limit" ;;
    *) STATUS="failed($rc)"; WALL=$STATUS ;;
  esac
  if [[ $STATUS != ok ]]; then
    log "  $name: $STATUS; see $runs/$name.err:"
    tail -n 5 "$runs/$name.err" | sed 's/^/    /' >&2
  fi
}

# generate_once FILE KIND FLAGS...: prints FILE, first made by `schmp-generate KIND FLAGS... --seed 1`
# unless it exists (with its .truth and .test files); written under a temporary name, so that an
# interrupted run leaves nothing that looks complete. Uses $generate (the sourcing script sets it).
# Returns non-zero when the generator fails: callers run it in $(...), where `set -e` does not reach,
# so every step checks its own status.
generate_once() {
  local file=$1 kind=$2
  shift 2
  if [[ ! -s $file ]]; then
    log "generating $file"
    "$generate" "$kind" "$@" --seed 1 --out "$file.tmp" >&2 || { log "generating $file failed"; return 1; }
    local extra
    for extra in truth test; do
      if [[ -e $file.tmp.$extra ]]; then mv "$file.tmp.$extra" "$file.$extra" || return 1; fi
    done
    mv "$file.tmp" "$file" || return 1
  fi
  echo "$file"
}

# last_value TRACE COLUMN: COLUMN's value in the trace's last row.
last_value() {
  awk -F, -v name="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == name) c = i; next } { v = $c }
    END { print v }' "$1"
}

# json_field FILE KEY: one field of a JSON object (floats with all their digits).
json_field() {
  "$python" -c 'import json, sys; print(repr(json.load(open(sys.argv[1]))[sys.argv[2]]))' "$1" "$2"
}

# time_to_target TRACE TARGET: solver seconds of the first trace row with objective <= TARGET*(1+match).
# A run killed by the time limit still leaves the rows it wrote.
time_to_target() {
  local trace=$1 target=$2
  if [[ ! -s $trace || $target == - ]]; then echo "-"; return; fi
  awk -F, -v target="$target" -v match_="$match" '
    NR > 1 && $3 <= target * (1 + match_) { printf "%.3f\n", $2; found = 1; exit }
    END { if (!found) print "not reached" }' "$trace"
}

# median V...: the median of the numbers given (the lower middle one of an even count).
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# ratio A B: A / B to two decimals, or "-" when either is not a positive number.
ratio() {
  awk -v a="$1" -v b="$2" 'BEGIN {
    if (a ~ /^[0-9.eE+-]+$/ && b ~ /^[0-9.eE+-]+$/ && b + 0 > 0) printf "%.2f\n", a / b; else print "-" }'
}

# secs V: V with " s" appended when it is a number.
secs() { if [[ $1 =~ ^[0-9.]+$ ]]; then echo "$1 s"; else echo "$1"; fi; }

# mpirun with two ranks, as root where needed, oversubscribed on one core.
mpirun_cmd=(mpirun -np 2)
if [[ $(id -u) -eq 0 ]]; then mpirun_cmd+=(--allow-run-as-root); fi
if (($(nproc) < 2)); then mpirun_cmd+=(--oversubscribe); fi

# python_venv NAME MODULES PACKAGES...: sets venv to bench/.cache/NAME, a virtual environment in which
# `import MODULES` works, made from the PyPI PACKAGES on first use.
python_venv() {
  venv=$repo/bench/.cache/$1
  if [[ ! -x $venv/bin/python ]] || ! "$venv/bin/python" -c "import $2" 2>/dev/null; then
    log "installing $2 into $venv"
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet "${@:3}"
  fi
}

# tomotopy_venv: python_venv with tomotopy, for the LDA benchmarks.
tomotopy_venv() { python_venv tomotopy tomotopy tomotopy==0.14.0 numpy; }

# peers_venv: python_venv with celer, skglm and scikit-learn; and launcher set to the mpirun command for
# rank counts above 1.
peers_venv() {
  python_venv peers "celer, skglm, sklearn" celer==0.7.4 skglm==0.5 scikit-learn numpy scipy
  launcher=(mpirun --oversubscribe)
  if [[ $(id -u) -eq 0 ]]; then launcher+=(--allow-run-as-root); fi
}
