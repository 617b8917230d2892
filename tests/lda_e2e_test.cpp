// schmp-lda end to end under mpirun: on the bundled State of the Union subset, every rank count
// raises the log-likelihood to the level of a long single-process run, keeps the counts consistent
// (the program checks them at every evaluation and stops if they break), and writes the model files;
// text input and bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numeric>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "e2e.hpp"
#include "test_files.hpp"

namespace schmp {
namespace {

using testing::mpirun;
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
  testing::expect_time_split(out);
  const auto rows = read_trace(dir.file("trace.csv")).rows;
  ASSERT_EQ(rows.size(), 61u);
  EXPECT_GT(rows[10][2], rows[0][2] + 2) << "the first iterations should climb fast";
  EXPECT_GT(rows[60][2], rows[10][2]);

  // The word-topic counts hold every token once; each document's proportions sum to one.
  std::istringstream counts(read_text(prefix + ".word_topic"));
  double total = 0;
  int lines = 0;
  for (std::string line; std::getline(counts, line);) {
    if (line.starts_with("#")) continue;
    ++lines;
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
    EXPECT_EQ(id, rows_read + 1) << "documents in id order, whichever worker held them";
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
    if (line.starts_with("#")) continue;
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
                          " --document_length 200 --alpha 0.1 --beta 0.05 --seed 3 --out " + corpus);
  ASSERT_EQ(made.status, 0) << made.text;
  const Topics truth = read_truth(corpus + ".truth");
  const std::vector<std::pair<int, std::string>> runs{{1, "sparse"}, {3, "sparse"}, {5, "sparse"},
                                                      {3, "exact"},  {1, "mh"},     {3, "mh"}};
  for (const auto& [ranks, sampler] : runs) {
    const Output out =
        run(mpirun(ranks) + SCHMP_LDA_BIN + " --data " + corpus + " --sampler " + sampler +
            " --topics 5 --alpha 0.1 --beta 0.05 --iterations 100 --progress_seconds 0 --output " +
            dir.file("model"));
    ASSERT_EQ(out.status, 0) << out.text;
    // Measured: about 0.02 at every rank count and sampler; the random starting topics are 0.73 away.
    // Documents of 200 tokens: with 100, about one run in six (any sampler, rank count or seed) sticks
    // in a local mode where two true topics share one learned topic.
    EXPECT_LT(worst_matched_distance(truth, learned_topics(dir.file("model.word_topic"), 0.05)), 0.1)
        << "np " << ranks << ", " << sampler << " sampler";
  }
}

// Learned priors (--optimize_interval). A corpus generated with alpha_k = 1, 1/2, 1/4 and 1/8: some topics
// far more common than others.
// Every such corpus has the same topics (the generator draws them first from the seed).
std::string generate_uneven_corpus(const testing::ScratchDir& dir, int documents, int length) {
  const std::string corpus = dir.file("uneven" + std::to_string(length) + ".txt");
  const Output made = run(std::string(SCHMP_GENERATE_BIN) + " lda --documents " + std::to_string(documents) +
                          " --words 200 --topics 4 --document_length " + std::to_string(length) +
                          " --alpha 1 --alpha_decay 0.5 --beta 0.05 --seed 5 --out " + corpus);
  EXPECT_EQ(made.status, 0) << made.text;
  return corpus;
}

// The model file's alpha_k, largest first (topics have no names to match them by).
std::vector<double> learned_alpha(const std::string& word_topic) {
  std::istringstream lines(read_text(word_topic));
  std::vector<double> alpha;
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with("# alpha by topic:")) continue;
    std::istringstream values(line.substr(17));
    for (double value; values >> value;) alpha.push_back(value);
  }
  std::sort(alpha.rbegin(), alpha.rend());
  return alpha;
}

class LdaPriorRanks : public ::testing::TestWithParam<int> {};

// From a symmetric start the priors come back, at every rank count; the model files carry them, infer
// reads them, and the trace shows the priors each iteration sampled with.
TEST_P(LdaPriorRanks, LearnsTheAlphaACorpusWasGeneratedWith) {
  testing::ScratchDir dir;
  const std::string corpus = generate_uneven_corpus(dir, 1000, 300);
  const std::string prefix = dir.file("model");
  const Output out =
      run(mpirun(GetParam()) + SCHMP_LDA_BIN + " --data " + corpus +
          " --topics 4 --alpha 0.5 --iterations 150 --optimize_interval 10 --optimize_burn_in 30" +
          " --progress_seconds 0 --trace " + dir.file("trace.csv") + " --output " + prefix);
  ASSERT_EQ(out.status, 0) << out.text;
  EXPECT_NE(out.text.find("learned priors: alpha_k from "), std::string::npos) << out.text;
  // Measured within 5% at 1, 3 and 5 ranks and seeds 1 to 3 (1,000 documents leave a few percent of
  // sampling error in any estimate).
  const std::vector<double> truth{1, 0.5, 0.25, 0.125};
  const std::vector<double> alpha = learned_alpha(prefix + ".word_topic");
  ASSERT_EQ(alpha.size(), 4u) << read_text(prefix + ".word_topic").substr(0, 300);
  for (std::size_t k = 0; k < 4; ++k) EXPECT_NEAR(alpha[k], truth[k], 0.1 * truth[k]) << "alpha_" << k;

  // Columns alpha_sum and beta: the start's until the first learning, after iteration 40.
  const testing::Trace trace = read_trace(dir.file("trace.csv"));
  ASSERT_NE(trace.header.find("moved,alpha_sum,beta,"), std::string::npos) << trace.header;
  ASSERT_EQ(trace.rows.size(), 151u);
  for (std::size_t row = 1; row <= 40; ++row) {
    EXPECT_EQ(trace.rows[row][6], 2.0) << "iteration " << row;
    EXPECT_EQ(trace.rows[row][7], 0.01) << "iteration " << row;
  }
  EXPECT_NEAR(trace.rows[150][6], 1.875, 0.15);
  EXPECT_NE(trace.rows[41][7], 0.01);

  // Each document's proportions (n_dk + alpha_k) / (n_d + sum alpha) sum to one; infer reads the model.
  std::istringstream documents(read_text(prefix + ".doc_topic"));
  for (std::string line; std::getline(documents, line);) {
    std::istringstream values(line);
    int id = 0;
    values >> id;
    double sum = 0;
    for (double value; values >> value;) sum += value;
    EXPECT_NEAR(sum, 1.0, 1e-8) << "document " << id;
  }
  const Output inferred = run(std::string(SCHMP_LDA_BIN) + " infer --model " + prefix + " --data " + corpus +
                              " --iterations 20 --output " + dir.file("inferred"));
  EXPECT_EQ(inferred.status, 0) << inferred.text;
  EXPECT_NE(read_text(prefix + ".topics").find("topic 3 (alpha "), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Ranks, LdaPriorRanks, ::testing::Values(1, 3, 5),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return "np" + std::to_string(info.param);
                         });

