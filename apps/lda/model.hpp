// A trained LDA model as schmp-lda writes it, and reading it back for `schmp-lda infer`.
//
//   PREFIX.word_topic   # schmp-lda word-topic counts: W words, K topics, alpha A, beta B
//                       with learned priors (alpha_k apart) a second line: # alpha by topic: alpha_1 ...
//                       alpha_K (A is then their mean); then W lines of K counts n_kw (line w + 1: word w);
//                       numpy.loadtxt reads it as is
//   PREFIX.vocab        the words, one per line (line w + 1: word w), when the corpus named them
//   PREFIX.doc_topic    one line per training document, in id order: its id (1-based) and K proportions
//                       (a docword.txt document without entries has none: the format does not list it)
//   PREFIX.topics       each topic's alpha_k, tokens, coherence and top words with p(word | topic), best
//                       topics first (by NPMI), readable text
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "coherence.hpp"
#include "schmp/io.hpp"
#include "schmp/output.hpp"

namespace schmp::lda {

struct Model {
  std::uint32_t words = 0;    // W
  int topics = 0;             // K
  std::vector<double> alpha;  // alpha_k, one per topic
  double beta = 0.01;
  std::vector<std::uint32_t> word_topic;  // n_kw, K per word
  io::Vocabulary vocabulary;              // empty when the corpus had no words' names

  std::vector<std::int64_t> totals() const;  // n_k
  double alpha_sum() const;
};

// Writes PREFIX.word_topic, PREFIX.vocab (when the vocabulary names every word) and PREFIX.topics (each
// topic's `top_words` words, and its `scores` when there are any), and the `more` files beside them (the
// documents' topics), published together or not at all: a run stopped while writing leaves the earlier
// set, not a mix.
void write_model(const std::string& prefix, const Model& model, int top_words, const TopicScores& scores,
                 std::vector<io::FileWriter> more = {});

// io::InputError naming the file and line when PREFIX.word_topic is not such a model.
Model read_model(const std::string& prefix);

}  // namespace schmp::lda
