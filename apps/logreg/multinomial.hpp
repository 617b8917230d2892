// Multinomial (softmax) logistic regression over K classes: minimise
//   F(W) = sum_l R(w_l) + C sum_i c_i (log sum_l exp(z_il) - z_{i y_i}),  z_il = w_l . x_i (+ b_l),
// R the binary program's penalty (logreg.hpp), the intercepts b_l unpenalised.
//
// By block coordinate descent over the classes. With the other classes' weights held, F as a function
// of class k's is exactly a binary logistic loss: row i's term is l(z_ik - o_i) if y_i = k, and
// l(o_i - z_ik) plus a constant otherwise, l(z) = log(1 + exp(-z)), o_i = log sum_{l != k} exp(z_il).
// So each class's step is the binary program's solve (Config::block) with the rows' margins offset by
// o_i: every feature of the binary fit (intercept, elastic net, row weights, standardisation) holds,
// and the data is read once per process.
//
// Class steps creep where the classes' weights pull one another (nearly separable classes, a large C):
// each class waits for the others. So once the features in play are known (after two sweeps, or from
// a path's last solution) and their weights in every class number at most about a thousand, the fit
// takes joint Newton steps instead. A joint step's job (Config::joint) has the workers sum, beside F
// and the dual, the loss's Hessian over those weights, sum_i c_i x_ia x_ib (p_il [l = m] - p_il p_im);
// the first rank minimises the penalised quadratic model (schmp/quadratic_model.hpp; the intercepts
// eliminated exactly, the last class's held, as a common shift changes nothing) and tries its minimum,
// halving the step until F falls. The next job, at the point tried, tells F there. When four halvings
// find no descent, sweeps take over for three sweeps.
//
// The fit stops when the softmax duality gap relative to F is at most --tol. Each step's workers sum,
// at the weights it starts from, F and the terms of a dual point u_i = t g_{y_i} (p_i - e_i), p_i the
// softmax of row i's scores and e_i its class's indicator: its value C sum_i c_i H(e_i + t g_{y_i}
// (p_i - e_i)) (H the entropy, concave in t, so the chord of kDualScales bounds it from below) less the
// penalty's conjugate at C X' u. The scale t makes C X' u feasible for L1, as in the binary dual. With
// intercepts the dual also needs sum_i c_i u_il = 0 for every class l: the per-class scales g (the
// largest 1) are the null vector of the K x K matrix of the classes' sums, which is 1 at the optimum.
#pragma once

#include <string>
#include <vector>

#include "logreg.hpp"
#include "multiclass.hpp"
#include "schmp/run.hpp"

namespace schmp::logreg {

// The job of class k's step: `config` silent, solving class k of `classes` to relative gap `tol`
// with every class's weights at `weights` (empty: all zero).
Config block_job(const Config& config, const std::vector<double>& classes, std::size_t k,
                 const std::vector<std::vector<double>>& weights, double tol);

// What a step found (its Coordinator::result()).
struct BlockResult {
  double objective = 0;          // the block's binary objective where the step ended
  double start_objective = 0;    // ... and where it started
  double softmax_objective = 0;  // F where the step started
  double softmax_dual = 0;       // a lower bound on min F, from there
  std::vector<double> unit;      // the columns' scale (logreg.hpp: 1 / sd_j with --standardize, else 1)
  std::vector<double> w;         // class k's weights, the constant feature's last
  // F where the step ended: only the block's terms changed.
  double end_objective() const { return softmax_objective + objective - start_objective; }
};
BlockResult block_result(const std::vector<double>& result);

// The job of a joint Newton step at `weights`: its Hessian covers every class's weights of `features`.
Config joint_job(const Config& config, const std::vector<double>& classes,
                 const std::vector<std::vector<double>>& weights, const std::vector<std::uint32_t>& features);

// What a joint step's job found (Config::joint). The gradient and the Hessian are those of F's loss
// term divided by the penalty's scale (logreg.hpp: l1_ratio for L1, else 1), so that the penalty
// weighs 1, in the penalised weights v_lj = w_lj / unit_j.
struct JointResult {
  double softmax_objective = 0;  // F at the job's weights
  double softmax_dual = 0;       // a lower bound on min F, from there
  std::vector<double> unit;      // the columns' scale
  std::vector<double> gradient;  // in every v_lj, class by class (K x params)
  // In the v_la of the joint features, numbered l |features| + a, packed (packed_symmetric.hpp).
  std::vector<double> hessian;
};
JointResult joint_result(const std::vector<double>& result, std::size_t classes, std::size_t params,
                         std::size_t features);

// Fits the softmax over `classes` (the data's labels, increasing; more than two), then prints one line
// per class and the fit's, scores --test and writes --output (liblinear's multiclass format: the
// classes' weight columns; predict --multinomial reads its probabilities as the softmax). With --path,
// a fit per lambda from lambda_max down (softmax_lambda_max, found by a probe job), each from the last,
// and with --cv each fold's path beside it: every path's class steps go to the ranks together
// (Job::run_each). Returns the exit status.
int fit_multinomial(Job& job, const Config& config, const std::vector<double>& classes);

// Probes the whole data and each fold's training rows (Config::probe), side by side: their findings into
// `found`, the whole data's first. Refuses classes whose rows weigh nothing. Returns the exit status.
int probe_classes(Job& job, const Config& config, const std::vector<double>& classes,
                  std::vector<Probe>& found);

}  // namespace schmp::logreg
