// LDA's prior learning (apps/lda/priors.hpp): digamma against harmonic numbers and the derivative of
// lgamma; the digamma summaries against sums of 1/(j + a) over every count; learn_alpha and learn_beta
// against a direct maximisation of the Dirichlet-multinomial likelihood that uses lgamma alone.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <numeric>
#include <random>
#include <span>
#include <vector>

#include "priors.hpp"

namespace schmp {
namespace {

using Rows = std::vector<std::vector<std::uint64_t>>;

double relative_error(double got, double expected) { return std::abs(got - expected) / std::abs(expected); }

// Row r holds lengths[r] draws from theta_r ~ Dirichlet(prior), theta_r made of normalised gamma draws.
Rows dirichlet_multinomial(const std::vector<double>& prior, const std::vector<std::uint64_t>& lengths,
                           std::mt19937_64& random) {
  Rows rows;
  for (const std::uint64_t length : lengths) {
    std::vector<double> theta(prior.size());
    for (std::size_t c = 0; c < prior.size(); ++c) {
      theta[c] = std::gamma_distribution<double>(prior[c])(random);
    }
    std::discrete_distribution<std::size_t> draw(theta.begin(), theta.end());
    std::vector<std::uint64_t> row(prior.size(), 0);
    for (std::uint64_t i = 0; i < length; ++i) ++row[draw(random)];
    rows.push_back(std::move(row));
  }
  return rows;
}

// The Dirichlet-multinomial log-likelihood less the terms free of the prior, sum_r [lgamma(A) -
// lgamma(n_r + A) + sum_c (lgamma(n_rc + a_c) - lgamma(a_c))], in long double: its rounding then blurs
// the maximiser by a few 1e-8, well within the tolerances below (in double it would be about 1e-6).
long double log_likelihood(const Rows& rows, const std::vector<long double>& prior) {
  const long double sum = std::accumulate(prior.begin(), prior.end(), 0.0L);
  long double total = 0;
  for (const std::vector<std::uint64_t>& row : rows) {
    long double length = 0;
    for (std::size_t c = 0; c < row.size(); ++c) {
      const auto count = static_cast<long double>(row[c]);
      length += count;
      if (row[c] > 0) total += std::lgamma(count + prior[c]) - std::lgamma(prior[c]);
    }
    total += std::lgamma(sum) - std::lgamma(length + sum);
  }
  return total;
}

using Objective = std::function<long double(double)>;

// The maximiser of f near x (f unimodal): golden-section search to 1e-12 on [x - 1, x + 1], moved on
// while the maximum is found at an end.
double maximise(const Objective& f, double x) {
  const double ratio = (std::sqrt(5.0) - 1) / 2;
  for (;;) {
    double lo = x - 1;
    double hi = x + 1;
    double left = hi - ratio * (hi - lo);
    double right = lo + ratio * (hi - lo);
    long double f_left = f(left);
    long double f_right = f(right);
    while (hi - lo > 1e-12) {
      if (f_left < f_right) {
        lo = left;
        left = right;
        f_left = f_right;
        right = lo + ratio * (hi - lo);
        f_right = f(right);
      } else {
        hi = right;
        right = left;
        f_right = f_left;
        left = hi - ratio * (hi - lo);
        f_left = f(left);
      }
    }
    const double best = (lo + hi) / 2;
    if (std::abs(best - x) < 0.999) return best;
    x = best;
  }
}

// The maximiser of log_likelihood(rows, .) by cyclic coordinate ascent on log a_k, each sweep also
// searching along a common scale of every a_k (the direction in which the sum A couples them). It stops
// at 1e-7: below that the sweeps only wander in the likelihood's rounding.
std::vector<double> direct_alpha(const Rows& rows, const std::vector<double>& start) {
  std::vector<long double> prior(start.begin(), start.end());
  const std::size_t topics = prior.size();
  for (int sweep = 0; sweep < 1000; ++sweep) {
    const std::vector<long double> before = prior;
    for (std::size_t k = 0; k <= topics; ++k) {
      const std::vector<long double> base = prior;
      const auto at = [&](double x) {
        std::vector<long double> trial = base;
        if (k < topics) trial[k] = std::exp(static_cast<long double>(x));
        if (k == topics) {
          for (long double& value : trial) value *= std::exp(static_cast<long double>(x));
        }
        return log_likelihood(rows, trial);
      };
      const double x = maximise(at, k < topics ? std::log(static_cast<double>(base[k])) : 0.0);
      if (k < topics) prior[k] = std::exp(static_cast<long double>(x));
      if (k == topics) {
        for (long double& value : prior) value *= std::exp(static_cast<long double>(x));
      }
    }
    long double change = 0;
    for (std::size_t k = 0; k < topics; ++k) change = std::max(change, std::abs(prior[k] / before[k] - 1));
    if (change < 1e-7) break;
  }
  return {prior.begin(), prior.end()};
}

// The topic summaries (each about alpha[k]) and the length summary (about sum_k alpha[k]) of the
// documents' counts, as the workers' summaries would sum to.
struct AlphaSummaries {
  std::vector<double> topics;
  std::vector<double> lengths;
};

AlphaSummaries summarise(const Rows& documents, const std::vector<double>& alpha, std::size_t topic_exact,
                         std::size_t length_exact) {
  const std::size_t width = lda::DigammaSum::size(topic_exact);
  AlphaSummaries summaries{std::vector<double>(alpha.size() * width, 0.0),
                           std::vector<double>(lda::DigammaSum::size(length_exact), 0.0)};
  const double sum = std::accumulate(alpha.begin(), alpha.end(), 0.0);
  for (const std::vector<std::uint64_t>& document : documents) {
    for (std::size_t k = 0; k < alpha.size(); ++k) {
      lda::DigammaSum::add(std::span(summaries.topics).subspan(k * width, width), document[k], alpha[k]);
    }
    lda::DigammaSum::add(summaries.lengths,
                         std::accumulate(document.begin(), document.end(), std::uint64_t{0}), sum);
  }
  return summaries;
}

// learn_alpha called until it stops moving, the summaries rebuilt about each call's result since a call
// may stop at their radius.
std::vector<double> fit_alpha(const Rows& documents, std::vector<double> alpha, std::size_t topic_exact,
                              std::size_t length_exact) {
  for (int call = 0; call < 1000; ++call) {
    const AlphaSummaries summaries = summarise(documents, alpha, topic_exact, length_exact);
    const std::vector<double> next = lda::learn_alpha(summaries.topics, summaries.lengths, alpha);
    double change = 0;
    for (std::size_t k = 0; k < alpha.size(); ++k) {
      change = std::max(change, relative_error(next[k], alpha[k]));
    }
    alpha = next;
    if (change < 1e-9) break;
  }
  return alpha;
}

std::vector<std::uint64_t> document_lengths(std::mt19937_64& random, int documents, int long_documents) {
  std::uniform_int_distribution<std::uint64_t> length(20, 300);
  std::vector<std::uint64_t> lengths(documents, 2000);  // the first few far above the summaries' `exact`
  for (int d = long_documents; d < documents; ++d) lengths[d] = length(random);
  return lengths;
}

TEST(Digamma, MatchesHarmonicNumbersAndTheDerivativeOfLgamma) {
  constexpr double kEuler = 0.5772156649015329;
  EXPECT_LT(relative_error(lda::digamma(1), -kEuler), 1e-12);
  EXPECT_LT(relative_error(lda::digamma(0.5), -kEuler - 2 * std::log(2.0)), 1e-12);
  // psi(n + 1) = psi(1) + H_n, across the switch to the asymptotic series at 10.
  long double harmonic = 0;
  for (int n = 1; n <= 100; ++n) {
    harmonic += 1.0L / n;
    EXPECT_LT(relative_error(lda::digamma(n + 1), static_cast<double>(harmonic - kEuler)), 1e-12) << n;
  }
  // Five-point central differences of lgamma in long double, with a step of 1e-3 x: their own error is
  // about 1e-12 of max(1, |psi|) at these x (their h^4 term), so they hold digamma to 1e-10.
  for (const double x : {1e-3, 0.1, 0.5, 1.0, 2.5, 7.0, 9.999, 10.0, 30.0, 1e4}) {
    const long double h = 1e-3L * x;
    const auto f = [&](long double shift) { return std::lgamma(x + shift); };
    const auto derivative = static_cast<double>((f(-2 * h) - 8 * f(-h) + 8 * f(h) - f(2 * h)) / (12 * h));
    EXPECT_LT(std::abs(lda::digamma(x) - derivative) / std::max(1.0, std::abs(derivative)), 1e-10) << x;
  }
}

// sum_i [psi(n_i + a) - psi(a)] as sum_i sum_{j < n_i} 1/(j + a), term by term in long double.
double brute_force(const std::vector<std::uint64_t>& counts, double a) {
  long double sum = 0;
  for (const std::uint64_t n : counts) {
    for (std::uint64_t j = 0; j < n; ++j) sum += 1 / (j + static_cast<long double>(a));
  }
  return static_cast<double>(sum);
}

TEST(DigammaSum, SumsDigammaDifferencesWithinTheRadius) {
  std::mt19937_64 random(5);
  // Zeros, counts around both `exact`s, and a heavy (log-uniform) tail up to 100000.
  std::vector<std::uint64_t> counts{0, 63, 64, 65, 127, 128, 129, 100000};
  std::uniform_int_distribution<std::uint64_t> small(0, 300);
  std::uniform_real_distribution<double> log_count(0, std::log(100000.0));
  for (int i = 0; i < 2500; ++i) counts.push_back(small(random));
  for (int i = 0; i < 500; ++i) counts.push_back(static_cast<std::uint64_t>(std::exp(log_count(random))));
  std::shuffle(counts.begin(), counts.end(), random);

  for (const std::size_t exact : {64, 128}) {
    for (const double center : {0.01, 0.1, 1.0, 50.0}) {
      std::vector<double> whole(lda::DigammaSum::size(exact), 0.0);
      std::vector<double> first(whole.size(), 0.0);
      std::vector<double> second(whole.size(), 0.0);
      for (std::size_t i = 0; i < counts.size(); ++i) {
        lda::DigammaSum::add(whole, counts[i], center);
        lda::DigammaSum::add(i % 2 == 0 ? first : second, counts[i], center);
      }
      // Two workers' summaries, summed as MPI would.
      std::vector<double> summed(whole.size());
      for (std::size_t i = 0; i < whole.size(); ++i) summed[i] = first[i] + second[i];
      const lda::DigammaSum sum(whole, center);
      const lda::DigammaSum sum_of_halves(summed, center);
      const double radius = sum.radius();
      for (const double a : {center, center + radius, center + 0.9 * radius, center + radius / 3,
                             std::max(center - radius, 1e-3), std::max(center - 0.9 * radius, 1e-2), 1e-3}) {
        if (std::abs(a - center) > radius) continue;
        const double expected = brute_force(counts, a);
        EXPECT_LT(relative_error(sum(a), expected), 1e-9)
            << "exact " << exact << " center " << center << " a " << a;
        EXPECT_LT(relative_error(sum_of_halves(a), sum(a)), 1e-12) << exact << " " << center << " " << a;
      }
    }
  }
}

TEST(LearnAlpha, ReachesTheMaximumLikelihood) {
  std::mt19937_64 random(11);
  const std::vector<double> truth{2.0, 0.8, 0.3, 0.1, 0.05};
  const Rows documents = dirichlet_multinomial(truth, document_lengths(random, 400, 5), random);
  const std::vector<double> start(truth.size(), 0.1);
  const std::vector<double> learned = fit_alpha(documents, start, 128, 1024);
  const std::vector<double> direct = direct_alpha(documents, start);
  for (std::size_t k = 0; k < truth.size(); ++k) {
    EXPECT_LT(relative_error(learned[k], direct[k]), 1e-6)
        << k << ": " << learned[k] << " against " << direct[k];
    EXPECT_LT(relative_error(learned[k], truth[k]), 0.35) << k;  // statistical, so loose
  }
  // No small step away from it raises the likelihood.
  const std::vector<long double> best(learned.begin(), learned.end());
  const long double at_best = log_likelihood(documents, best);
  std::uniform_real_distribution<long double> step(-1e-3, 1e-3);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<long double> moved = best;
    for (long double& value : moved) value *= 1 + step(random);
    EXPECT_LE(log_likelihood(documents, moved), at_best) << trial;
  }
}

TEST(LearnAlpha, StopsAtTheRadiusAndGoesOnFromThere) {
  std::mt19937_64 random(13);
  const std::vector<double> truth{60.0, 30.0, 15.0};
  std::uniform_int_distribution<std::uint64_t> length(500, 1500);
  std::vector<std::uint64_t> lengths(300);
  for (std::uint64_t& value : lengths) value = length(random);
  const Rows documents = dirichlet_multinomial(truth, lengths, random);
  const std::vector<double> start(truth.size(), 1.0);
  // The smallest summaries, so that their radius (about 16) is short of the maximum, near the truth.
  const AlphaSummaries summaries = summarise(documents, start, 64, 64);
  const std::vector<double> first = lda::learn_alpha(summaries.topics, summaries.lengths, start);
  const double topic_radius =
      lda::DigammaSum(std::span(summaries.topics).first(lda::DigammaSum::size(64)), 1.0).radius();
  const double length_radius = lda::DigammaSum(summaries.lengths, 3.0).radius();
  double reach = 0;  // the largest move, as a fraction of its radius
  for (std::size_t k = 0; k < truth.size(); ++k) {
    EXPECT_LE(std::abs(first[k] - start[k]), topic_radius) << k;
    reach = std::max(reach, std::abs(first[k] - start[k]) / topic_radius);
  }
  const double moved_sum = std::accumulate(first.begin(), first.end(), 0.0) - 3.0;
  EXPECT_LE(std::abs(moved_sum), length_radius);
  reach = std::max(reach, std::abs(moved_sum) / length_radius);
  EXPECT_GT(reach, 1 - 1e-9) << "the call stopped at a radius";  // here the lengths' one

  const std::vector<double> learned = fit_alpha(documents, first, 64, 64);
  const std::vector<double> direct = direct_alpha(documents, start);
  for (std::size_t k = 0; k < truth.size(); ++k) {
    EXPECT_LT(relative_error(learned[k], direct[k]), 1e-6)
        << k << ": " << learned[k] << " against " << direct[k];
  }
}

TEST(LearnAlpha, GivesAnUnusedTopicTheFloor) {
  std::mt19937_64 random(17);
  const Rows used = dirichlet_multinomial({1.0, 0.5}, document_lengths(random, 200, 2), random);
  Rows documents = used;
  for (std::vector<std::uint64_t>& document : documents) document.push_back(0);  // topic 2 in no document
  const std::vector<double> learned = fit_alpha(documents, {0.1, 0.1, 0.1}, 128, 1024);
  ASSERT_TRUE(std::isfinite(learned[2]));
  EXPECT_LT(relative_error(learned[2], lda::kFloor), 1e-9) << learned[2];
  // The other topics as if there were only them: the floor adds 1e-7 to A, which moves them by ~3e-7.
  const std::vector<double> direct = direct_alpha(used, {0.1, 0.1});
  for (std::size_t k = 0; k < 2; ++k) EXPECT_LT(relative_error(learned[k], direct[k]), 1e-6) << k;
}

TEST(LearnBeta, ReachesTheMaximumLikelihood) {
  std::mt19937_64 random(19);
  constexpr std::size_t kWords = 300;
  constexpr double kTruth = 0.05;
  // One topic far larger, so that many of its counts lie above `exact`.
  const std::vector<std::uint64_t> totals{2000, 3500, 5000, 200000};
  const Rows topics = dirichlet_multinomial(std::vector<double>(kWords, kTruth), totals, random);
  const std::vector<std::int64_t> signed_totals(totals.begin(), totals.end());
  double beta = 0.01;
  for (int call = 0; call < 1000; ++call) {
    std::vector<double> summary(lda::DigammaSum::size(1024), 0.0);
    for (const std::vector<std::uint64_t>& topic : topics) {
      for (const std::uint64_t count : topic) lda::DigammaSum::add(summary, count, beta);
    }
    const double next = lda::learn_beta(summary, signed_totals, static_cast<double>(kWords), beta);
    const double change = relative_error(next, beta);
    beta = next;
    if (change < 1e-9) break;
  }
  const Objective at = [&](double x) {
    return log_likelihood(topics, std::vector<long double>(kWords, std::exp(static_cast<long double>(x))));
  };
  const double direct = std::exp(maximise(at, std::log(0.01)));
  EXPECT_LT(relative_error(beta, direct), 1e-6) << beta << " against " << direct;
  EXPECT_LT(relative_error(beta, kTruth), 0.35);
}

}  // namespace
}  // namespace schmp
