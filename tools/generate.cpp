// schmp-generate: seeded synthetic datasets for tests and benchmarks.
//
//   schmp-generate lasso --rows 10000 --cols 50000 --density 0.01 --support 500 --noise 0.1 --seed 1 --out F
//   schmp-generate logreg --rows 100000 --cols 50000 --density 0.0008 --support 500 --seed 1 --out F
//
// Both draw a sparse X with about cols * density nonzeros per row at uniformly random columns and a
// true coefficient vector with `support` nonzeros N(0, 1) at random columns.
// lasso: values N(0, 1); labels y = X beta + noise * N(0, 1).
// logreg: binary features (value 1); labels +1 with probability 1 / (1 + exp(-x . beta)), else -1.
// With --correlation c > 0 (both): dense rows of N(0, 1) values, each column c times the one before plus
// sqrt(1 - c^2) N(0, 1): neighbouring columns have correlation c, as in spectra.
// Written as LIBSVM (1-based), with the true coefficients beside it in OUT.truth ('index value' per
// line). The same seed gives the same bytes.
//
//   schmp-generate mf --users 100000 --items 20000 --rank 10 --ratings 5000000 --test_ratings 500000
//                     --noise 0.5 --zipf 0.8 --seed 1 --out F
//
// mf: true factors with entries N(0, rank^-1/2) (so that w.h has variance about 1), ratings
// r = w_u.h_j + noise * N(0, 1) for distinct (u, j) pairs: each user rates about (ratings +
// test_ratings) / users items, drawn with probability proportional to 1 / (1 + j)^zipf (0: uniformly).
// Each pair goes to the test file (OUT.test) with probability test_ratings / (ratings + test_ratings).
// Written as 'user item rating' lines, 0-based.
//
//   schmp-generate lda --documents 500 --words 100 --topics 5 --document_length 100 --alpha 0.1
//                      --alpha_decay 1 --beta 0.05 --seed 1 --out F
//
// lda: documents drawn from the LDA model itself: topic-word distributions phi_k ~ Dirichlet(beta),
// per document theta_d ~ Dirichlet(alpha_0 .. alpha_K-1) with alpha_k = alpha * alpha_decay^k (1: the
// same for every topic) and document_length tokens, each topic z ~ theta_d, word
// w ~ phi_z. Written as UCI bag-of-words (F: D, W, NNZ, then 'doc word count', 1-based), with the true
// phi in F.truth (one line per topic, W probabilities).
#include <gflags/gflags.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <new>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "../runtime/command_line.hpp"
#include "schmp/flags.hpp"
#include "schmp/io.hpp"
#include "schmp/output.hpp"

// The largest ids the apps read: feature and word indices, users and items, documents (ids 1-based up
// to 2^32 - 2, or 0-based below 2^32 - 1), MF's rank and LDA's topic count:
// a larger size is refused before any work, rather than met as an overflow or a request for memory.
constexpr std::uint64_t kMostIds = 4294967294;
constexpr std::uint64_t kMostRank = 10000;
constexpr std::uint64_t kMostTopics = 100000;

SCHMP_FLAG(uint64, rows, 1000, schmp::at_least(1), "Number of rows (examples)");
SCHMP_FLAG(uint64, cols, 5000, schmp::between(1, kMostIds), "Number of columns (features)");
SCHMP_FLAG(double, density, 0.01, schmp::above_up_to(0, 1), "Fraction of nonzero entries in X");
SCHMP_FLAG(uint64, support, 50, schmp::any(), "Nonzero true coefficients");
SCHMP_FLAG(double, correlation, 0, schmp::Rule("in [0, 1)", [](double c) { return c >= 0 && c < 1; }),
           "lasso, logreg: when above 0, dense rows of N(0, 1) values whose neighbouring columns have "
           "this correlation (as in spectra); --density is then unused");
