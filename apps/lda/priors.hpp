// Learning LDA's Dirichlet priors from the counts (--optimize_interval): an asymmetric document-topic prior
// alpha_k and a symmetric topic-word prior beta, by Minka's fixed-point iteration for the
// Dirichlet-multinomial, as Mallet does (Wallach, Mimno and McCallum, 2009, "Rethinking LDA: why priors
// matter"). For alpha, with n_dk the documents' topic counts and n_d their lengths,
//
//   alpha_k  <-  alpha_k  sum_d [psi(n_dk + alpha_k) - psi(alpha_k)]  /  sum_d [psi(n_d + A) - psi(A)],
//
// A = sum_k alpha_k; for beta the same with the word-topic counts n_kw against the topic totals n_k:
//
//   beta  <-  beta  sum_kw [psi(n_kw + beta) - psi(beta)]  /  (W sum_k [psi(n_k + W beta) - psi(W beta)]).
//
// Each converges to the maximum of the Dirichlet-multinomial likelihood of its counts.
//
// The counts are spread over the workers, and the iteration evaluates its sums at many priors. So each
// worker summarises a group of counts n_i (one topic's counts over its documents; its documents' lengths;
// its block's word-topic counts) in a fixed number of doubles that are summed across workers, from which
// f(a) = sum_i [psi(n_i + a) - psi(a)] follows for any a near the prior `center` the counts were sampled
// with. Writing f(a) = sum_j S(j) / (j + a), S(j) the number of counts above j: the summary holds the
// histogram of counts below `exact` (so S(j) for j < exact, exactly), and for the larger counts the Taylor
// coefficients in a about `center` of their terms j >= exact, which are Hurwitz zeta differences. The
// series converges for |a - center| < exact + center; the fixed point is kept within a quarter of that
// (radius()), where 16 terms leave a relative error below 1e-9 in the tail's part.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace schmp::lda {

// psi, the digamma function, for x > 0.
double digamma(double x);

class DigammaSum {
 public:
  static constexpr std::size_t kTerms = 16;
  // The doubles of a summary that keeps counts below `exact` exactly (exact >= 64).
  static std::size_t size(std::size_t exact) { return exact + kTerms; }

  // Adds count n, of a group whose prior is `center`, to its summary (size(exact) doubles, zeros first).
  static void add(std::span<double> summary, std::uint64_t n, double center);

  // Reads a summary (summed across workers) made about `center`.
  DigammaSum(std::span<const double> summary, double center);
  // sum_i [psi(n_i + a) - psi(a)], for |a - center| <= radius().
  double operator()(double a) const;
  double radius() const { return (static_cast<double>(survival_.size()) + center_) / 4; }

 private:
  double center_;
  std::vector<double> survival_;  // S(j), the counts above j, for j < exact
  std::vector<double> tail_;      // the larger counts' Taylor coefficients in (center - a)
};

// Minka's fixed point for an asymmetric alpha. `topic_summaries` holds K summaries (topic k's counts in
// every document, made about alpha[k]), `length_summary` one of the documents' lengths (about sum_k
// alpha[k]). Returns the new alpha: converged, or as far as the summaries' radius lets it go (the next
// optimisation goes on from there). No alpha_k falls below kFloor (a topic in no document).
std::vector<double> learn_alpha(std::span<const double> topic_summaries,
                                std::span<const double> length_summary, std::span<const double> alpha);

// The same for a symmetric beta: `word_summary` of every word-topic count n_kw (made about beta),
// `totals` the topic totals n_k, `words` W.
double learn_beta(std::span<const double> word_summary, std::span<const std::int64_t> totals, double words,
                  double beta);

constexpr double kFloor = 1e-7;

}  // namespace schmp::lda
