// The benchmark's LIBMF peer: LIBMF's own training and prediction, driven the way its mf-train and
// mf-predict tools drive them. Built by bench/mf_vs_libmf.sh against LIBMF's sources (downloaded
// there, never kept in this tree).
//
//   libmf-driver train TRAIN VALIDATION MODEL k l2 learning_rate iterations threads
//       LIBMF prints tr_rmse and va_rmse per iteration; then "fit_seconds S" (reading excluded).
//   libmf-driver predict TEST MODEL
//       "rmse R" of the model (ours or LIBMF's) on TEST, as LIBMF computes it.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "mf.h"

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "train" && argc == 10) {
    mf::mf_problem train = mf::read_problem(argv[2]);
    mf::mf_problem validation = mf::read_problem(argv[3]);
    mf::mf_parameter parameter = mf::mf_get_default_param();
    parameter.k = std::atoi(argv[5]);
    parameter.lambda_p2 = parameter.lambda_q2 = static_cast<float>(std::atof(argv[6]));
    parameter.eta = static_cast<float>(std::atof(argv[7]));
    parameter.nr_iters = std::atoi(argv[8]);
    parameter.nr_threads = std::atoi(argv[9]);
    const auto started = std::chrono::steady_clock::now();
    mf::mf_model* model = mf::mf_train_with_validation(&train, &validation, parameter);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    std::printf("fit_seconds %.3f\n", seconds);
    const int failed = mf::mf_save_model(model, argv[4]);
    mf::mf_destroy_model(&model);
    return failed;
  }
  if (mode == "predict" && argc == 4) {
    mf::mf_problem test = mf::read_problem(argv[2]);
    mf::mf_model* model = mf::mf_load_model(argv[3]);
    if (model == nullptr) {
      std::fprintf(stderr, "libmf-driver: cannot load %s\n", argv[3]);
      return 1;
    }
    std::printf("rmse %.6f\n", mf::calc_rmse(&test, model));
    mf::mf_destroy_model(&model);
    return 0;
  }
  std::fprintf(stderr,
               "usage: libmf-driver train TRAIN VALIDATION MODEL k l2 lr iterations threads\n"
               "       libmf-driver predict TEST MODEL\n");
  return 2;
}
