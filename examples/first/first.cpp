// A first schmp program: least squares, min_w 1/2 ||y - X w||^2, by scheduled coordinate descent. Each
// worker makes its own rows of X and y and keeps the residual r = y - X w; the coordinator owns w.
//   mpirun -np 3 first [--features P]
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>
#include <schmp/schmp.hpp>

SCHMP_FLAG(int32, features, 8, schmp::at_least(1), "Columns of X: the parameters");

using Vector = std::vector<double>;
double dot(const Vector& a, const Vector& b) { return std::inner_product(a.begin(), a.end(), b.begin(), 0.); }

struct LeastSquares {
  using Config = int;            // the number of features
  using Partial = Vector;        // summed over the workers: x_j . r, then x_j . x_j, for each scheduled j
  using Stats = double;          // summed over the workers: ||r||^2
  using Commit = schmp::Deltas;  // shipped to every worker: how far each scheduled w_j moved

  struct Worker {            // one per worker rank: its own rows
    Vector r = Vector(500);  // y - X w: y = X w* + noise, w*_j = j, and w = 0 at first
    std::vector<Vector> x;   // X column by column: 500 rows here, other rows on each worker
    Worker(int features, const schmp::WorkerContext& context) : x(features, Vector(r.size())) {
      std::mt19937_64 random(context.seed * 1000 + context.index);
      std::normal_distribution<double> normal;
      for (std::size_t i = 0; i < r.size(); ++i)
        for (std::size_t j = 0; j < x.size(); ++j)
          r[i] += j * (x[j][i] = normal(random)) + 0.03 * normal(random);
    }
    std::size_t num_params() const { return x.size(); }
    Partial update(const schmp::Schedule& block) {
      Partial sums;
      for (schmp::ParamIndex j : block.params) sums.insert(sums.end(), {dot(x[j], r), dot(x[j], x[j])});
      return sums;
    }
    void apply(const Commit& commit) {
      for (std::size_t k = 0; k < commit.params.size(); ++k)
        for (std::size_t i = 0; i < r.size(); ++i) r[i] -= commit.deltas[k] * x[commit.params[k]][i];
    }
    Stats evaluate() const { return dot(r, r); }
  };

  struct Coordinator {  // owns w
    Vector w;
    double last = HUGE_VAL;  // ||r||^2 at the evaluation before
    Coordinator(int, std::size_t num_params) : w(num_params) {}
    Commit aggregate(const schmp::Schedule& block, const Partial& sums, schmp::Priorities& priorities) {
      Commit commit{block.params, {}};
      for (std::size_t k = 0; k < block.params.size(); ++k) {
        commit.deltas.push_back(sums[2 * k] / sums[2 * k + 1]);  // to the minimum along w_j
        w[block.params[k]] += commit.deltas[k];
        priorities.set(block.params[k], commit.deltas[k]);  // what still moves is picked more often
      }
      return commit;
    }
    schmp::Report report(double rr) {  // converged: no progress since the evaluation before
      std::swap(rr, last);
      return {last / 2, {}, last >= rr * (1 - 1e-12)};
    }
    void finish(const schmp::Summary& summary) {
      std::printf("first: %s; w =", summary.stopped_by.c_str());
      for (double wj : w) std::printf(" %.3f", wj);
      std::printf("\n");
    }
  };
};

int main(int argc, char** argv) {
  schmp::Job job(argc, argv, "usage: mpirun -np N first [--features P]");
  return job.run<LeastSquares>(FLAGS_features);
}
