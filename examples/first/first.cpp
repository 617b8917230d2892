// A first schmp program: least squares, min_w 1/2 ||y - X w||^2, by scheduled coordinate descent. Each
// worker makes its own rows of X and y and keeps the residual r = y - X w; the coordinator owns w.
//   mpirun -np 3 first [--features P]
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>
#include <schmp/schmp.hpp>
#include <vector>

SCHMP_FLAG(int32, features, 8, schmp::at_least(1), "Columns of X: the parameters");

using Vector = std::vector<double>;
double dot(const Vector& a, const Vector& b) {
  return std::inner_product(a.begin(), a.end(), b.begin(), 0.0);
}

struct LeastSquares {
  struct Config {
    int features;
  };
  using Partial = Vector;  // summed over the workers: x_j . r, then x_j . x_j, for each scheduled j
  using Stats = double;    // summed over the workers: ||r||^2
  struct Commit {          // shipped to every worker: how far each scheduled w_j moved
    std::vector<schmp::ParamIndex> params;
    Vector steps;
    SCHMP_FIELDS(params, steps)
  };

  class Worker {  // its rows of X, column by column, and the residual r
   public:
    Worker(const Config& config, const schmp::WorkerContext& context)
        : x_(config.features, Vector(500)), r_(500) {
      std::mt19937_64 random(context.seed * 1000 + context.index);  // other rows on every worker
      std::normal_distribution<double> normal;
      for (std::size_t i = 0; i < r_.size(); ++i) {  // y = X w* + noise, w*_j = j; r = y while w = 0
        r_[i] = 0.1 * normal(random);
        for (std::size_t j = 0; j < x_.size(); ++j) r_[i] += j * (x_[j][i] = normal(random));
      }
    }
    std::size_t num_params() const { return x_.size(); }
    Partial update(const schmp::Schedule& block) {
      Partial sums;
      for (schmp::ParamIndex j : block.params) sums.insert(sums.end(), {dot(x_[j], r_), dot(x_[j], x_[j])});
      return sums;
    }
    void apply(const Commit& commit) {
      for (std::size_t k = 0; k < commit.params.size(); ++k)
        for (std::size_t i = 0; i < r_.size(); ++i) r_[i] -= commit.steps[k] * x_[commit.params[k]][i];
    }
    Stats evaluate() const { return dot(r_, r_); }

   private:
    std::vector<Vector> x_;
    Vector r_;
  };

  class Coordinator {  // owns w
   public:
    Coordinator(const Config&, std::size_t num_params) : w_(num_params) {}
    Commit aggregate(const schmp::Schedule& block, const Partial& sums, schmp::Priorities& priorities) {
      Commit commit{block.params, {}};
      for (std::size_t k = 0; k < block.params.size(); ++k) {
        commit.steps.push_back(sums[2 * k] / sums[2 * k + 1]);  // to the minimum along w_j
        w_[block.params[k]] += commit.steps[k];
        priorities.set(block.params[k], commit.steps[k]);  // what still moves is picked more often
      }
      return commit;
    }
    schmp::Report report(const Stats& rr) {  // converged: no progress since the last evaluation
      const bool converged = rr >= last_ * (1 - 1e-12);
      last_ = rr;
      return {rr / 2, {}, converged};
    }
    void finish(const schmp::Summary& summary) {
      std::printf("first: %s after %llu rounds; w =", summary.stopped_by.c_str(),
                  (unsigned long long)summary.rounds);
      for (double wj : w_) std::printf(" %.3f", wj);
      std::printf("\n");
    }

   private:
    Vector w_;
    double last_ = HUGE_VAL;
  };
};

int main(int argc, char** argv) {
  schmp::Job job(argc, argv, "usage: mpirun -np N first [--features P]");
  return job.run<LeastSquares>({FLAGS_features});
}
