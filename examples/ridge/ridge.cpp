// A complete SchMP program outside the schmp tree: ridge regression by scheduled coordinate descent,
//   minimise (1/2n) ||y - X w||^2 + (mu/2) ||w||^2,
// on data that every worker generates for its own rows. The coordinator also receives X^T X and X^T y
// once, solves the normal equations directly, and reports how far the scheduled solver ends from them.
#include <Eigen/Dense>
#include <cmath>
#include <cstdio>
#include <random>
#include <schmp/schmp.hpp>

SCHMP_FLAG(int32, rows, 2000, schmp::at_least(1), "Rows in all (split among the workers)");
SCHMP_FLAG(int32, features, 20, schmp::at_least(1), "Features");
SCHMP_FLAG(double, mu, 0.1, schmp::at_least(0), "L2 weight");

struct Ridge {
  struct Config {
    int rows, features;
    double mu;
  };
  struct Setup {
    std::vector<double> xtx, xty;  // X^T X (row-major) and X^T y over the worker's rows
    double rows = 0;
    SCHMP_FIELDS(xtx, xty, rows)
  };

  class Worker {
   public:
    Worker(const Config& config, const schmp::WorkerContext& context) {
      // Rows [first, last) of a data set fixed by the seed, whoever generates them.
      const int first = config.rows * context.index / context.count;
      const int last = config.rows * (context.index + 1) / context.count;
      x_.resize(last - first, config.features);
      y_.resize(last - first);
      for (int i = first; i < last; ++i) {
        std::mt19937_64 random(context.seed * 1000003 + static_cast<unsigned>(i));
        std::normal_distribution<double> normal(0, 1);
        double label = 0;
        for (int j = 0; j < config.features; ++j) {
          x_(i - first, j) = normal(random);
          label += x_(i - first, j) * (j % 3 == 0 ? 1.0 : -0.5);
        }
        y_(i - first) = label + 0.1 * normal(random);
      }
      r_ = y_;
    }
    std::size_t num_params() const { return static_cast<std::size_t>(x_.cols()); }
    Setup setup() const {
      Eigen::MatrixXd xtx = x_.transpose() * x_;
      Eigen::VectorXd xty = x_.transpose() * y_;
      return {
          {xtx.data(), xtx.data() + xtx.size()}, {xty.data(), xty.data() + xty.size()}, double(y_.size())};
    }
    double evaluate() const { return r_.squaredNorm(); }           // summed over the workers: ||r||^2
    std::vector<double> update(const schmp::Schedule& schedule) {  // summed: x_j . r for the scheduled j
      std::vector<double> dots;
      for (schmp::ParamIndex j : schedule.params) dots.push_back(x_.col(j).dot(r_));
      return dots;
    }
    void apply(const schmp::Deltas& commit) {
      for (std::size_t k = 0; k < commit.params.size(); ++k)
        r_ -= x_.col(commit.params[k]) * commit.deltas[k];
    }

   private:
    Eigen::MatrixXd x_;
    Eigen::VectorXd y_, r_;
  };

  class Coordinator {
   public:
    Coordinator(const Config& config, std::size_t p, const Setup& setup)
        : mu_(config.mu), n_(setup.rows), w_(Eigen::VectorXd::Zero(static_cast<Eigen::Index>(p))) {
      const Eigen::Map<const Eigen::MatrixXd> xtx(setup.xtx.data(), static_cast<Eigen::Index>(p),
                                                  static_cast<Eigen::Index>(p));
      const Eigen::Map<const Eigen::VectorXd> xty(setup.xty.data(), static_cast<Eigen::Index>(p));
      norms_ = xtx.diagonal();
      Eigen::MatrixXd system = xtx + n_ * mu_ * Eigen::MatrixXd::Identity(xtx.rows(), xtx.cols());
      exact_ = system.ldlt().solve(xty);
    }
    std::vector<std::string> trace_columns() const { return {"distance_to_exact"}; }
    schmp::Deltas aggregate(const schmp::Schedule& schedule, const std::vector<double>& dots,
                            schmp::Priorities& priorities) {
      schmp::Deltas commit;
      for (std::size_t k = 0; k < schedule.params.size(); ++k) {
        const schmp::ParamIndex j = schedule.params[k];
        const double updated = (norms_[j] * w_[j] + dots[k]) / (norms_[j] + n_ * mu_);
        commit.params.push_back(j);
        commit.deltas.push_back(updated - w_[j]);
        priorities.set(j, updated - w_[j]);
        w_[j] = updated;
      }
      return commit;
    }
    schmp::Report report(double rr) const {
      const double distance = (w_ - exact_).norm() / exact_.norm();
      return {rr / (2 * n_) + 0.5 * mu_ * w_.squaredNorm(), {distance}, distance < 1e-9};
    }
    void finish(const schmp::Summary& summary) {
      std::printf(
          "ridge: %s after %llu rounds: objective %.10g, relative distance to the exact solution %.2e\n",
          summary.stopped_by.c_str(), static_cast<unsigned long long>(summary.rounds), summary.last.objective,
          summary.last.columns[0]);
    }

   private:
    double mu_, n_;
    Eigen::VectorXd w_, norms_, exact_;
  };
};

int main(int argc, char** argv) {
  schmp::Job job(argc, argv, "usage: mpirun -np N ridge [--rows R] [--features P] [--mu MU]");
  return job.run<Ridge>({FLAGS_rows, FLAGS_features, FLAGS_mu});
}