// Coherence, computed here by brute force from the model file and the documents' words: each topic's
// top words (most tokens first, ties to the lower id, none without a token), then UMass over the
// training documents and NPMI over the reference ones, pair by pair.
struct Corpus {
  std::vector<std::set<int>> documents;  // each one's words, 0-based
  std::string text;                      // its docword.txt
};

Corpus read_corpus(const std::string& path) {
  Corpus corpus{{}, read_text(path)};
  std::istringstream lines(corpus.text);
  int documents = 0, words = 0, entries = 0;
  lines >> documents >> words >> entries;
  corpus.documents.resize(static_cast<std::size_t>(documents));
  for (int document, word, count; lines >> document >> word >> count;)
    corpus.documents[static_cast<std::size_t>(document - 1)].insert(word - 1);
  return corpus;
}

struct Scores {
  double umass = 0;
  double npmi = 0;
};

std::vector<Scores> brute_force_coherence(const std::string& word_topic, const Corpus& training,
                                          const Corpus& reference, std::size_t size) {
  std::vector<std::vector<double>> counts;  // by word, then topic
  std::istringstream lines(read_text(word_topic));
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("#")) continue;
    std::istringstream values(line);
    auto& row = counts.emplace_back();
    for (double value; values >> value;) row.push_back(value);
  }
  const auto holding = [](const Corpus& corpus, const std::vector<int>& words) {
    double documents = 0;
    for (const std::set<int>& document : corpus.documents) {
      documents += std::all_of(words.begin(), words.end(), [&](int w) { return document.count(w) > 0; });
    }
    return documents;
  };
  const double n = static_cast<double>(std::count_if(reference.documents.begin(), reference.documents.end(),
                                                     [](const std::set<int>& d) { return !d.empty(); }));
  std::vector<Scores> scores;
  for (std::size_t k = 0; k < counts.front().size(); ++k) {
    std::vector<int> top;
    for (std::size_t w = 0; w < counts.size(); ++w) {
      if (counts[w][k] > 0) top.push_back(static_cast<int>(w));
    }
    std::stable_sort(top.begin(), top.end(), [&](int a, int b) { return counts[a][k] > counts[b][k]; });
    top.resize(std::min(top.size(), size));
    Scores topic;
    int pairs = 0;
    for (std::size_t i = 1; i < top.size(); ++i) {
      for (std::size_t j = 0; j < i; ++j) {
        topic.umass += std::log((holding(training, {top[i], top[j]}) + 1) / holding(training, {top[j]}));
        const double p_i = holding(reference, {top[i]}) / n, p_j = holding(reference, {top[j]}) / n;
        if (p_i == 0 || p_j == 0) continue;
        const double p_ij = holding(reference, {top[i], top[j]}) / n;
        topic.npmi += p_ij == 0 ? -1 : p_ij == 1 ? 1 : std::log(p_ij / (p_i * p_j)) / -std::log(p_ij);
        ++pairs;
      }
    }
    topic.npmi /= pairs;
    scores.push_back(topic);
  }
  return scores;
}

class LdaCoherenceRanks : public ::testing::TestWithParam<int> {};

