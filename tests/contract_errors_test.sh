#!/usr/bin/env bash
# A program that has half of an optional member (program.hpp, rotation.hpp), or one of the wrong form,
# fails to compile with a message that names the member; the whole programs compile.
# usage: contract_errors_test.sh CXX SOURCE_DIR
set -euo pipefail
cxx=$1 source=$2
program="$source/tests/contract/program.inc"
compile() { "$cxx" -std=c++20 -fsyntax-only -x c++ -I "$source/include" "$@" "$program" 2>&1; }
for program in "$source/tests/contract/program.inc" "$source/tests/contract/rotation.inc"; do
  compile >/dev/null || { echo "contract_errors: $program does not compile"; compile; exit 1; }
done
program="$source/tests/contract/program.inc"
status=0
expect() {  # expect WORDS -DDEFINE...: the compile fails and its errors hold WORDS
  local words=$1
  shift
  if errors=$(compile "$@"); then
    echo "contract_errors: $* compiled"; status=1
  elif ! grep -qF "$words" <<<"$errors"; then
    echo "contract_errors: $* failed without naming it ($words):"; grep -m 3 error <<<"$errors"; status=1
  fi
}
expect "Setup: a program with a Setup message needs Setup Worker::setup() const" -DSETUP_MESSAGE
expect "Setup: a program with a Setup message needs Setup Worker::setup() const" -DWORKER_SETUP
expect "the Coordinator is made as Coordinator(const Config&, std::size_t num_params, const Setup& summed)" \
  -DSETUP_MESSAGE -DWORKER_SETUP
expect "checkpoints: a program with a Saved message needs Saved Coordinator::save() const" -DSAVED_MESSAGE
expect "P::Dependency needs bool interferes(ParamIndex, ParamIndex) const" -DDEPENDENCY
expect "P::Dependency is made as Dependency(const Config&, ParamRange owned, const DataColumns& data)" \
  -DDEPENDENCY_WITHOUT_DATA
expect "Partial: a program that names its Partial returns it from Worker::update" -DPARTIAL=float
expect "finish: the optional Coordinator::finish is void finish(const Summary&)" -DFINISH_WITHOUT_SUMMARY
expect "pacing: the optional Coordinator::evaluation_size is std::size_t evaluation_size() const" \
  -DEVALUATION_SIZE_NOT_CONST
program="$source/tests/contract/rotation.inc"
expect "Shared: a rotation program with a Shared message needs Shared Worker::share()" -DSHARED_MESSAGE
expect "Shared: a rotation program with a Shared message needs Shared Worker::share()" -DWORKER_SHARES
expect "checkpoints: a rotation program with a Saved message needs a Progress message" -DSAVED_MESSAGE
if ((status == 0)); then echo "contract_errors: each half-made member is a compile error that names it"; fi
exit $status
