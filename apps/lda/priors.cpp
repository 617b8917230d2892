#include "priors.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace schmp::lda {

namespace {

constexpr int kMaxIterations = 200;
constexpr double kTolerance = 1e-10;  // relative change of every prior, at which the iteration stops

// psi(x) for x >= 10: the asymptotic series, good to 1e-13 there.
double digamma_large(double x) {
  const double inverse = 1 / x;
  const double squared = inverse * inverse;
  return std::log(x) - 0.5 * inverse -
         squared * (1.0 / 12 -
                    squared * (1.0 / 120 - squared * (1.0 / 252 - squared * (1.0 / 240 - squared / 132))));
}

// zeta(s, x) = sum_{j >= 0} (x + j)^-s for s = 2 .. kTerms, into zeta[s - 1], by Euler-Maclaurin with five
// Bernoulli terms: for x >= 64 the first term left out is below 1e-14 of the sum.
void hurwitz_zeta(double x, double* zeta) {
  // B_2k / (2k)!
  constexpr double kBernoulli[] = {1.0 / 12, -1.0 / 720, 1.0 / 30240, -1.0 / 1209600, 1.0 / 47900160};
  const double inverse = 1 / x;
  double power = inverse;  // x^-s
  for (std::size_t s = 2; s <= DigammaSum::kTerms; ++s) {
    power *= inverse;
    const auto order = static_cast<double>(s);
    double sum = power * x / (order - 1) + power / 2;
    double rising = order;  // s (s + 1) ... (s + 2k - 2)
    double term = power * inverse;
    for (int k = 0; k < 5; ++k) {
      sum += kBernoulli[k] * rising * term;
      rising *= (order + 2 * k + 1) * (order + 2 * k + 2);
      term *= inverse * inverse;
    }
    zeta[s - 1] = sum;
  }
}

}  // namespace

double digamma(double x) {
  double shift = 0;
  for (; x < 10; x += 1) shift += 1 / x;
  return digamma_large(x) - shift;
}

void DigammaSum::add(std::span<double> summary, std::uint64_t n, double center) {
  const std::size_t exact = summary.size() - kTerms;
  if (n == 0) return;
  if (n < exact) {
    summary[n] += 1;
    return;
  }
  summary[0] += 1;  // above every j < exact
  if (n == exact) return;
  // sum_{j=exact}^{n-1} 1/(j + a) = sum_m (center - a)^m sum_j (j + center)^-(m+1): the m = 0 sum is a
  // digamma difference, the others Hurwitz zeta differences.
  const double first = static_cast<double>(exact) + center;
  const double last = static_cast<double>(n) + center;
  std::span<double> tail = summary.subspan(exact);
  tail[0] += digamma_large(last) - digamma_large(first);
  double from[kTerms];
  double to[kTerms];
  hurwitz_zeta(first, from);
  hurwitz_zeta(last, to);
  for (std::size_t m = 1; m < kTerms; ++m) tail[m] += from[m] - to[m];
}

namespace {

std::span<const double> checked(std::span<const double> summary) {
  if (summary.size() < DigammaSum::size(64)) throw std::logic_error("a digamma summary too small");
  return summary;
}

}  // namespace

DigammaSum::DigammaSum(std::span<const double> summary, double center)
    : center_(center),
      survival_(checked(summary).size() - kTerms),
      tail_(summary.end() - kTerms, summary.end()) {
  const std::size_t exact = survival_.size();
  double above = summary[0];
  for (std::size_t j = exact; j-- > 0;) {
    survival_[j] = above;
    above += summary[j];
  }
}

double DigammaSum::operator()(double a) const {
  double sum = 0;
  for (std::size_t j = 0; j < survival_.size() && survival_[j] > 0; ++j)
    sum += survival_[j] / (static_cast<double>(j) + a);
  const double step = center_ - a;
  double series = 0;
  for (std::size_t m = kTerms; m-- > 0;) series = series * step + tail_[m];
  return sum + series;
}

namespace {

// The largest t in [0, 1] that keeps x + t (y - x) within `radius` of `center` (x is within it).
double within(double x, double y, double center, double radius, double t) {
  if (y > center + radius) return std::min(t, (center + radius - x) / (y - x));
  if (y < center - radius) return std::min(t, (x - (center - radius)) / (x - y));
  return t;
}

}  // namespace

std::vector<double> learn_alpha(std::span<const double> topic_summaries,
                                std::span<const double> length_summary, std::span<const double> alpha) {
  const std::size_t topics = alpha.size();
  const std::size_t width = topic_summaries.size() / topics;
  std::vector<DigammaSum> topic_sums;
  for (std::size_t k = 0; k < topics; ++k)
    topic_sums.emplace_back(topic_summaries.subspan(k * width, width), alpha[k]);
  const double start_sum = std::accumulate(alpha.begin(), alpha.end(), 0.0);
  const DigammaSum lengths(length_summary, start_sum);
  std::vector<double> current(alpha.begin(), alpha.end());
  std::vector<double> next(topics);
  for (int iteration = 0; iteration < kMaxIterations; ++iteration) {
    const double sum = std::accumulate(current.begin(), current.end(), 0.0);
    const double denominator = lengths(sum);
    if (!(denominator > 0)) break;  // no documents
    double t = 1;
    double change = 0;
    for (std::size_t k = 0; k < topics; ++k) {
      next[k] = std::max(kFloor, current[k] * topic_sums[k](current[k]) / denominator);
      t = within(current[k], next[k], alpha[k], topic_sums[k].radius(), t);
      change = std::max(change, std::abs(next[k] - current[k]) / current[k]);
    }
    t = within(sum, std::accumulate(next.begin(), next.end(), 0.0), start_sum, lengths.radius(), t);
    for (std::size_t k = 0; k < topics; ++k) current[k] += t * (next[k] - current[k]);
    if (t < 1 || change < kTolerance) break;
  }
  return current;
}

double learn_beta(std::span<const double> word_summary, std::span<const std::int64_t> totals, double words,
                  double beta) {
  const DigammaSum word_sum(word_summary, beta);
  double current = beta;
  for (int iteration = 0; iteration < kMaxIterations; ++iteration) {
    const double sum = current * words;
    double denominator = 0;
    for (const std::int64_t total : totals)
      denominator += digamma(static_cast<double>(total) + sum) - digamma(sum);
    denominator *= words;
    if (!(denominator > 0)) break;
    const double next = std::max(kFloor, current * word_sum(current) / denominator);
    const double t = within(current, next, beta, word_sum.radius(), 1);
    const double change = std::abs(next - current) / current;
    current += t * (next - current);
    if (t < 1 || change < kTolerance) break;
  }
  return current;
}

}  // namespace schmp::lda