TEST_P(LdaCoherenceRanks, ScoresAreTheBruteForceCounts) {
  testing::ScratchDir dir;
  const Corpus training = read_corpus(kCorpus);
  // A reference corpus of other documents: the training ones' odd words only, so that pairs differ.
  std::ostringstream odd;
  int entries = 0;
  for (std::size_t d = 0; d < training.documents.size(); ++d) {
    for (const int word : training.documents[d]) {
      if (word % 2 == 0) continue;
      odd << d + 1 << ' ' << word + 1 << " 1\n";
      ++entries;
    }
  }
  const std::string odd_file =
      dir.write("odd.txt", "60\n6391\n" + std::to_string(entries) + "\n" + odd.str());
  for (const bool own_reference : {false, true}) {
    const Output out =
        run(mpirun(GetParam()) + SCHMP_LDA_BIN + " --data " + kCorpus +
            " --topics 6 --top_words 7 --iterations 15 --eval_every 5 --progress_seconds 0 --trace " +
            dir.file("trace.csv") + " --output " + dir.file("m") +
            (own_reference ? " --coherence_corpus " + odd_file : ""));
    ASSERT_EQ(out.status, 0) << out.text;
    const std::vector<Scores> expected = brute_force_coherence(
        dir.file("m.word_topic"), training, own_reference ? read_corpus(odd_file) : training, 7);
    // Every topic once, best NPMI first, its scores the brute-force ones (printed to 6 digits).
    std::istringstream lines(read_text(dir.file("m.topics")));
    const std::regex pattern(R"(^topic (\d+) \(alpha [^,]+, \d+ tokens, umass ([^,]+), npmi ([^)]+)\):)");
    std::set<std::size_t> seen;
    double last_npmi = INFINITY, umass_sum = 0, npmi_sum = 0;
    int npmi_scored = 0;
    for (std::string line; std::getline(lines, line);) {
      if (line.starts_with("#")) continue;
      std::smatch match;
      ASSERT_TRUE(std::regex_search(line, match, pattern)) << line;
      const auto k = static_cast<std::size_t>(std::stoul(match[1]));
      const double umass = std::stod(match[2]), npmi = std::stod(match[3]);
      EXPECT_NEAR(umass, expected[k].umass, 1e-5 * std::abs(expected[k].umass) + 1e-9) << line;
      // A topic whose top words the reference lacks (all even here) has no pair to score: last.
      if (std::isnan(expected[k].npmi)) {
        EXPECT_TRUE(std::isnan(npmi)) << line;
        last_npmi = -INFINITY;
      } else {
        EXPECT_NEAR(npmi, expected[k].npmi, 1e-5 * std::abs(expected[k].npmi) + 1e-9) << line;
        EXPECT_LE(npmi, last_npmi) << "best topics first";
        last_npmi = npmi;
        npmi_sum += expected[k].npmi;
        ++npmi_scored;
      }
      umass_sum += expected[k].umass;
      seen.insert(k);
    }
    EXPECT_EQ(seen.size(), 6u);
    // The trace scores at every evaluation (--eval_every) with the topics' means; the last one is the
    // model's.
    const testing::Trace trace = read_trace(dir.file("trace.csv"));
    ASSERT_NE(trace.header.find("moved,umass,npmi,"), std::string::npos) << trace.header;
    ASSERT_EQ(trace.rows.size(), 4u);
    for (const auto& row : trace.rows) EXPECT_FALSE(std::isnan(row[6]) || std::isnan(row[7]));
    EXPECT_NEAR(trace.rows.back()[6], umass_sum / 6, 1e-9 * std::abs(umass_sum));
    EXPECT_NEAR(trace.rows.back()[7], npmi_sum / npmi_scored, 1e-9 + 1e-9 * std::abs(npmi_sum));
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, LdaCoherenceRanks, ::testing::Values(1, 3, 5),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return "np" + std::to_string(info.param);
                         });

TEST(LdaEndToEnd, SameSeedSameRanksSameRun) {
  const std::string command = mpirun(3) + SCHMP_LDA_BIN + " --data " + kCorpus +
                              " --topics 5 --iterations 5 --progress_seconds 0 --seed 4";
  const Output a = run(command);
  const Output b = run(command);
  ASSERT_EQ(a.status, 0) << a.text;
  EXPECT_EQ(log_likelihood_of(a), log_likelihood_of(b));
}

// A corpus that one host lacks (here: ranks started in a directory without it) is named as such, beside
// what the others see: its own "cannot open file" read as absurd on a host that has the file.
TEST(LdaEndToEnd, ACorpusMissingOnOneHostIsNamed) {
  testing::ScratchDir dir;
  std::filesystem::create_directories(dir.file("here"));
  std::filesystem::create_directories(dir.file("elsewhere"));
  std::filesystem::copy_file(kCorpus, dir.file("here/docword.txt"));
  const std::string lda = std::string(SCHMP_LDA_BIN) + " --data docword.txt --topics 5 --iterations 1 ";
  const Output out =
      run("timeout 300 " + std::string(SCHMP_MPIEXEC) +
          " --allow-run-as-root --oversubscribe --bind-to none -np 2 --wdir " + dir.file("here") + " " + lda +
          ": -np 1 --wdir " + dir.file("elsewhere") + " " + lda);
  const std::string size = std::to_string(std::filesystem::file_size(kCorpus));
  testing::expect_clean_failure(
      out, "schmp-lda: error: docword.txt: differs between the workers' hosts: 2 workers, on host ");
  EXPECT_NE(out.text.find(", see " + size + " bytes (sampled checksum "), std::string::npos) << out.text;
  EXPECT_NE(out.text.find("); worker 2 on host "), std::string::npos) << out.text;
  EXPECT_NE(
      out.text.find(" sees no readable file (cannot open file): every host must see the same files at this "
                    "path"),
      std::string::npos)
      << out.text;
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
  std::istringstream lines(topics);
  std::set<std::string> kinds;
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("#")) continue;
    const std::string words = line.substr(line.find("): ") + 3);
    if (words.starts_with("pear") || words.starts_with("apple")) {
      if (words.find("car") == std::string::npos && words.find("road") == std::string::npos)
        kinds.insert("fruit");
    } else if (words.find("pear") == std::string::npos && words.find("apple") == std::string::npos) {
      kinds.insert("road");
    }
  }
  EXPECT_EQ(kinds.size(), 2u) << topics;
}