SCHMP_FLAG(double, noise, 0.1, schmp::any(), "Standard deviation of the label noise");
SCHMP_FLAG(uint64, seed, 1, schmp::any(), "Random seed");
SCHMP_FLAG(string, out, "", schmp::any(), "Output file (LIBSVM)");
SCHMP_FLAG(uint64, users, 1000, schmp::between(1, kMostIds + 1), "mf: number of users");
SCHMP_FLAG(uint64, items, 500, schmp::between(1, kMostIds + 1), "mf: number of items");
SCHMP_FLAG(uint64, rank, 5, schmp::between(1, kMostRank), "mf: rank of the true factors");
SCHMP_FLAG(uint64, ratings, 100000, schmp::any(), "mf: expected number of training ratings");
SCHMP_FLAG(uint64, test_ratings, 10000, schmp::any(), "mf: expected number of test ratings");
SCHMP_FLAG(double, zipf, 0, schmp::at_least(0), "mf: item popularity exponent (0: uniform)");
SCHMP_FLAG(uint64, documents, 500, schmp::between(1, kMostIds), "lda: number of documents");
SCHMP_FLAG(uint64, words, 100, schmp::between(1, kMostIds), "lda: vocabulary size W");
SCHMP_FLAG(uint64, topics, 5, schmp::between(1, kMostTopics), "lda: number of topics K");
SCHMP_FLAG(uint64, document_length, 100, schmp::between(1, kMostIds), "lda: tokens per document");
SCHMP_FLAG(double, alpha, 0.1, schmp::positive(),
           "lda: Dirichlet prior of each document's topic proportions, per topic");
SCHMP_FLAG(double, alpha_decay, 1.0, schmp::between(1e-3, 1),
           "lda: alpha_k = alpha * alpha_decay^k: below 1, some topics are far more common than others");
SCHMP_FLAG(double, beta, 0.05, schmp::positive(),
           "lda: Dirichlet prior of each topic's word distribution, per word");

