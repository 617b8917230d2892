// schmp-logreg: the command line of the logistic regression program. Framework flags (--schedulers,
// --staleness, --threads, --schedule_size, --priority, --eta, --seed, --max_rounds, --max_seconds,
// --trace, ...) are shared by every app; the flags below are logistic regression's own.
#include <gflags/gflags.h>

#include "logreg.hpp"
#include "schmp/run.hpp"

DEFINE_string(data, "", "Training data: LIBSVM (1-based indices; labels +1/-1 or 1/0) or MatrixMarket");
DEFINE_string(labels, "", "Labels of a MatrixMarket matrix: MatrixMarket array or one number per line");
DEFINE_string(penalty, "l1", "l1: ||w||_1 (liblinear -s 6); l2: ||w||^2 / 2 (liblinear -s 0)");
DEFINE_double(C, 1, "Weight of the summed logistic loss against the penalty (liblinear -c)");
DEFINE_bool(bias, false, "Append a constant feature 1, as liblinear -B 1 does");
DEFINE_string(positive_label, "", "The label of the positive class; every other label is negative");
DEFINE_double(tol, 1e-4,
              "Stop when the minimum-norm subgradient relative to its value at w = 0 is at most this");
DEFINE_double(rho, 0.1, "Dependency check: never update together columns with |cosine| >= rho (1 = off)");
DEFINE_string(output, "", "Write the model here, in liblinear's text format");
DECLARE_string(trace);

int main(int argc, char** argv) {
  // As in Lasso, each evaluation refreshes every priority, so eta need only keep the rest drawable.
  gflags::SetCommandLineOptionWithMode("eta", "1e-8", gflags::SET_FLAGS_DEFAULT);
  schmp::Job job(argc, argv,
                 "Binary logistic regression (L1 or L2) by scheduled model-parallel coordinate descent.\n"
                 "usage: mpirun -np N schmp-logreg --data FILE [--penalty l1|l2] [--C C] [--bias] "
                 "[--output MODEL] [--trace FILE]");
  schmp::logreg::Config config;
  config.data = FLAGS_data;
  config.labels = FLAGS_labels;
  config.penalty = FLAGS_penalty;
  config.C = FLAGS_C;
  config.bias = FLAGS_bias;
  config.positive_label = FLAGS_positive_label;
  config.tol = FLAGS_tol;
  config.rho = FLAGS_rho;
  config.output = FLAGS_output;
  config.trace = FLAGS_trace;
  return job.run<schmp::logreg::Logreg>(config);
}