// data/sotu cut in two: the first 50 addresses to train on, the last 10 held out (renumbered 1..10).
struct SplitCorpus {
  std::string train;
  std::string test;
  std::vector<std::vector<std::uint32_t>> test_documents;  // 0-based word ids in file order
  std::vector<double> train_word_counts;                   // n_w over the training documents
  double train_tokens = 0;
};

SplitCorpus split_sotu(const testing::ScratchDir& dir) {
  std::istringstream in(read_text(kCorpus));
  std::size_t documents = 0, words = 0, entries = 0;
  in >> documents >> words >> entries;
  SplitCorpus split;
  split.train_word_counts.assign(words, 0.0);
  split.test_documents.resize(10);
  std::string train_body, test_body;
  std::size_t train_entries = 0, test_entries = 0;
  for (std::size_t d, w, c; in >> d >> w >> c;) {
    if (d <= 50) {
      train_body += std::to_string(d) + " " + std::to_string(w) + " " + std::to_string(c) + "\n";
      ++train_entries;
      split.train_word_counts[w - 1] += static_cast<double>(c);
      split.train_tokens += static_cast<double>(c);
    } else {
      test_body += std::to_string(d - 50) + " " + std::to_string(w) + " " + std::to_string(c) + "\n";
      ++test_entries;
      split.test_documents[d - 51].insert(split.test_documents[d - 51].end(), c,
                                          static_cast<std::uint32_t>(w - 1));
    }
  }
  const std::string w = std::to_string(words);
  split.train = dir.write("train.txt", "50\n" + w + "\n" + std::to_string(train_entries) + "\n" + train_body);
  split.test = dir.write("test.txt", "10\n" + w + "\n" + std::to_string(test_entries) + "\n" + test_body);
  return split;
}

double perplexity_of(const Output& out) {
  std::smatch match;
  if (!std::regex_search(out.text, match, std::regex("held-out perplexity ([-+0-9.eE]+)"))) return NAN;
  return std::stod(match[1]);
}

// With one topic every document is the unigram model p(w) = (n_w + beta) / (N + W beta), whatever the
// sampler does: document completion scores the odd positions of each held-out document with it.
// Learned priors predict held-out documents better than the symmetric ones a run starts from: short
// ones most, whose first half says little of their topics, so that the prior weighs.
TEST(LdaPriors, LowerTheHeldOutPerplexity) {
  testing::ScratchDir dir;
  const std::string train = generate_uneven_corpus(dir, 1000, 300);
  // Held out: documents of 20 tokens, the last 200 of a corpus of the same topics (the first ones would
  // share the training documents' first proportions, drawn from the same stream).
  std::istringstream lines(read_text(generate_uneven_corpus(dir, 1200, 20)));
  std::string header[3];
  for (std::string& line : header) std::getline(lines, line);
  std::ostringstream test;
  int entries = 0;
  for (int document, word, count; lines >> document >> word >> count;) {
    if (document <= 1000) continue;
    test << document - 1000 << ' ' << word << ' ' << count << '\n';
    ++entries;
  }
  const std::string test_file =
      dir.write("test.txt", "200\n200\n" + std::to_string(entries) + "\n" + test.str());
  // Fixed priors; alpha_k and beta learned; alpha_k alone, beta kept at its start.
  const std::vector<std::string> settings{
      "", " --optimize_interval 10 --optimize_burn_in 30",
      " --optimize_interval 10 --optimize_burn_in 30 --optimize_beta=false"};
  std::vector<double> perplexity;
  for (const std::string& learning : settings) {
    const Output out = run(mpirun(2) + SCHMP_LDA_BIN + " --data " + train + " --test " + test_file +
                           " --topics 4 --iterations 150 --eval_every 50 --progress_seconds 0 --output " +
                           dir.file("m") + learning);
    ASSERT_EQ(out.status, 0) << out.text;
    perplexity.push_back(perplexity_of(out));
  }
  EXPECT_NE(read_text(dir.file("m.word_topic")).find(", beta 0.01\n# alpha by topic: "), std::string::npos);
  // Measured: 36.19 learned, 38.11 with alpha 0.1 and beta 0.01 (seed 2: 36.28 and 37.98).
  EXPECT_LT(perplexity[1], perplexity[0] - 1) << "fixed priors " << perplexity[0];
  EXPECT_LT(perplexity[2], perplexity[0] - 1) << "fixed priors " << perplexity[0];
}

TEST(LdaHeldOut, OneTopicPerplexityIsTheUnigramModels) {
  testing::ScratchDir dir;
  const SplitCorpus split = split_sotu(dir);
  const double beta = 0.01;
  double log_likelihood = 0, held_out = 0;
  for (const auto& words : split.test_documents) {
    for (std::size_t position = 1; position < words.size(); position += 2) {
      log_likelihood +=
          std::log((split.train_word_counts[words[position]] + beta) /
                   (split.train_tokens + beta * static_cast<double>(split.train_word_counts.size())));
      held_out += 1;
    }
  }
  const double expected = std::exp(-log_likelihood / held_out);
  for (int ranks : {1, 3}) {
    const Output trained =
        run(mpirun(ranks) + SCHMP_LDA_BIN + " --data " + split.train + " --test " + split.test +
            " --topics 1 --iterations 3 --progress_seconds 0 --output " + dir.file("one"));
    ASSERT_EQ(trained.status, 0) << trained.text;
    EXPECT_NEAR(perplexity_of(trained), expected, expected * 1e-9) << "np " << ranks;
  }
  const Output inferred =
      run(std::string(SCHMP_LDA_BIN) + " infer --model " + dir.file("one") + " --data " + split.test);
  ASSERT_EQ(inferred.status, 0) << inferred.text;
  EXPECT_NEAR(perplexity_of(inferred), expected, expected * 1e-9);

  // infer refuses a word listed twice for a document, as training does.
  const std::string twice = dir.write("twice.txt", "1\n2\n3\n1 1 1\n1 2 1\n1 1 4\n");
  testing::expect_clean_failure(
      run(std::string(SCHMP_LDA_BIN) + " infer --model " + dir.file("one") + " --data " + twice),
      "schmp-lda: error: " + twice + ":6: word 1 listed twice for document 1 (first on line 4)");
}