namespace {

enum class Kind { kLasso, kLogreg };

// Set by SIGINT or SIGTERM: generation stops at its next row, user or document, and the files being
// written are removed rather than left under their temporary names.
volatile std::sig_atomic_t stop_signal = 0;

// The first signal asks for a clean stop; a second one (Ctrl-C again) ends the process at once.
void note_signal(int signal) {
  stop_signal = signal;
  std::signal(signal, SIG_DFL);
}

void stop_if_asked() {
  if (stop_signal != 0) throw std::runtime_error("stopped by a signal");
}

// Writes the files together (write_files_atomically), each checked for a stop once written: a signal
// that came while one was written leaves neither.
void publish(std::vector<schmp::io::FileWriter> files) {
  for (auto& file : files) {
    file.second = [write = std::move(file.second)](std::ostream& out) {
      write(out);
      stop_if_asked();
    };
  }
  schmp::io::write_files_atomically(files);
}

// Refuses a setting that does not hold, by its message: the first such is the one line main() prints.
void require(bool holds, const std::string& message) {
  if (!holds) throw std::invalid_argument(message);
}

// Refuses sizes whose tables would not fit in the memory this process can have (the machine's, or its
// container's limit): past it, the system would kill the process part way (memory is promised before it
// is touched) rather than report a failed request.
void require_memory(double bytes) {
  const auto memory = static_cast<double>(schmp::io::memory_limit());
  if (!(memory > 0) || bytes <= memory) return;
  char message[128];
  std::snprintf(message, sizeof message,
                "these sizes need about %.3g GB, more than the %.3g GB this process can have", bytes / 1e9,
                memory / 1e9);
  throw std::invalid_argument(message);
}

// `count` distinct values of [0, size), sorted: drawn until that many are distinct. Past half of
// the range it draws the values to leave out instead, so that dense draws do not search for the last
// few values left.
std::vector<std::uint64_t> distinct_uniform(std::mt19937_64& random, std::uint64_t size,
                                            std::uint64_t count) {
  std::uniform_int_distribution<std::uint64_t> value(0, size - 1);
  const bool dense = count > size / 2;
  const std::uint64_t drawn_count = dense ? size - count : count;
  std::vector<std::uint64_t> drawn;
  while (drawn.size() < drawn_count) {
    drawn.push_back(value(random));
    if (drawn.size() == drawn_count) {
      std::sort(drawn.begin(), drawn.end());
      drawn.erase(std::unique(drawn.begin(), drawn.end()), drawn.end());
    }
  }
  if (!dense) return drawn;
  std::vector<std::uint64_t> kept;
  kept.reserve(count);
  auto left_out = drawn.begin();
  for (std::uint64_t v = 0; v < size; ++v) {
    if (left_out != drawn.end() && *left_out == v) {
      ++left_out;
    } else {
      kept.push_back(v);
    }
  }
  return kept;
}

// One row's columns: about cols * density distinct uniformly random columns (at least one), sorted.
std::vector<std::uint64_t> draw_columns(std::mt19937_64& random) {
  std::poisson_distribution<std::uint64_t> row_nonzeros(static_cast<double>(FLAGS_cols) * FLAGS_density);
  const std::uint64_t count =
      std::min<std::uint64_t>(FLAGS_cols, std::max<std::uint64_t>(1, row_nonzeros(random)));
  return distinct_uniform(random, FLAGS_cols, count);
}

int generate(Kind kind) {
  // The true coefficients and a shuffled order of the columns; rows are written as they are drawn.
  require(!FLAGS_out.empty(), "--out is required");
  require(FLAGS_support <= FLAGS_cols, "--support (" + std::to_string(FLAGS_support) +
                                           ") must not exceed --cols (" + std::to_string(FLAGS_cols) + ")");
  require(kind != Kind::kLasso || std::isfinite(FLAGS_noise), "--noise must be finite");
  // The true coefficients and the columns' order (16 bytes a column), and a row's columns as drawn, kept
  // and valued (24 bytes each of its about cols * density).
  const double columns = static_cast<double>(FLAGS_cols);
  require_memory(16.0 * columns + 24.0 * columns * (FLAGS_correlation > 0 ? 1.0 : FLAGS_density));
  schmp::io::check_writable(FLAGS_out);
  schmp::io::check_writable(FLAGS_out + ".truth");
  std::mt19937_64 random(FLAGS_seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);

  std::vector<double> beta(FLAGS_cols, 0.0);
  std::vector<std::uint64_t> order(FLAGS_cols);
  for (std::uint64_t j = 0; j < FLAGS_cols; ++j) order[j] = j;
  std::shuffle(order.begin(), order.end(), random);
  for (std::uint64_t k = 0; k < FLAGS_support; ++k) beta[order[k]] = normal(random);

  const bool correlated = FLAGS_correlation > 0;
  const double c = FLAGS_correlation, spread = std::sqrt(1 - c * c);
  std::vector<std::uint64_t> all_columns;
  if (correlated) {
    all_columns.resize(FLAGS_cols);
    std::iota(all_columns.begin(), all_columns.end(), std::uint64_t{0});
  }
  const auto write_rows = [&](std::ostream& out) {
    std::vector<double> values;
    char buffer[64];
    // A write that failed (a full disk) ends the rows: the failure is reported when the file closes.
    for (std::uint64_t i = 0; i < FLAGS_rows && out && stop_signal == 0; ++i) {
      const std::vector<std::uint64_t> cols = correlated ? all_columns : draw_columns(random);
      values.assign(cols.size(), 1.0);
      double fitted = 0;
      double previous = 0;
      for (std::size_t k = 0; k < cols.size(); ++k) {
        if (correlated) {
          previous = k == 0 ? normal(random) : c * previous + spread * normal(random);
          std::snprintf(buffer, sizeof buffer, "%.6g", previous);
          values[k] = std::stod(buffer);
        } else if (kind == Kind::kLasso) {
          // Round to the precision written, so that the file's y is exactly X beta + noise.
          std::snprintf(buffer, sizeof buffer, "%.6g", normal(random));
          values[k] = std::stod(buffer);
        }
        fitted += values[k] * beta[cols[k]];
      }
      if (kind == Kind::kLasso) {
        std::snprintf(buffer, sizeof buffer, "%.10g", fitted + FLAGS_noise * normal(random));
      } else {
        std::snprintf(buffer, sizeof buffer, "%+d", uniform(random) < 1 / (1 + std::exp(-fitted)) ? 1 : -1);
      }
      out << buffer;
      for (std::size_t k = 0; k < cols.size(); ++k) {
        std::snprintf(buffer, sizeof buffer, " %llu:%.6g", static_cast<unsigned long long>(cols[k] + 1),
                      values[k]);
        out << buffer;
      }
      out << '\n';
    }
  };
  const auto write_truth = [&](std::ostream& out) {
    char buffer[64];
    for (std::uint64_t j = 0; j < FLAGS_cols; ++j) {
      if (beta[j] == 0) continue;
      std::snprintf(buffer, sizeof buffer, "%llu %.17g\n", static_cast<unsigned long long>(j + 1), beta[j]);
      out << buffer;
    }
  };
  publish({{FLAGS_out, write_rows}, {FLAGS_out + ".truth", write_truth}});
  return 0;
}

int generate_ratings() {
  require(!FLAGS_out.empty(), "--out is required");
  // A user rates at most half of the items (whole ones), so that distinct items are quick to draw.
  const double wanted = static_cast<double>(FLAGS_ratings) + static_cast<double>(FLAGS_test_ratings);
  const double most_ratings = static_cast<double>(FLAGS_users) * static_cast<double>(FLAGS_items / 2);
  require(wanted > 0, "--ratings and --test_ratings are both 0");
  require(FLAGS_items >= 2, "--items must be at least 2: a user rates at most half of them");
  if (wanted > most_ratings) {
    char too_many[200];
    std::snprintf(too_many, sizeof too_many,
                  "--ratings and --test_ratings (%llu and %llu) exceed the %.0f that the users can give, at "
                  "most half of the items each",
                  static_cast<unsigned long long>(FLAGS_ratings),
                  static_cast<unsigned long long>(FLAGS_test_ratings), most_ratings);
    throw std::invalid_argument(too_many);
  }
  require(std::isfinite(FLAGS_noise), "--noise must be finite");
  // The true factors, the items' popularity, and the ratings' text (about 24 bytes each) until written.
  const double users_and_items = static_cast<double>(FLAGS_users) + static_cast<double>(FLAGS_items);
  require_memory(8.0 * users_and_items * static_cast<double>(FLAGS_rank) +
                 16.0 * static_cast<double>(FLAGS_items) + 24.0 * wanted);
  // Both files or neither: the second's directory is the first's, but it may be unwritable alone.
  schmp::io::check_writable(FLAGS_out);
  schmp::io::check_writable(FLAGS_out + ".test");
  std::mt19937_64 random(FLAGS_seed);
  const std::size_t rank = FLAGS_rank;
  std::normal_distribution<double> factor(0.0, 1.0 / std::sqrt(std::sqrt(static_cast<double>(rank))));
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::vector<double> users(FLAGS_users * rank);
  std::vector<double> items(FLAGS_items * rank);
  for (double& value : users) value = factor(random);
  for (double& value : items) value = factor(random);
  std::vector<double> popularity(FLAGS_items);
  for (std::uint64_t j = 0; j < FLAGS_items; ++j)
    popularity[j] = std::pow(1.0 + static_cast<double>(j), -FLAGS_zipf);
  std::discrete_distribution<std::uint64_t> pick_item(popularity.begin(), popularity.end());
  std::poisson_distribution<std::uint64_t> per_user(static_cast<double>(wanted) /
                                                    static_cast<double>(FLAGS_users));
  const double test_share = static_cast<double>(FLAGS_test_ratings) / static_cast<double>(wanted);

  std::string train;
  std::string test;
  char buffer[96];
  std::vector<std::uint64_t> rated;
  for (std::uint64_t u = 0; u < FLAGS_users; ++u) {
    stop_if_asked();
    const std::uint64_t count = std::min<std::uint64_t>(per_user(random), FLAGS_items / 2);
    rated.clear();
    // With steep popularity the last distinct items could take almost forever to draw: after a bounded
    // number of draws, the most popular items not yet rated fill the user's count.
    const std::uint64_t most_draws = 64 * count + 1024;
    std::uint64_t draws = 0;
    while (rated.size() < count && draws < most_draws) {
      rated.push_back(pick_item(random));
      ++draws;
      if (rated.size() == count || draws == most_draws) {
        std::sort(rated.begin(), rated.end());
        rated.erase(std::unique(rated.begin(), rated.end()), rated.end());
      }
    }
    for (std::uint64_t j = 0; rated.size() < count; ++j) {
      if (!std::binary_search(rated.begin(), rated.end(), j))
        rated.insert(std::upper_bound(rated.begin(), rated.end(), j), j);
    }
    for (const std::uint64_t j : rated) {
      double value = FLAGS_noise * normal(random);
      for (std::size_t d = 0; d < rank; ++d) value += users[u * rank + d] * items[j * rank + d];
      std::snprintf(buffer, sizeof buffer, "%llu %llu %.6g\n", static_cast<unsigned long long>(u),
                    static_cast<unsigned long long>(j), value);
      (uniform(random) < test_share ? test : train) += buffer;
    }
  }
  publish({{FLAGS_out, [&](std::ostream& out) { out << train; }},
           {FLAGS_out + ".test", [&](std::ostream& out) { out << test; }}});
  return 0;
}

// A draw from the Dirichlet(concentration_0 * decay^k) over `size` outcomes k.
std::vector<double> dirichlet(std::mt19937_64& random, std::size_t size, double concentration,
                              double decay = 1) {
  // One distribution throughout: it keeps normal draws between calls, so a fresh one per outcome would
  // change the stream (and every data set generated before) even with decay 1.
  std::gamma_distribution<double> gamma(concentration, 1.0);
  std::vector<double> draw(size);
  double sum = 0;
  for (double& value : draw) {
    sum += value = gamma(random, std::gamma_distribution<double>::param_type(concentration, 1.0));
    concentration *= decay;
  }
  if (!(sum > 0)) {
    // Every gamma draw underflowed (a tiny concentration): the Dirichlet's limit, all mass on one
    // outcome drawn uniformly.
    std::fill(draw.begin(), draw.end(), 0.0);
    draw[std::uniform_int_distribution<std::size_t>(0, size - 1)(random)] = 1.0;
    return draw;
  }
  for (double& value : draw) value /= sum;
  return draw;
}

int generate_documents() {
  require(!FLAGS_out.empty(), "--out is required");
  // Each topic's word distribution (also as a sampler's table), the word counts of a document, and the
  // entries' text (about 16 bytes each) until written.
  const double words = static_cast<double>(FLAGS_words);
  const double entries_per_document = std::min(words, static_cast<double>(FLAGS_document_length));
  require_memory(24.0 * static_cast<double>(FLAGS_topics) * words + 8.0 * words +
                 16.0 * static_cast<double>(FLAGS_documents) * entries_per_document);
  schmp::io::check_writable(FLAGS_out);
  schmp::io::check_writable(FLAGS_out + ".truth");
  std::mt19937_64 random(FLAGS_seed);
  std::vector<std::discrete_distribution<std::uint64_t>> topic_words;
  std::vector<std::vector<double>> phi;
  for (std::uint64_t k = 0; k < FLAGS_topics; ++k) {
    phi.push_back(dirichlet(random, FLAGS_words, FLAGS_beta));
    topic_words.emplace_back(phi.back().begin(), phi.back().end());
  }
  std::string body;
  std::uint64_t entries = 0;
  std::vector<std::uint64_t> counts(FLAGS_words);
  for (std::uint64_t d = 0; d < FLAGS_documents; ++d) {
    stop_if_asked();
    const std::vector<double> theta = dirichlet(random, FLAGS_topics, FLAGS_alpha, FLAGS_alpha_decay);
    std::discrete_distribution<std::uint64_t> topic(theta.begin(), theta.end());
    std::fill(counts.begin(), counts.end(), 0);
    for (std::uint64_t t = 0; t < FLAGS_document_length; ++t) ++counts[topic_words[topic(random)](random)];
    for (std::uint64_t w = 0; w < FLAGS_words; ++w) {
      if (counts[w] == 0) continue;
      body += std::to_string(d + 1) + " " + std::to_string(w + 1) + " " + std::to_string(counts[w]) + "\n";
      ++entries;
    }
  }
  const auto write_documents = [&](std::ostream& out) {
    out << FLAGS_documents << '\n' << FLAGS_words << '\n' << entries << '\n' << body;
  };
  const auto write_truth = [&](std::ostream& out) {
    out.precision(17);
    for (const auto& row : phi) {
      for (std::size_t w = 0; w < row.size(); ++w) out << (w ? " " : "") << row[w];
      out << '\n';
    }
  };
  publish({{FLAGS_out, write_documents}, {FLAGS_out + ".truth", write_truth}});
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  gflags::SetUsageMessage(
      "usage: schmp-generate lasso|logreg --rows N --cols P --density D --support K --out FILE\n"
      "       schmp-generate mf --users U --items I --rank K --ratings N --test_ratings T --noise S --out "
      "FILE\n"
      "       schmp-generate lda --documents D --words W --topics K --document_length N --out FILE");
  std::string kind;
  try {
    // One plain argument: the kind of data.
    const schmp::detail::CommandLine command_line(argc, argv, 1, 1);
    kind = argc > 1 ? argv[1] : "";
    // Caught only from here: while the flags are read (a flag file can be a pipe), a signal stops it.
    std::signal(SIGINT, note_signal);
    std::signal(SIGTERM, note_signal);
    if (kind == "lasso") return generate(Kind::kLasso);
    if (kind == "logreg") return generate(Kind::kLogreg);
    if (kind == "mf") return generate_ratings();
    if (kind == "lda") return generate_documents();
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "schmp-generate: error: not enough memory for data of these sizes\n");
    return 1;
  } catch (const std::exception& error) {
    if (stop_signal != 0) {
      std::fprintf(stderr, "schmp-generate: error: %s: %s left unwritten\n",
                   stop_signal == SIGINT ? "interrupted" : "terminated", FLAGS_out.c_str());
      return 128 + stop_signal;
    }
    std::fprintf(stderr, "schmp-generate: error: %s\n", error.what());
    return 1;
  }
  std::fprintf(stderr, "schmp-generate: error: unknown dataset kind '%s' (known: lasso, logreg, mf, lda)\n",
               kind.c_str());
  return 1;
}
