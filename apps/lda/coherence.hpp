// Topic coherence: how often a topic's top words occur together in documents, a measure that follows
// people's judgement of topics (Mimno, Wallach, Talley, Leenders and McCallum, 2011; Lau, Newman and
// Baldwin, 2014). For the top M words w_1 .. w_M of a topic, most probable first, with D(w) the
// documents holding w, D(w, v) those holding both and N the documents:
//
//   UMass  sum over i > j of  log((D(w_i, w_j) + 1) / D(w_j)),  over the training documents;
//   NPMI   the mean over i > j of  log(P(w_i, w_j) / (P(w_i) P(w_j))) / -log P(w_i, w_j),  P(w) = D(w) / N,
//          over a reference corpus (the training one by default); a pair never seen together scores -1,
//          and a pair with a word the reference lacks is left out.
//
// Documents are spread over the workers: each counts D for its own, in a fixed-size vector per topic
// that the workers sum, and the coordinator turns the sums into scores.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace schmp::lda {

// Each topic's top words: most tokens in the topic first, ties to the lower word id. A word with no
// token in the topic is never among them, so a topic may have fewer than `size`.
class TopWords {
 public:
  TopWords(int topics, int size);
  // A word's counts row (K counts n_kw).
  void offer(std::uint32_t word, std::span<const std::uint32_t> counts);
  // Per topic, its words, best first.
  std::vector<std::vector<std::uint32_t>> words() const;

 private:
  struct Entry {
    std::uint32_t count;
    std::uint32_t word;
  };
  static bool better(const Entry& a, const Entry& b) {
    return a.count != b.count ? a.count > b.count : a.word < b.word;
  }
  std::size_t size_;
  std::vector<std::vector<Entry>> heaps_;  // per topic, a min-heap of the best so far (worst on top)
};

// Documents' words, each document's distinct words sorted: 4 bytes per distinct word of a document.
struct DocumentWords {
  std::vector<std::uint32_t> words;
  std::vector<std::uint64_t> offsets{0};  // document d's words are [offsets[d], offsets[d + 1])
  void add(std::span<const std::uint32_t> words_with_repeats);
  std::size_t documents() const { return offsets.size() - 1; }
};

// Per topic, M (M + 1) / 2 document counts of its top words, packed: D(w_i, w_j) at i (i + 1) / 2 + j
// for j <= i, so D(w_i) on the diagonal.
std::size_t pair_slots(int size);

// Counts documents holding each topic's top words (M a topic at most; `words` the vocabulary's size),
// through a table by word made once for every set of documents counted.
class CooccurrenceCounter {
 public:
  CooccurrenceCounter(const std::vector<std::vector<std::uint32_t>>& top_words, int size,
                      std::uint32_t words);
  // Adds the documents' counts into `counts` (K x pair_slots(M)).
  void count(const DocumentWords& documents, std::span<double> counts) const;

 private:
  struct Place {
    std::uint32_t topic;
    std::uint32_t rank;
  };
  std::size_t slots_;
  std::vector<std::vector<Place>> places_;  // every (topic, rank) a top word holds
  std::vector<std::int32_t> place_of_;      // by word: its entry in places_, -1 for most words
};

// A topic's scores from its summed counts (`listed` of its M are real words); NaN below two words.
double umass(std::span<const double> counts, int listed);
double npmi(std::span<const double> counts, int listed, double documents);

// Every topic's scores; empty when none were scored.
struct TopicScores {
  std::vector<double> umass;
  std::vector<double> npmi;
};

}  // namespace schmp::lda