// With topics, the held-out perplexity in the trace (one sample of the fold-in) and infer's (averaged
// over samples) agree, fall below the unigram model's, and infer's proportions are distributions.
TEST(LdaHeldOut, TopicsPredictHeldOutWordsAndInferAgreesWithTraining) {
  testing::ScratchDir dir;
  const SplitCorpus split = split_sotu(dir);
  const Output unigram = run(mpirun(1) + SCHMP_LDA_BIN + " --data " + split.train + " --test " + split.test +
                             " --topics 1 --iterations 2 --progress_seconds 0");
  ASSERT_EQ(unigram.status, 0) << unigram.text;
  for (int ranks : {1, 3, 5}) {
    const std::string prefix = dir.file("model" + std::to_string(ranks));
    const Output trained =
        run(mpirun(ranks) + SCHMP_LDA_BIN + " --data " + split.train + " --test " + split.test +
            " --topics 20 --iterations 100 --eval_every 25 --progress_seconds 0" + " --trace " +
            dir.file("trace.csv") + " --output " + prefix);
    ASSERT_EQ(trained.status, 0) << trained.text;
    const auto rows = read_trace(dir.file("trace.csv")).rows;
    ASSERT_EQ(rows.size(), 5u) << "an evaluation every 25 iterations and at the start";
    EXPECT_EQ(rows[4][3], 100);
    EXPECT_TRUE(std::isnan(rows[0][6])) << "no perplexity before the first round";
    EXPECT_NEAR(rows[4][6], perplexity_of(trained), 1e-3) << "the trace's last perplexity is the one printed";
    EXPECT_GT(rows[4][4], 0) << "tokens per second";
    // Measured: unigram 5426; 20 topics about 4650 in training and 4640 from infer.
    EXPECT_LT(perplexity_of(trained), 0.9 * perplexity_of(unigram)) << "np " << ranks;
    const std::string proportions = dir.file("proportions" + std::to_string(ranks));
    const Output inferred = run(std::string(SCHMP_LDA_BIN) + " infer --model " + prefix + " --data " +
                                split.test + " --output " + proportions);
    ASSERT_EQ(inferred.status, 0) << inferred.text;
    EXPECT_NEAR(perplexity_of(inferred), perplexity_of(trained), 0.02 * perplexity_of(trained))
        << "np " << ranks;
    std::istringstream lines(read_text(proportions));
    int documents = 0;
    for (std::string line; std::getline(lines, line);) {
      std::istringstream values(line);
      int id = 0;
      values >> id;
      EXPECT_EQ(id, ++documents);
      double sum = 0;
      int topics = 0;
      for (double value; values >> value; ++topics) sum += value;
      EXPECT_EQ(topics, 20);
      EXPECT_NEAR(sum, 1.0, 1e-8);
    }
    EXPECT_EQ(documents, 10);
  }
}

// Folding the held-out documents in draws from a random stream of its own: the model trained is the
// same with --test as without.
TEST(LdaHeldOut, WatchingHeldOutDocumentsLeavesTrainingAsItIs) {
  testing::ScratchDir dir;
  const SplitCorpus split = split_sotu(dir);
  const std::string train = mpirun(3) + SCHMP_LDA_BIN + " --data " + split.train +
                            " --topics 10 --iterations 5 --progress_seconds 0 --seed 6 --output ";
  const Output alone = run(train + dir.file("alone"));
  const Output watched = run(train + dir.file("watched") + " --test " + split.test);
  ASSERT_EQ(alone.status, 0) << alone.text;
  ASSERT_EQ(watched.status, 0) << watched.text;
  EXPECT_EQ(log_likelihood_of(watched), log_likelihood_of(alone));
  EXPECT_EQ(read_text(dir.file("watched.word_topic")), read_text(dir.file("alone.word_topic")));
  EXPECT_EQ(read_text(dir.file("watched.doc_topic")), read_text(dir.file("alone.doc_topic")));
}

// infer cuts the documents into a fixed number of groups, each with its own random stream: the
// threads change nothing.
TEST(LdaHeldOut, InferIsTheSameOnAnyNumberOfThreads) {
  testing::ScratchDir dir;
  const SplitCorpus split = split_sotu(dir);
  const Output trained = run(mpirun(2) + SCHMP_LDA_BIN + " --data " + split.train +
                             " --topics 8 --iterations 20 --progress_seconds 0 --output " + dir.file("m"));
  ASSERT_EQ(trained.status, 0) << trained.text;
  std::vector<std::string> outputs;
  for (const std::string threads : {"1", "2", "4"}) {
    const std::string output = dir.file("proportions" + threads);
    const Output inferred =
        run(std::string(SCHMP_LDA_BIN) + " infer --model " + dir.file("m") + " --data " + split.test +
            " --iterations 30 --seed 9 --threads " + threads + " --output " + output);
    ASSERT_EQ(inferred.status, 0) << inferred.text;
    outputs.push_back(read_text(output));
  }
  EXPECT_EQ(outputs[0], outputs[1]);
  EXPECT_EQ(outputs[0], outputs[2]);
}

