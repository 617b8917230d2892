// A first schmp program: least squares, min_w 1/2 ||y - X w||^2, by scheduled coordinate descent. Each
// worker makes its own rows of X and y and keeps the residual r = y - X w; the coordinator owns w.
//   mpirun -np 3 first
#include <cstdio>
#include <numeric>
#include <random>
#include <schmp/schmp.hpp>

using Vector = std::vector<double>;
double dot(const Vector& a, const Vector& b) { return std::inner_product(a.begin(), a.end(), b.begin(), 0.); }

struct LeastSquares {
  using Config = int;  // main() hands it the number of features

  struct Worker {            // one per worker rank: its own 500 rows
    std::vector<Vector> x;   // X, column by column
    Vector r = Vector(500);  // y - X w, with y = X w* + noise, w*_j = j, and w = 0 at first
    Worker(int features, const schmp::WorkerContext& context) : x(features, Vector(500)) {
      std::mt19937_64 random(context.seed * 1000 + context.index);
      std::normal_distribution<double> normal;
      for (std::size_t i = 0; i < r.size(); ++i)
        for (int j = 0; j < features; ++j) r[i] += j * (x[j][i] = normal(random)) + 0.03 * normal(random);
    }
    std::size_t num_params() const { return x.size(); }
    Vector update(const schmp::Schedule& block) {  // summed over the workers: x_j.r and x_j.x_j
      Vector sums;
      for (schmp::ParamIndex j : block.params) sums.insert(sums.end(), {dot(x[j], r), dot(x[j], x[j])});
      return sums;
    }
    void apply(const schmp::Deltas& moved) {  // how far each scheduled w_j moved
      for (std::size_t k = 0; k < moved.params.size(); ++k)
        for (std::size_t i = 0; i < r.size(); ++i) r[i] -= moved.deltas[k] * x[moved.params[k]][i];
    }
    double evaluate() const { return dot(r, r); }  // summed over the workers: ||r||^2
  };

  struct Coordinator {  // one per job: owns w
    Vector w;
    Coordinator(int, std::size_t num_params) : w(num_params) {}
    schmp::Deltas aggregate(const schmp::Schedule& block, const Vector& sums, schmp::Priorities& priorities) {
      schmp::Deltas moved{block.params, {}};
      for (std::size_t k = 0; k < block.params.size(); ++k) {
        moved.deltas.push_back(sums[2 * k] / sums[2 * k + 1]);  // to the minimum along w_j
        w[block.params[k]] += moved.deltas[k];
        priorities.set(block.params[k], moved.deltas[k]);  // what still moves is picked more often
      }
      return moved;
    }
    double report(double rr) const { return rr / 2; }  // the objective: the run stops when it stops falling
    void finish(const schmp::Summary& summary) const {
      std::printf("first: %s; w =", summary.stopped_by.c_str());
      for (double wj : w) std::printf(" %.3f", wj);
      std::printf("\n");
    }
  };
};

int main(int argc, char** argv) {
  return schmp::Job(argc, argv, "usage: mpirun -np N first").run<LeastSquares>(8);
}
