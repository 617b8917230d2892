#!/usr/bin/env bash
# Every app's model file, for fixed settings, seed and rank count, against checksums recorded before a
# change: a refactoring must leave them byte for byte the same. Every setting is given, so that a change
# of a default does not count as a change of behaviour.
# usage: same_models.sh BUILD_DIR SOURCE_DIR MPIEXEC [--record]
#   --record rewrites tests/same_models.md5 (only when a change is meant to alter the results).
set -euo pipefail
build=$(cd "$1" && pwd) source=$(cd "$2" && pwd) mpiexec=$3 mode=${4:-check}
sums="$source/tests/same_models.md5"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# Open MPI's session directory of its own: mpiruns of other tests starting at the same moment race
# to create the shared one (open-mpi/ompi#8510).
export OMPI_MCA_orte_tmpdir_base="$scratch"
# Data paths are relative to the source, because a Lasso model names its data file: the checksums
# must not depend on where the tree was cloned.
cd "$source"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1

run() {  # run RANKS PROGRAM FLAGS...: a job whose output must succeed quietly
  local ranks=$1 program=$2
  shift 2
  "$mpiexec" --oversubscribe -np "$ranks" "$build/$program" --progress_seconds 0 --threads 1 "$@" \
    >"$scratch/last.log" 2>&1 || { cat "$scratch/last.log"; exit 1; }
}

"$build/tools/schmp-generate" mf --users 300 --items 200 --rank 4 --ratings 12000 --test_ratings 1000 \
  --noise 0.3 --zipf 0.8 --seed 5 --out "$scratch/mf.txt" >/dev/null
dynamic=(--layout all --schedulers 1 --schedule_size 32 --priority --in_order --priority_power 1 --seed 7
  --max_rounds 1000000 --max_seconds 3600 --eval_every 0)
for ranks in 1 3; do
  run $ranks apps/lasso/schmp-lasso --data data/diabetes.svm --lambda_ratio 0.01 --tol 1e-8 \
    --rho 0.1 --eta 1e-8 "${dynamic[@]}" --staleness 0 --sweeps=false --output "$scratch/lasso.np$ranks.model"
  run $ranks apps/logreg/schmp-logreg --data data/heart_scale.svm --penalty l1 --C 1 --tol 1e-6 \
    --rho 0.1 --eta 1e-8 "${dynamic[@]}" --staleness 2 --sweeps \
    --output "$scratch/logreg.np$ranks.model"
  for algorithm in ccd sgd; do
    run $ranks apps/mf/schmp-mf --data "$scratch/mf.txt" --test "$scratch/mf.txt.test" \
      --algorithm $algorithm --rank 6 --lambda 0.05 --iterations 8 --inner 1 --learning_rate 0.1 \
      --biases=false --tol 0 --early_stop 0 --priority --seed 7 --output "$scratch/mf-$algorithm.np$ranks.model"
  done
  run $ranks apps/lda/schmp-lda --data data/sotu/docword.txt --vocab data/sotu/vocab.txt \
    --topics 8 --alpha 0.1 --beta 0.01 --iterations 6 --sampler sparse --seed 7 \
    --output "$scratch/lda.np$ranks"
done

cd "$scratch"
md5sum -- *.model lda.np*.word_topic lda.np*.doc_topic lda.np*.topics | sort -k2 >now.md5
if [[ "$mode" == --record ]]; then
  cp now.md5 "$sums"
  echo "recorded $(wc -l <now.md5) model files in $sums"
elif ! diff -u "$sums" now.md5; then
  echo "same_models: a model file differs from the one recorded (lines above); --record only if meant"
  exit 1
else
  echo "same_models: $(wc -l <now.md5) model files as recorded"
fi