// Text documents are read against the vocabulary the training run wrote; unknown words are left out
// and counted.
TEST(LdaHeldOut, TextDocumentsUseTheTrainingVocabulary) {
  testing::ScratchDir dir;
  auto documents = [](int count, const std::string& extra) {
    std::string text;
    for (int d = 0; d < count; ++d) {
      text += "doc" + std::to_string(d) + " x";
      for (int t = 0; t < 30; ++t)
        text += (d % 2 == 0) ? (t % 3 == 0 ? " apple" : " pear") : (t % 2 ? " car" : " road");
      text += extra + "\n";
    }
    return text;
  };
  const std::string train = dir.write("train.txt", documents(40, ""));
  const std::string test = dir.write("test.txt", documents(6, " zebra"));
  const Output trained = run(mpirun(2) + SCHMP_LDA_BIN + " --text " + train + " --test " + test +
                             " --topics 2 --iterations 30 --progress_seconds 0 --output " + dir.file("m"));
  ASSERT_EQ(trained.status, 0) << trained.text;
  EXPECT_NE(trained.text.find("6 tokens of words the training corpus does not have are left out"),
            std::string::npos)
      << trained.text;
  EXPECT_EQ(read_text(dir.file("m.vocab")), "apple\npear\nroad\ncar\n");
  const Output inferred =
      run(std::string(SCHMP_LDA_BIN) + " infer --model " + dir.file("m") + " --text " + test);
  ASSERT_EQ(inferred.status, 0) << inferred.text;
  EXPECT_NE(inferred.text.find("6 tokens of words the model does not know were left out"), std::string::npos)
      << inferred.text;
  // Two topics that separate fruit from roads leave about two equally likely words per document.
  EXPECT_LT(perplexity_of(inferred), 2.5) << inferred.text;
  EXPECT_LT(perplexity_of(trained), 2.5) << trained.text;

  // A model without word names, written under the same prefix, takes the old names away with it.
  const std::string numbered = dir.write("numbered.txt", "2\n3\n3\n1 1 2\n1 3 1\n2 2 4\n");
  const Output retrained = run(mpirun(2) + SCHMP_LDA_BIN + " --data " + numbered +
                               " --topics 2 --iterations 3 --progress_seconds 0 --output " + dir.file("m"));
  ASSERT_EQ(retrained.status, 0) << retrained.text;
  EXPECT_FALSE(std::filesystem::exists(dir.file("m.vocab")));
  const Output numbered_infer =
      run(std::string(SCHMP_LDA_BIN) + " infer --model " + dir.file("m") + " --data " + numbered);
  EXPECT_EQ(numbered_infer.status, 0) << numbered_infer.text;
}

