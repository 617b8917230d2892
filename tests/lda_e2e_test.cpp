// schmp-lda end to end under mpirun: on the bundled State of the Union subset, every rank count
// raises the log-likelihood to the level of a long single-process run, keeps the counts consistent
// (the program checks them after every round and stops if they break), and writes the model files;
// text input and bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "e2e.hpp"
#include "test_files.hpp"

namespace schmp {
namespace {

using testing::mpirun;
using testing::objective_of;
using testing::Output;
using testing::read_text;
using testing::read_trace;
using testing::run;

const std::string kCorpus = std::string(SCHMP_SOURCE_DIR) + "/data/sotu/docword.txt";
const std::string kVocabulary = std::string(SCHMP_SOURCE_DIR) + "/data/sotu/vocab.txt";
constexpr double kTokens = 82951;  // data/sotu: 60 documents, 6,391 words

double log_likelihood_of(const Output& out) {
  std::smatch match;
  if (!std::regex_search(out.text, match, std::regex("log-likelihood per token ([-+0-9.eE]+)"))) return NAN;
  return std::stod(match[1]);
}

class LdaRanks : public ::testing::TestWithParam<int> {};

TEST_P(LdaRanks, LogLikelihoodRisesToTheLongRunLevel) {
  testing::ScratchDir dir;
  const std::string prefix = dir.file("model");
  const Output out = run(mpirun(GetParam()) + SCHMP_LDA_BIN + " --data " + kCorpus + " --vocab " +
                         kVocabulary + " --topics 10 --iterations 60 --progress_seconds 0 --trace " +
                         dir.file("trace.csv") + " --output " + prefix);
  ASSERT_EQ(out.status, 0) << out.text;
  // A 400-iteration single-process run levels off at -8.68 per token; 60 iterations come within 1.2%.
  EXPECT_GT(log_likelihood_of(out), -8.78) << out.text;
  const auto rows = read_trace(dir.file("trace.csv")).rows;
  ASSERT_EQ(rows.size(), 61u);
  EXPECT_GT(rows[10][2], rows[0][2] + 2) << "the first iterations should climb fast";
  EXPECT_GT(rows[60][2], rows[10][2]);

  // The word-topic counts hold every token once; each document's proportions sum to one.
  std::istringstream counts(read_text(prefix + ".word_topic"));
  double total = 0;
  int lines = 0;
  for (std::string line; std::getline(counts, line); ++lines) {
    std::istringstream values(line);
    for (double value; values >> value;) total += value;
  }
  EXPECT_EQ(lines, 6391);
  EXPECT_EQ(total, kTokens);
  std::istringstream documents(read_text(prefix + ".doc_topic"));
  int rows_read = 0;
  for (std::string line; std::getline(documents, line); ++rows_read) {
    std::istringstream values(line);
    int id = 0;
    values >> id;
    double sum = 0;
    for (double value; values >> value;) sum += value;
    EXPECT_NEAR(sum, 1.0, 1e-8) << "document " << id;
  }
  EXPECT_EQ(rows_read, 60);
  EXPECT_NE(read_text(prefix + ".topics").find("topic 9 ("), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Ranks, LdaRanks, ::testing::Values(1, 3, 5),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return "np" + std::to_string(info.param);
                         });

// One row per topic: its word distribution.
using Topics = std::vector<std::vector<double>>;

Topics read_truth(const std::string& path) {
  Topics topics;
  std::istringstream lines(read_text(path));
  for (std::string line; std::getline(lines, line);) {
    std::istringstream values(line);
    auto& row = topics.emplace_back();
    for (double value; values >> value;) row.push_back(value);
  }
  return topics;
}

// p(word | topic) = (n_kw + beta) / (n_k + W beta) from a .word_topic file (W lines of K counts).
Topics learned_topics(const std::string& path, double beta) {
  std::vector<std::vector<double>> counts;
  std::istringstream lines(read_text(path));
  for (std::string line; std::getline(lines, line);) {
    std::istringstream values(line);
    auto& row = counts.emplace_back();
    for (double value; values >> value;) row.push_back(value);
  }
  const std::size_t words = counts.size();
  const std::size_t topics = counts.front().size();
  Topics learned(topics, std::vector<double>(words));
  for (std::size_t k = 0; k < topics; ++k) {
    double total = 0;
    for (std::size_t w = 0; w < words; ++w) total += counts[w][k];
    for (std::size_t w = 0; w < words; ++w) learned[k][w] = (counts[w][k] + beta) / (total + beta * words);
  }
  return learned;
}

// The largest total-variation distance between a true topic and its learned one, under the best
// one-to-one matching (every permutation: K is small).
double worst_matched_distance(const Topics& truth, const Topics& learned) {
  std::vector<std::size_t> match(truth.size());
  std::iota(match.begin(), match.end(), 0);
  double best = INFINITY;
  do {
    double worst = 0;
    for (std::size_t k = 0; k < truth.size(); ++k) {
      double distance = 0;
      for (std::size_t w = 0; w < truth[k].size(); ++w)
        distance += std::abs(truth[k][w] - learned[match[k]][w]);
      worst = std::max(worst, distance / 2);
    }
    best = std::min(best, worst);
  } while (std::next_permutation(match.begin(), match.end()));
  return best;
}

TEST(LdaEndToEnd, RecoversTheTopicsOfAKnownModel) {
  testing::ScratchDir dir;
  const std::string corpus = dir.file("generated.txt");
  const Output made = run(std::string(SCHMP_GENERATE_BIN) + " lda --documents 500 --words 100 --topics 5" +
                          " --document_length 100 --alpha 0.1 --beta 0.05 --seed 3 --out " + corpus);
  ASSERT_EQ(made.status, 0) << made.text;
  const Topics truth = read_truth(corpus + ".truth");
  const std::vector<std::pair<int, std::string>> runs{
      {1, "sparse"}, {3, "sparse"}, {5, "sparse"}, {3, "exact"}};
  for (const auto& [ranks, sampler] : runs) {
    const Output out =
        run(mpirun(ranks) + SCHMP_LDA_BIN + " --data " + corpus + " --sampler " + sampler +
            " --topics 5 --alpha 0.1 --beta 0.05 --iterations 100 --progress_seconds 0 --output " +
            dir.file("model"));
    ASSERT_EQ(out.status, 0) << out.text;
    // Measured: about 0.02 at every rank count; the random starting topics are 0.73 away.
    EXPECT_LT(worst_matched_distance(truth, learned_topics(dir.file("model.word_topic"), 0.05)), 0.1)
        << "np " << ranks << ", " << sampler << " sampler";
  }
}

TEST(LdaEndToEnd, SameSeedSameRanksSameRun) {
  const std::string command = mpirun(3) + SCHMP_LDA_BIN + " --data " + kCorpus +
                              " --topics 5 --iterations 5 --progress_seconds 0 --seed 4";
  const Output a = run(command);
  const Output b = run(command);
  ASSERT_EQ(a.status, 0) << a.text;
  EXPECT_EQ(log_likelihood_of(a), log_likelihood_of(b));
}

TEST(LdaEndToEnd, ReadsMalletStyleText) {
  testing::ScratchDir dir;
  std::string text;
  for (int d = 0; d < 40; ++d) {
    text += "doc" + std::to_string(d) + " x";
    for (int t = 0; t < 30; ++t)
      text += (d % 2 == 0) ? (t % 3 == 0 ? " apple" : " pear") : (t % 2 ? " car" : " road");
    text += "\n";
  }
  const Output out = run(mpirun(2) + SCHMP_LDA_BIN + " --text " + dir.write("docs.txt", text) +
                         " --topics 2 --iterations 30 --progress_seconds 0 --output " + dir.file("m"));
  ASSERT_EQ(out.status, 0) << out.text;
  // Two topics separate the fruit documents from the road ones: each topic's top words are one kind.
  const std::string topics = read_text(dir.file("m.topics"));
  const bool fruit_first = topics.find("topic 0 (600 tokens): pear") != std::string::npos;
  const bool road_first = topics.find("topic 0 (600 tokens): car") != std::string::npos ||
                          topics.find("topic 0 (600 tokens): road") != std::string::npos;
  EXPECT_TRUE(fruit_first || road_first) << topics;
}

class LdaBadInput : public ::testing::TestWithParam<testing::BadInput> {};

TEST_P(LdaBadInput, StopsEveryRankWithOneLine) {
  testing::ScratchDir dir;
  const std::string data = dir.write("docword.txt", GetParam().content);
  for (int ranks : {1, 3}) {
    const Output out = run(mpirun(ranks) + SCHMP_LDA_BIN + " --data " + data +
                           " --topics 3 --iterations 2 --progress_seconds 0 " + GetParam().flags);
    testing::expect_clean_failure(out, "schmp-lda: error: " + data + GetParam().message);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, LdaBadInput,
    ::testing::Values(testing::BadInput{"word_beyond_w", "2\n3\n2\n1 1 2\n2 4 1\n", "",
                                        ":5: word id 4 beyond the 3 the header declares"},
                      testing::BadInput{"zero_count", "2\n3\n2\n1 1 0\n2 2 1\n", "", ":4: count 0"},
                      testing::BadInput{"negative_count", "2\n3\n2\n1 1 -1\n2 2 1\n", "",
                                        ":4: negative count -1"},
                      testing::BadInput{"header_disagrees", "2\n3\n3\n1 1 2\n2 2 1\n", "",
                                        ": the header declares 3 entries (NNZ) but the file holds 2"},
                      testing::BadInput{"out_of_order", "2\n3\n2\n2 1 2\n1 2 1\n", "",
                                        ":5: document 1 after document 2: documents must come in order"}),
    testing::bad_input_name);

}  // namespace
}  // namespace schmp
