#include "coherence.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace schmp::lda {

TopWords::TopWords(int topics, int size)
    : size_(static_cast<std::size_t>(size)), heaps_(static_cast<std::size_t>(topics)) {}

void TopWords::offer(std::uint32_t word, std::span<const std::uint32_t> counts) {
  for (std::size_t k = 0; k < heaps_.size(); ++k) {
    if (counts[k] == 0) continue;
    std::vector<Entry>& heap = heaps_[k];
    const Entry entry{counts[k], word};
    // The heap's top is its worst entry: `better` as the comparison keeps the best ones.
    if (heap.size() < size_) {
      heap.push_back(entry);
      std::push_heap(heap.begin(), heap.end(), better);
    } else if (better(entry, heap.front())) {
      std::pop_heap(heap.begin(), heap.end(), better);
      heap.back() = entry;
      std::push_heap(heap.begin(), heap.end(), better);
    }
  }
}

std::vector<std::vector<std::uint32_t>> TopWords::words() const {
  std::vector<std::vector<std::uint32_t>> words(heaps_.size());
  for (std::size_t k = 0; k < heaps_.size(); ++k) {
    std::vector<Entry> sorted = heaps_[k];
    std::sort(sorted.begin(), sorted.end(), better);
    for (const Entry& entry : sorted) words[k].push_back(entry.word);
  }
  return words;
}

void DocumentWords::add(std::span<const std::uint32_t> words_with_repeats) {
  const std::size_t start = words.size();
  words.insert(words.end(), words_with_repeats.begin(), words_with_repeats.end());
  std::sort(words.begin() + static_cast<std::ptrdiff_t>(start), words.end());
  words.erase(std::unique(words.begin() + static_cast<std::ptrdiff_t>(start), words.end()), words.end());
  offsets.push_back(words.size());
}

std::size_t pair_slots(int size) {
  return static_cast<std::size_t>(size) * static_cast<std::size_t>(size + 1) / 2;
}

CooccurrenceCounter::CooccurrenceCounter(const std::vector<std::vector<std::uint32_t>>& top_words, int size,
                                         std::uint32_t words)
    : slots_(pair_slots(size)), place_of_(words, -1) {
  for (std::uint32_t k = 0; k < top_words.size(); ++k) {
    for (std::uint32_t rank = 0; rank < top_words[k].size(); ++rank) {
      std::int32_t& at = place_of_[top_words[k][rank]];
      if (at < 0) {
        at = static_cast<std::int32_t>(places_.size());
        places_.emplace_back();
      }
      places_[static_cast<std::size_t>(at)].push_back({k, rank});
    }
  }
}

void CooccurrenceCounter::count(const DocumentWords& documents, std::span<double> counts) const {
  // Per document, the ranks it holds of each topic's top words, grouped by topic without sorting: a
  // long document holds hundreds of places.
  const std::size_t topics = counts.size() / slots_;
  std::vector<std::vector<std::uint32_t>> ranks(topics);
  std::vector<std::uint32_t> touched;
  for (std::size_t d = 0; d < documents.documents(); ++d) {
    for (std::uint64_t i = documents.offsets[d]; i < documents.offsets[d + 1]; ++i) {
      const std::int32_t at = place_of_[documents.words[i]];
      if (at < 0) continue;
      for (const Place& place : places_[static_cast<std::size_t>(at)]) {
        std::vector<std::uint32_t>& held = ranks[place.topic];
        if (held.empty()) touched.push_back(place.topic);
        held.push_back(place.rank);
      }
    }
    // Every pair of a topic's words the document holds, each word once (a document's words are distinct).
    for (const std::uint32_t k : touched) {
      std::vector<std::uint32_t>& held = ranks[k];
      double* topic = counts.data() + k * slots_;
      for (std::size_t a = 0; a < held.size(); ++a) {
        for (std::size_t b = 0; b <= a; ++b) {
          const std::uint32_t high = std::max(held[a], held[b]), low = std::min(held[a], held[b]);
          topic[high * (high + 1) / 2 + low] += 1;
        }
      }
      held.clear();
    }
    touched.clear();
  }
}

double umass(std::span<const double> counts, int listed) {
  if (listed < 2) return NAN;
  double score = 0;
  for (int i = 1; i < listed; ++i) {
    for (int j = 0; j < i; ++j) {
      const auto pair = static_cast<std::size_t>(i * (i + 1) / 2 + j);
      const auto single = static_cast<std::size_t>(j * (j + 1) / 2 + j);
      score += std::log((counts[pair] + 1) / counts[single]);
    }
  }
  return score;
}

double npmi(std::span<const double> counts, int listed, double documents) {
  double sum = 0;
  int pairs = 0;
  for (int i = 1; i < listed; ++i) {
    const double p_i = counts[static_cast<std::size_t>(i * (i + 1) / 2 + i)] / documents;
    for (int j = 0; j < i; ++j) {
      const double p_j = counts[static_cast<std::size_t>(j * (j + 1) / 2 + j)] / documents;
      if (p_i == 0 || p_j == 0) continue;
      const double p_ij = counts[static_cast<std::size_t>(i * (i + 1) / 2 + j)] / documents;
      // In every document: PMI and -log P(w_i, w_j) are both 0; 1 is the limit.
      if (p_ij == 0) {
        sum -= 1;
      } else if (p_ij == 1) {
        sum += 1;
      } else {
        sum += std::log(p_ij / (p_i * p_j)) / -std::log(p_ij);
      }
      ++pairs;
    }
  }
  return pairs > 0 ? sum / pairs : NAN;
}

}  // namespace schmp::lda