TEST(LdaHeldOut, InferRefusesBadModelsAndDocuments) {
  testing::ScratchDir dir;
  const std::string documents = dir.write("docs.txt", "1\n3\n1\n1 3 4\n");
  const std::string not_a_model = dir.write("bad.word_topic", "1 2 3\n");
  Output out = run(std::string(SCHMP_LDA_BIN) + " infer --model " + dir.file("bad") + " --data " + documents);
  testing::expect_clean_failure(out,
                                "schmp-lda: error: " + not_a_model +
                                    ":1: expected '# schmp-lda word-topic counts: W words, K topics, alpha "
                                    "A, beta B': not a schmp-lda model");
  const std::string short_model = dir.write(
      "short.word_topic", "# schmp-lda word-topic counts: 2 words, 2 topics, alpha 0.1, beta 0.01\n1 2\n");
  out = run(std::string(SCHMP_LDA_BIN) + " infer --model " + dir.file("short") + " --data " + documents);
  testing::expect_clean_failure(out, "schmp-lda: error: " + short_model + ":3: missing the counts of word 2");
  // The last count cut mid-number (12 of 125) would be read as another count.
  const std::string cut_model = dir.write(
      "cut.word_topic", "# schmp-lda word-topic counts: 2 words, 2 topics, alpha 0.1, beta 0.01\n1 2\n0 12");
  out = run(std::string(SCHMP_LDA_BIN) + " infer --model " + dir.file("cut") + " --data " + documents);
  testing::expect_clean_failure(out, "schmp-lda: error: " + cut_model + ":3: the file ends mid-line");
  // Its vocabulary cut short too: the last word would be another one.
  dir.write("named.word_topic",
            "# schmp-lda word-topic counts: 2 words, 2 topics, alpha 0.1, beta 0.01\n1 2\n0 3\n");
  const std::string cut_vocab = dir.write("named.vocab", "apple\npea");
  out = run(std::string(SCHMP_LDA_BIN) + " infer --model " + dir.file("named") + " --data " + documents);
  testing::expect_clean_failure(out, "schmp-lda: error: " + cut_vocab + ": the file ends mid-line");
  dir.write("two.word_topic",
            "# schmp-lda word-topic counts: 2 words, 2 topics, alpha 0.1, beta 0.01\n1 2\n0 3\n");
  out = run(std::string(SCHMP_LDA_BIN) + " infer --model " + dir.file("two") + " --data " + documents);
  testing::expect_clean_failure(
      out, "schmp-lda: error: " + documents + ":4: word id 3 beyond the model's 2 words");
  // An output it cannot write is refused before the sampling, not after it.
  const std::string fits = dir.write("fits.txt", "1\n2\n1\n1 2 4\n");
  out = run(std::string(SCHMP_LDA_BIN) + " infer --model " + dir.file("two") + " --data " + fits +
            " --iterations 1000000000 --output " + dir.file("no/such"));
  testing::expect_clean_failure(out, "schmp-lda: error: " + dir.file("no/such") + ": cannot write");
  // Priors that are not finite (or whose beta W is not) would make every proportion NaN; sizes the file
  // cannot hold would ask for their memory first.
  for (const char* header :
       {"2 words, 2 topics, alpha inf, beta 0.01", "2 words, 2 topics, alpha 0.1, beta 1e308",
        "2 words, 100000000 topics, alpha 0.1, beta 0.01"}) {
    const std::string model = dir.write(
        "header.word_topic", std::string("# schmp-lda word-topic counts: ") + header + "\n1 2\n0 3\n");
    out = run(std::string(SCHMP_LDA_BIN) + " infer --model " + dir.file("header") + " --data " + documents);
    testing::expect_clean_failure(out, "schmp-lda: error: " + model + ":1: ");
    EXPECT_EQ(out.text.find("bad_alloc"), std::string::npos) << out.text;
  }
  // Learned priors, one per topic, each finite and positive.
  for (const auto& [priors, message] : std::vector<std::pair<std::string, std::string>>{
           {"0.5", "expected 2 priors alpha_k, finite and positive"},
           {"0.5 -1", "expected 2 priors alpha_k, finite and positive"},
           {"0.5 nan", "expected 2 priors alpha_k, finite and positive"},
           {"0.5 0.2 0.3", "more than 2 priors alpha_k"}}) {
    const std::string model =
        dir.write("priors.word_topic",
                  "# schmp-lda word-topic counts: 2 words, 2 topics, alpha 0.1, beta 0.01\n"
                  "# alpha by topic: " +
                      priors + "\n1 2\n0 3\n");
    out = run(std::string(SCHMP_LDA_BIN) + " infer --model " + dir.file("priors") + " --data " + documents);
    testing::expect_clean_failure(out, "schmp-lda: error: " + model + ":2: " + message);
  }
}

TEST(LdaHeldOut, TrainingRefusesHeldOutWordsTheCorpusLacks) {
  testing::ScratchDir dir;
  const std::string train = dir.write("train.txt", "2\n3\n2\n1 1 2\n2 3 1\n");
  const std::string test = dir.write("test.txt", "1\n4\n1\n1 4 2\n");
  for (int ranks : {1, 3}) {
    const Output out = run(mpirun(ranks) + SCHMP_LDA_BIN + " --data " + train + " --test " + test +
                           " --topics 2 --iterations 2 --progress_seconds 0");
    testing::expect_clean_failure(out,
                                  "schmp-lda: error: " + test + ":4: word id 4 beyond the model's 3 words");
  }
}

// The vocabulary only names the topics' words in the output, but a bad one is refused before training,
// not after a run whose model could then not be written.
TEST(LdaEndToEnd, RefusesABadVocabularyBeforeTraining) {
  testing::ScratchDir dir;
  const std::string blank = dir.write("blank.txt", "apple\n\npear\n");
  const std::string repeated = dir.write("repeated.txt", "apple\npear\napple\n");
  const std::string missing = dir.file("missing.txt");
  const std::vector<std::pair<std::string, std::string>> cases{
      {blank, blank + ":2: blank line: line i names word i, so every line must hold a word"},
      {repeated, repeated + ":3: repeated word 'apple'"},
      {missing, missing + ": cannot open file"}};
  for (const auto& [vocab, message] : cases) {
    for (int ranks : {1, 3}) {
      const Output out = run(mpirun(ranks) + SCHMP_LDA_BIN + " --data " + kCorpus + " --vocab " + vocab +
                             " --topics 3 --iterations 200 --progress_seconds 0 --output " + dir.file("m"));
      testing::expect_clean_failure(out, "schmp-lda: error: " + message);
      EXPECT_EQ(out.text.find("iterations 200"), std::string::npos) << "trained first:\n" << out.text;
      EXPECT_FALSE(std::filesystem::exists(dir.file("m.topics")));
    }
  }
}

