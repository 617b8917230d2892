// Anderson extrapolation (schmp/extrapolation.hpp): the Gram matrix the two sides keep, and the weights,
// against explicit sums and a fixed-point iteration whose limit is known. And the working sets' choice
// (schmp/working_set.hpp) against a full sort.
#include "schmp/extrapolation.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "schmp/working_set.hpp"

namespace schmp {
namespace {

using Vector = std::vector<double>;

double dot(const Vector& a, const Vector& b) {
  return std::inner_product(a.begin(), a.end(), b.begin(), 0.0);
}

Vector combine(const std::vector<Vector>& vectors, const Vector& weights) {
  Vector sum(vectors.front().size(), 0.0);
  for (std::size_t k = 0; k < vectors.size(); ++k) {
    for (std::size_t i = 0; i < sum.size(); ++i) sum[i] += weights[k] * vectors[k][i];
  }
  return sum;
}

TEST(Extrapolation, KeepsTheGramMatrixOfTheLastVectorsSummedOverWorkers) {
  // Two workers hold the halves of each vector; their rows, summed, are the whole vectors' products.
  std::mt19937_64 random(1);
  std::normal_distribution<double> normal;
  Snapshots first(3), second(3);
  Extrapolation gram(3);
  std::vector<Vector> whole;
  for (int step = 0; step < 5; ++step) {
    Vector v(10);
    for (double& x : v) x = normal(random);
    whole.push_back(v);
    Vector row = first.push({v.data(), 5});
    const Vector other = second.push({v.data() + 5, 5});
    ASSERT_EQ(row.size(), other.size());
    for (std::size_t k = 0; k < row.size(); ++k) row[k] += other[k];
    gram.push(row);
  }
  ASSERT_TRUE(gram.full());
  const std::vector<Vector> kept(whole.end() - 3, whole.end());
  const Vector weights = {0.5, -2.0, 1.5};
  const Vector sum = combine(kept, weights);
  EXPECT_NEAR(gram.norm_squared(weights), dot(sum, sum), 1e-10);
}

TEST(Extrapolation, RefusesARowFromWorkersThatKeepOtherVectors) {
  Extrapolation gram(4);
  gram.push({1.0});
  EXPECT_THROW(gram.push({1.0}), std::logic_error);
}

TEST(Extrapolation, GetsNearerTheLimitOfALinearIterationThanManyMoreSteps) {
  // x <- A x + b with A diagonal, its 50 entries spread over [0.5, 0.99]: a slow contraction whose limit
  // is b_i / (1 - a_i). One extrapolation from the first 6 iterates lands nearer the limit than 20 more
  // steps do (the weights are those of the polynomial in A that damps the error most).
  const std::size_t dim = 50;
  std::mt19937_64 random(1);
  std::normal_distribution<double> normal;
  Vector a(dim), b(dim), limit(dim);
  for (std::size_t i = 0; i < dim; ++i) {
    a[i] = 0.5 + 0.49 * static_cast<double>(i) / (dim - 1);
    b[i] = normal(random);
    limit[i] = b[i] / (1 - a[i]);
  }
  const auto step = [&](const Vector& x) {
    Vector next(dim);
    for (std::size_t i = 0; i < dim; ++i) next[i] = a[i] * x[i] + b[i];
    return next;
  };
  const auto distance = [&](const Vector& x) {
    double sum = 0;
    for (std::size_t i = 0; i < dim; ++i) sum += (x[i] - limit[i]) * (x[i] - limit[i]);
    return std::sqrt(sum);
  };
  Snapshots worker(6);
  Extrapolation gram(6);
  std::vector<Vector> iterates;
  Vector x(dim, 0.0);
  for (int k = 0; k < 6; ++k) {
    x = step(x);
    iterates.push_back(x);
    gram.push(worker.push(x));
  }
  const Vector weights = gram.weights();
  ASSERT_EQ(weights.size(), 6u);
  EXPECT_EQ(weights[0], 0.0);
  EXPECT_NEAR(std::accumulate(weights.begin(), weights.end(), 0.0), 1.0, 1e-12);
  const double extrapolated = distance(combine(iterates, weights));
  for (int k = 0; k < 20; ++k) x = step(x);
  EXPECT_LT(extrapolated, distance(x));
}

TEST(Extrapolation, GivesNoWeightsFromTooFewOrDependentVectors) {
  Extrapolation gram(5);
  Snapshots worker(5);
  const Vector v = {1, 2, 3};
  gram.push(worker.push(v));
  gram.push(worker.push(v));
  EXPECT_TRUE(gram.weights().empty());  // two vectors
  gram.push(worker.push(v));
  EXPECT_TRUE(gram.weights().empty());  // all differences zero
  gram.clear();
  worker.clear();
  EXPECT_EQ(gram.size(), 0u);
  EXPECT_EQ(worker.push(v).size(), 1u);
}

}  // namespace
}  // namespace schmp

// choose_working_set: the moving parameters and the `more` nearest others, by distance and then by
// index among equal distances, against a full sort; none when the set would be over a quarter.
TEST(WorkingSet, TakesTheNearestOthersByDistanceThenIndex) {
  std::mt19937 random(5);
  for (const std::size_t live : {0u, 3u, 150u, 1000u, 5000u}) {
    for (const std::size_t moving_count : {0u, 1u, 40u, 300u}) {
      if (moving_count > live) continue;
      std::vector<schmp::ParamIndex> moving;
      std::vector<std::pair<double, schmp::ParamIndex>> others;
      for (std::size_t j = 0; j < live; ++j) {
        if (j < moving_count) {
          moving.push_back(static_cast<schmp::ParamIndex>(live - 1 - j));
        } else {
          // Few distinct distances: ties are the rule.
          others.emplace_back(static_cast<double>(random() % 7),
                              static_cast<schmp::ParamIndex>(live - 1 - j));
        }
      }
      std::vector<std::pair<double, schmp::ParamIndex>> sorted = others;
      std::sort(sorted.begin(), sorted.end());
      const std::size_t size = std::min(live, std::max<std::size_t>(2 * moving.size(), 100));
      std::vector<schmp::ParamIndex> expected;
      if (4 * size <= live) {
        expected = moving;
        for (std::size_t k = 0; k < size - moving.size(); ++k) expected.push_back(sorted[k].second);
        std::sort(expected.begin(), expected.end());
      }
      EXPECT_EQ(schmp::choose_working_set(moving, others, live), expected)
          << live << " live, " << moving_count << " moving";
    }
  }
}
