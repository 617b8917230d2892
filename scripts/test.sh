#!/usr/bin/env bash
# The whole test suite, from a fresh machine: set-up, a build with warnings as errors, then ctest
# (unit tests, end-to-end runs under mpirun with 1, 3 and 5 ranks, and the example program built
# outside the tree against the installed framework).
# Then two more stages, which SCHMP_QUICK=1 skips (for a quick local run):
# - the same suite built with AddressSanitizer and UndefinedBehaviorSanitizer (SCHMP_SANITIZE=ON, in
#   ${SANITIZE_BUILD_DIR:-build-asan}): any sanitizer report, or a leak that tests/sanitizers/lsan.supp
#   does not suppress, fails the test that ran the program, MPI ranks included;
# - the fuzz targets of the input readers, ${SCHMP_FUZZ_SECONDS:-8} seconds each (scripts/fuzz.sh,
#   docs/fuzzing.md).
set -euo pipefail
cd "$(dirname "$0")/.."

# mpirun refuses to run as root, and the tests start more ranks than a small machine has cores.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1

# Each stage's time, so that a slow CI run shows where its minutes went.
stage_start=$SECONDS
stage_done() {
  echo "test.sh: $1 took $((SECONDS - stage_start)) s ($SECONDS s in all)"
  stage_start=$SECONDS
}

SCHMP_WERROR=ON scripts/build.sh
stage_done "set-up and build"
# Twice as many tests as cores: most of them spend much of their time starting mpirun and waiting for
# ranks (on 2 cores the suite kept the processors 45% busy at -j 2, and took 127 s at -j 4 against 183 s).
jobs=$((2 * $(nproc)))
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure --no-tests=error --timeout 900 -j "$jobs"
stage_done "tests"

if [[ "${SCHMP_QUICK:-0}" == 1 ]]; then
  exit 0
fi

# Warnings are not errors here: GCC warns falsely about library code under -fsanitize
# (-Wmaybe-uninitialized in <regex>). The CUDA kernels stay out: the first build compiled them, CI has
# no GPU to run them, and the CUDA runtime does not live with AddressSanitizer's default shadow layout.
sanitize_build="${SANITIZE_BUILD_DIR:-build-asan}"
BUILD_DIR="$sanitize_build" SCHMP_WERROR=OFF scripts/build.sh -DSCHMP_SANITIZE=ON -DSCHMP_CUDA=OFF
stage_done "sanitizer build"
# mpirun passes this environment on to the ranks it starts. Leak reports on Open MPI's own allocations
# are suppressed (tests/sanitizers/lsan.supp) by frames that only the slow unwinder reaches
# (fast_unwind_on_malloc=0); it makes allocation-heavy programs several times slower, so the unit tests
# that need no MPI keep the fast one, through a per-program options file (%b: the program's name).
mkdir -p "$sanitize_build/asan-options"
asan_options=$(cd "$sanitize_build/asan-options" && pwd)
for program in io_test lda_test; do echo "fast_unwind_on_malloc=1" >"$asan_options/$program"; done
# intercept_tls_get_addr=0: with it on, LeakSanitizer's scan of a thread's dynamic TLS read a bogus
# block on this toolchain (schmp-mf --output died with "Tracer caught signal 11" at exit, every time);
# off, dynamic TLS is not scanned as a root, which can only add leak reports, never hide one.
export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:check_initialization_order=1:strict_init_order=1:\
fast_unwind_on_malloc=0:intercept_tls_get_addr=0:include_if_exists='$asan_options/%b'"
# Paths quoted: the sanitizers split their options at spaces, colons and commas.
export LSAN_OPTIONS="suppressions='$PWD/tests/sanitizers/lsan.supp':print_suppressions=0"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
# Under the sanitizers every mpirun costs seconds. This pass leaves out the tests whose code paths
# other tests take here, and which check results, not memory (the pass above runs them all):
# - Lasso's and logreg's 5-rank layouts and the simulated-host runs (the 1- and 3-rank layouts);
# - the recorded model files comparison, and the comparisons with R's glmnet (they run only where R
#   has glmnet);
# - the cross-validation's comparison with a refit per fold (the weighted cross-validation's runs);
# - the multinomial fit's comparisons with its reference, and its joint steps near separable classes
#   (MultinomialAtTheEdges);
# - Lasso's hard shapes (StepsFromTheGramMatrixKeepTheSolution), its rounds with and without steps
#   from the Gram matrix, its standardised columns against glmnet (IntegerWeightsAreRepeatedRows
#   standardises), its elastic net (RowWeightsMatchTheWeightedReference fits one), its path against
#   the reference (PathResumesFromItsCheckpoint), its fit without an intercept (the limit between
#   evaluations) and its fits of the shared real sets;
# - logreg's elastic net, standardised columns and Newton steps' count (its standardised paths and
#   cross-validations fit elastic nets with steps from the Hessian);
# - MF's ratings far from zero or of another scale (the same runs on shifted or scaled data);
# - the larger lists of refused settings, dozens of mpiruns each: every app's refusals still run here
#   (Lasso's bad options and weights, logreg's bad input, MF's and LDA's refused checkpoints, the
#   implicit fit's mistakes, LDA's bad vocabulary).
ctest --test-dir "$sanitize_build" --output-on-failure --no-tests=error --timeout 900 -j "$jobs" \
  -E "^RanksSchedulersStaleness/.*/np5_|^Cluster\\.|/ClusterLda\\.|^same_models$|CrossValidationMatchesARefitPerFold|\
MultinomialAtFiveRanks|MultinomialMatchesTheSoftmaxReference|MultinomialJointStepsFinishNearSeparableClasses|GlmnetFits|\
HardShapesMatchTheReference|TakeAFractionOfTheRounds|StandardizedColumnsGiveGlmnetsModel|\
^LassoEndToEnd\\.(ElasticNetMatchesTheReference|APathMatchesTheReferenceAtEveryLambda|\
WithoutAnInterceptMatchesTheReference)$|^Sets/LassoSharedData\\.|^LogregEndToEnd\\.(ElasticNetMatchesTheReference|\
StandardizedColumnsGiveTheScaledDatasModel|NewtonStepsFromTheHessianTakeFewRounds)$|\
^MfEndToEnd\\.(RatingsFarFromZeroFitAsWell|RatingsOfAnyScaleGiveTheObjectiveScaled)$|RefusesBadSettingsOnEveryRank|\
^LassoEndToEnd\\.(CommandLineMistakesAreOneLine|OutputsOnTheDataOrOnEachOtherAreRefused)$|\
^LogregEndToEnd\\.MulticlassMistakesAreOneLine$|^CheckpointRefusal\\.OtherSettingsAndOtherApps$"
stage_done "sanitizer tests"
unset ASAN_OPTIONS LSAN_OPTIONS UBSAN_OPTIONS

scripts/fuzz.sh "${SCHMP_FUZZ_SECONDS:-8}"
stage_done "fuzzing"