TEST(LdaEndToEnd, RefusesBadSettingsOnEveryRank) {
  testing::expect_settings_refused(
      "schmp-lda", std::string(SCHMP_LDA_BIN) + " --data " + kCorpus,
      {{"--topics 0", "--topics must be between 1 and 100000"},
       {"--topics -5", "--topics must be between 1 and 100000"},
       {"--alpha 0", "--alpha must be positive and finite, not 0"},
       {"--beta inf", "--beta must be positive and finite, not inf"},
       {"--sampler mh --mh_steps 0", "--mh_steps must be at least 1"},
       {"--sampler gibbs", "--sampler must be sparse, exact or mh, not 'gibbs'"},
       {"--staleness 2", "--staleness is for programs with a dynamic schedule (Lasso, logreg)"},
       {"--optimize_interval -1", "--optimize_interval must be 0 or more, not -1"},
       {"--optimize_burn_in 5", "--optimize_burn_in is not read without --optimize_interval"},
       {"--optimize_beta=false", "--optimize_beta is not read without --optimize_interval"},
       {"--optimize_interval 10 --optimize_burn_in 100",
        "--optimize_interval 10 after --optimize_burn_in 100 never comes within --iterations 100"},
       {"--top_words 101", "--top_words must be between 2 and 100"}});
  // A vocabulary of another length named the topics' words wrongly, or was dropped without a word; with
  // --text it replaced the words the documents named.
  testing::ScratchDir dir;
  const std::string corpus = dir.write("docword.txt", "2\n3\n4\n1 1 2\n1 2 1\n2 2 1\n2 3 4\n");
  const std::string text = dir.write("text.txt", "d1 x apple pear\nd2 x pear fig\n");
  // A model prefix whose .vocab is the --vocab given would overwrite it.
  const std::string words = dir.write("m.vocab", "apple\npear\nfig\n");
  for (const int ranks : {1, 3}) {
    testing::expect_clean_failure(
        run(mpirun(ranks) + SCHMP_LDA_BIN + " --data " + corpus + " --vocab " + words + " --output " +
            dir.file("m") + " --topics 2 --iterations 1 --progress_seconds 0"),
        "schmp-lda: error: " + words + ": --output names the file of --vocab, which the run would overwrite");
  }
  for (const std::string& words : {std::string("apple\npear\n"), std::string("apple\npear\nfig\nplum\n")}) {
    const std::string vocab = dir.write("vocab.txt", words);
    for (const int ranks : {1, 3}) {
      testing::expect_clean_failure(run(mpirun(ranks) + SCHMP_LDA_BIN + " --data " + corpus + " --vocab " +
                                        vocab + " --topics 2 --iterations 1 --progress_seconds 0"),
                                    "schmp-lda: error: " + vocab + ": holds " +
                                        (words.size() > 15 ? "4" : "2") + " words, the corpus 3");
      testing::expect_clean_failure(
          run(mpirun(ranks) + SCHMP_LDA_BIN + " --text " + text + " --vocab " + vocab +
              " --topics 2 --iterations 1 --progress_seconds 0"),
          "schmp-lda: error: --vocab names the words of --data's ids: --text documents "
          "name their own");
    }
  }
}

// A word repeated across the ranges of a document is found before one repeated later inside a range, as a
// single read finds it: the report does not depend on the rank count.
TEST(LdaEndToEnd, TheFirstRepeatedWordIsReportedWhateverTheRanks) {
  std::string body;
  std::uint64_t entries = 0;
  const auto entry = [&](int document, int word) {
    body += std::to_string(document) + " " + std::to_string(word) + " 1\n";
    ++entries;
  };
  for (int word = 1; word <= 100; ++word) entry(1, word);  // lines 4 to 103, across the ranges
  entry(1, 1);                                             // line 104: word 1 again
  for (int word = 1; word <= 50; ++word) entry(2, word);
  for (int word = 1; word <= 5; ++word) entry(3, word);
  entry(3, 2);  // later, and inside the last range
  for (int word = 1; word <= 3; ++word) entry(4, word);
  testing::ScratchDir dir;
  const std::string corpus = dir.write("docword.txt", "4\n200\n" + std::to_string(entries) + "\n" + body);
  for (const int ranks : {1, 2, 3}) {
    SCOPED_TRACE(std::to_string(ranks) + " ranks");
    testing::expect_clean_failure(
        run(mpirun(ranks) + SCHMP_LDA_BIN + " --data " + corpus + " --topics 2 --progress_seconds 0"),
        "schmp-lda: error: " + corpus + ":104: word 1 listed twice for document 1 (first on line 4)");
  }
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
    ::testing::Values(
        testing::BadInput{"word_beyond_w", "2\n3\n2\n1 1 2\n2 4 1\n", "",
                          ":5: word id 4 beyond the 3 the header declares"},
        testing::BadInput{"zero_count", "2\n3\n2\n1 1 0\n2 2 1\n", "", ":4: count 0"},
        testing::BadInput{"negative_count", "2\n3\n2\n1 1 -1\n2 2 1\n", "", ":4: negative count -1"},
        testing::BadInput{"header_disagrees", "2\n3\n3\n1 1 2\n2 2 1\n", "",
                          ": the header declares 3 entries (NNZ) but the file holds 2"},
        testing::BadInput{"out_of_order", "2\n3\n2\n2 1 2\n1 2 1\n", "",
                          ":5: document 1 after document 2: documents must come in order"},
        testing::BadInput{"no_tokens", "2\n3\n0\n", "", ": the corpus has no tokens"},
        // Terabytes of counts: refused before they are promised, not killed part way.
        testing::BadInput{
            "header_beyond_memory", "4294967294\n4294967294\n1\n1 1 1\n", "--topics 1000",
            ":2: the header's 4294967294 documents (D) and 4294967294 words (W), at 12 bytes per "
            "document and "},
        // A word twice in one document: inside a range, and (at 3 ranks) across ranges.
        testing::BadInput{"word_twice", "3\n3\n5\n1 1 1\n2 2 1\n2 3 1\n2 2 3\n3 1 1\n", "",
                          ":7: word 2 listed twice for document 2 (first on line 5)"},
        testing::BadInput{"word_twice_far_apart", "1\n5\n6\n1 1 1\n1 2 1\n1 3 1\n1 4 1\n1 5 1\n1 1 2\n", "",
                          ":9: word 1 listed twice for document 1 (first on line 4)"}),
    testing::bad_input_name);

}  // namespace
}  // namespace schmp
