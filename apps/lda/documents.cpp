#include "documents.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

#include "schmp/kernels/fast_random.hpp"

namespace schmp::lda {

std::uint32_t starting_topic(std::uint64_t seed, std::uint64_t document, std::uint64_t position, int topics) {
  const std::uint64_t z = seed * 0x9E3779B97F4A7C15ull + document * 0xBF58476D1CE4E5B9ull + position;
  return static_cast<std::uint32_t>(kernels::mix64(z) % static_cast<std::uint64_t>(topics));
}

void check_word_tokens(std::span<const std::uint64_t> tokens, const std::string& path) {
  const auto most = std::max_element(tokens.begin(), tokens.end());
  if (most != tokens.end() && *most > std::numeric_limits<std::uint32_t>::max()) {
    throw io::InputError(
        path, 0,
        "word " + std::to_string(most - tokens.begin()) + " has " + std::to_string(*most) +
            " tokens, more than a word-topic count holds (2^32 - 1): leave such words out (stop words)");
  }
}

WordLayout::WordLayout(std::span<const std::uint64_t> tokens, int blocks)
    : block(tokens.size(), 0), row(tokens.size(), 0), words(static_cast<std::size_t>(blocks)) {
  std::vector<std::uint32_t> order(tokens.size());
  std::iota(order.begin(), order.end(), 0u);
  if (blocks > 1) {
    std::stable_sort(order.begin(), order.end(),
                     [&](std::uint32_t a, std::uint32_t b) { return tokens[a] > tokens[b]; });
  }
  std::vector<std::uint64_t> load(static_cast<std::size_t>(blocks), 0);
  for (const std::uint32_t word : order) {
    const auto lightest =
        static_cast<std::uint32_t>(std::min_element(load.begin(), load.end()) - load.begin());
    load[lightest] += tokens[word];
    block[word] = lightest;
    row[word] = static_cast<std::uint32_t>(words[lightest].size());
    words[lightest].push_back(word);
  }
}

void DocumentShard::add(std::uint32_t id, std::span<const std::uint32_t> words, std::uint64_t seed) {
  const auto row = static_cast<std::uint32_t>(ids.size());
  const std::uint32_t first_slot = offsets.back();
  // Tokens are numbered in 32 bits within a worker (their slots, 4 bytes a token).
  if (words.size() > std::numeric_limits<std::uint32_t>::max() - first_slot) {
    throw std::runtime_error("a worker's documents hold more than 2^32 - 1 tokens (" +
                             std::to_string(std::uint64_t{first_slot} + words.size()) +
                             " at least): run more workers");
  }
  ids.push_back(id);
  offsets.push_back(first_slot + static_cast<std::uint32_t>(words.size()));
  counts.resize(counts.size() + static_cast<std::size_t>(topics), 0);
  const std::span<std::uint32_t> counts_of_row = document(row);
  for (std::size_t position = 0; position < words.size(); ++position) {
    const std::uint32_t topic = starting_topic(seed, id, position, topics);
    added.push_back(Token{row, words[position], topic, first_slot + static_cast<std::uint32_t>(position)});
    if (slots) slot_topics.push_back(topic);
    ++counts_of_row[topic];
  }
}

namespace {

// Tokens whose `word` is a word id, dealt to their words' blocks with `word` turned into the row
// there, each block's tokens sorted word by word (stably: a document's tokens keep their order).
template <class Token>
std::vector<std::vector<Token>> into_blocks(std::vector<Token> tokens, const WordLayout& layout) {
  // Each block sized first: grown token by token, the blocks would hold up to twice their tokens.
  std::vector<std::size_t> sizes(layout.words.size(), 0);
  for (const Token& token : tokens) ++sizes[layout.block[token.word]];
  std::vector<std::vector<Token>> blocks(layout.words.size());
  for (std::size_t b = 0; b < blocks.size(); ++b) blocks[b].reserve(sizes[b]);
  for (Token token : tokens) {
    const std::uint32_t word = token.word;
    token.word = layout.row[word];
    blocks[layout.block[word]].push_back(token);
  }
  for (auto& block : blocks) {
    std::stable_sort(block.begin(), block.end(),
                     [](const Token& a, const Token& b) { return a.word < b.word; });
  }
  return blocks;
}

}  // namespace

void DocumentShard::finish(const WordLayout& layout) {
  by_block = into_blocks(std::move(added), layout);
  added = {};
  list_topics();
}

void DocumentShard::list_topics() {
  nonzero.assign(ids.size(), {});
  for (std::uint32_t row = 0; row < ids.size(); ++row) {
    const auto counts_of_row = document(row);
    for (std::uint32_t k = 0; k < counts_of_row.size(); ++k) {
      if (counts_of_row[k] > 0) nonzero[row].push_back(k);
    }
    // Heaviest first, the order the word-by-word sampler keeps.
    std::stable_sort(nonzero[row].begin(), nonzero[row].end(),
                     [&](std::uint32_t a, std::uint32_t b) { return counts_of_row[a] > counts_of_row[b]; });
  }
}

std::vector<std::uint32_t> DocumentShard::topics_by_slot() const {
  std::vector<std::uint32_t> by_slot(offsets.back());
  for (const auto& tokens : by_block) {
    for (const Token& token : tokens) by_slot[token.slot] = token.topic;
  }
  return by_slot;
}

void DocumentShard::set_topics(std::span<const std::uint32_t> by_slot) {
  std::fill(counts.begin(), counts.end(), 0);
  const auto width = static_cast<std::size_t>(topics);
  for (auto& tokens : by_block) {
    for (Token& token : tokens) {
      token.topic = by_slot[token.slot];
      ++counts[token.document * width + token.topic];
    }
  }
  if (slots) slot_topics.assign(by_slot.begin(), by_slot.end());
  list_topics();
}

std::uint64_t DocumentShard::learn(std::uint32_t block, std::span<std::uint32_t> block_counts,
                                   std::span<std::int64_t> totals, const Priors& priors,
                                   SamplerState& sampler) {
  switch (sampler.kind) {
    case Sampler::kSparse:
      return sweep_word_by_word(block, block_counts, totals, priors, true, sampler);
    case Sampler::kMetropolisHastings:
      if (!slots) throw std::logic_error("the Metropolis-Hastings sampler needs the documents' slots");
      return kernels::metropolis_hastings_sweep(by_block[block], block_counts, totals,
                                                kernels::DocumentTopics{counts, slot_topics, offsets}, priors,
                                                sampler.steps, sampler.random, sampler.local);
    case Sampler::kExact:
      break;
  }
  const auto width = static_cast<std::size_t>(topics);
  std::uint64_t moved = 0;
  for (Token& token : by_block[block]) {
    const kernels::TopicCounts counts_of_token{
        document(token.document), block_counts.subspan(token.word * width, width), totals, priors};
    const std::uint32_t topic =
        kernels::resample_exact(counts_of_token, token.topic, sampler.random.uniform(), sampler.weights);
    moved += topic != token.topic;
    token.topic = topic;
    if (slots) slot_topics[token.slot] = topic;
  }
  return moved;
}

void DocumentShard::fold_in(std::uint32_t block, std::span<std::uint32_t> block_counts,
                            std::span<std::int64_t> totals, const Priors& priors, SamplerState& sampler) {
  sweep_word_by_word(block, block_counts, totals, priors, false, sampler);
}

std::uint64_t DocumentShard::sweep_word_by_word(std::uint32_t block, std::span<std::uint32_t> block_counts,
                                                std::span<std::int64_t> totals, const Priors& priors,
                                                bool learn, SamplerState& state) {
  const auto width = static_cast<std::size_t>(topics);
  kernels::WordByWordSampler& sampler = state.word_by_word;
  std::uint64_t moved = 0;
  std::uint32_t current_word = UINT32_MAX;
  const std::span<Token> tokens = by_block[block];
  // Consecutive tokens mostly belong to scattered documents: a later token's counts and topic list
  // are fetched while this one is drawn, and before that the list's own address.
  constexpr std::size_t kAhead = 4;
  // Rows up to this many topics (8 cache lines) are fetched whole; in longer ones a document's
  // topics are a small part.
  constexpr std::size_t kWholeRowTopics = 128;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    Token& token = tokens[i];
    if (i + 2 * kAhead < tokens.size()) __builtin_prefetch(&nonzero[tokens[i + 2 * kAhead].document]);
    if (i + kAhead < tokens.size()) {
      const Token& later = tokens[i + kAhead];
      const std::uint32_t* row = &counts[later.document * width];
      if (width <= kWholeRowTopics && later.document != tokens[i + kAhead - 1].document) {
        // A new document: its part is summed over its topics, most of a short row.
        for (std::size_t k = 0; k < width; k += 16) __builtin_prefetch(row + k);
      } else {
        __builtin_prefetch(row + later.topic);
      }
      __builtin_prefetch(nonzero[later.document].data());
    }
    if (token.word != current_word) {
      current_word = token.word;
      sampler.start_word(block_counts.subspan(token.word * width, width), totals, priors);
    }
    const double uniform = state.random.uniform();
    const std::uint32_t topic =
        learn ? sampler.resample(document(token.document), nonzero[token.document], token.topic, uniform)
              : sampler.fold_in(document(token.document), nonzero[token.document], token.topic, uniform);
    moved += topic != token.topic;
    token.topic = topic;
    if (slots) slot_topics[token.slot] = topic;
  }
  return moved;
}

void HeldOutDocuments::add(std::uint32_t id, std::span<const std::uint32_t> words, std::uint64_t seed) {
  const auto row = static_cast<std::uint32_t>(observed_.ids.size());
  std::vector<std::uint32_t> observed;
  for (std::size_t position = 0; position < words.size(); ++position) {
    if (position % 2 == 0) {
      observed.push_back(words[position]);
    } else {
      added_.push_back(HeldOutToken{row, words[position], 0.0});
    }
  }
  observed_.add(id, observed, seed);
}

void HeldOutDocuments::finish(const WordLayout& layout) {
  observed_.finish(layout);
  held_out_ = into_blocks(std::move(added_), layout);
  added_ = {};
}

void HeldOutDocuments::score(std::uint32_t block, std::span<std::uint32_t> block_counts,
                             std::span<std::int64_t> totals, const Priors& priors,
                             kernels::WordByWordSampler& sampler) {
  const auto width = static_cast<std::size_t>(observed_.topics);
  std::uint32_t current_word = UINT32_MAX;
  for (HeldOutToken& token : held_out_[block]) {
    if (token.word != current_word) {
      current_word = token.word;
      sampler.start_word(block_counts.subspan(token.word * width, width), totals, priors);
    }
    token.probability_sum +=
        sampler.predictive(observed_.document(token.document), observed_.nonzero[token.document],
                           observed_.length(token.document));
  }
}

double HeldOutDocuments::log_likelihood(int samples) const {
  double sum = 0;
  for (const auto& tokens : held_out_) {
    for (const HeldOutToken& token : tokens) sum += std::log(token.probability_sum / samples);
  }
  return sum;
}

void HeldOutDocuments::clear_scores() {
  for (auto& tokens : held_out_) {
    for (HeldOutToken& token : tokens) token.probability_sum = 0;
  }
}

std::uint64_t HeldOutDocuments::held_out_tokens() const {
  std::uint64_t count = 0;
  for (const auto& tokens : held_out_) count += tokens.size();
  return count;
}

std::uint64_t HeldOutDocuments::observed_tokens() const { return observed_.offsets.back(); }

namespace {

// A row's entries share their 32 bits between the topic (the low bits, as many as K - 1 needs) and
// the count (the rest).
struct RowPacking {
  explicit RowPacking(int topics)
      : topic_bits(std::bit_width(static_cast<std::uint32_t>(topics - 1))),
        topic_mask((std::uint32_t{1} << topic_bits) - 1),
        largest_count(static_cast<std::uint32_t>((std::uint64_t{1} << (32 - topic_bits)) - 1)) {}
  int topic_bits;
  std::uint32_t topic_mask;
  std::uint32_t largest_count;  // that fits beside a topic
};

// The words that follow a row's header: one per nonzero count, two in a row of (topic, count) pairs.
std::size_t words_after(std::uint32_t header) {
  return std::size_t{header >> 1} * ((header & 1) != 0 ? 2 : 1);
}

}  // namespace

std::vector<std::uint32_t> encode_rows(std::span<const std::uint32_t> dense, int topics) {
  const auto width = static_cast<std::size_t>(topics);
  const RowPacking packing(topics);
  std::vector<std::uint32_t> encoded;
  for (std::size_t first = 0; first < dense.size(); first += width) {
    const std::span<const std::uint32_t> row = dense.subspan(first, width);
    const std::size_t header = encoded.size();
    encoded.push_back(0);
    std::uint32_t largest = 0;
    for (std::uint32_t k = 0; k < row.size(); ++k) {
      if (row[k] == 0) continue;
      encoded.push_back(k | row[k] << packing.topic_bits);
      largest = std::max(largest, row[k]);
    }
    const auto nonzeros = static_cast<std::uint32_t>(encoded.size() - header - 1);
    // A count too large to pack (seldom: 2^25 tokens of one word in one topic at K = 100): the row
    // again, as (topic, count) pairs.
    const bool wide = largest > packing.largest_count;
    if (wide) {
      encoded.resize(header + 1);
      for (std::uint32_t k = 0; k < row.size(); ++k) {
        if (row[k] == 0) continue;
        encoded.push_back(k);
        encoded.push_back(row[k]);
      }
    }
    encoded[header] = nonzeros << 1 | (wide ? 1u : 0u);
  }
  return encoded;
}

void decode_rows(std::span<const std::uint32_t> encoded, int topics, std::span<std::uint32_t> dense) {
  const auto width = static_cast<std::size_t>(topics);
  const RowPacking packing(topics);
  std::fill(dense.begin(), dense.end(), 0u);
  std::size_t at = 0;
  for (std::size_t first = 0; first < dense.size(); first += width) {
    if (at >= encoded.size()) throw std::logic_error("a word-topic block's encoding ends early");
    const std::uint32_t header = encoded[at++];
    const std::uint32_t nonzeros = header >> 1;
    const bool wide = (header & 1) != 0;
    const std::size_t end = at + words_after(header);
    if (nonzeros > width || end > encoded.size())
      throw std::logic_error("a word-topic block's encoding has a bad row");
    std::uint32_t* const row = dense.data() + first;
    // encode_rows writes a row's topics ascending and its counts nonzero, and pairs only for a count
    // too large to pack; anything else (a repeated topic would lose a count) is refused once the row
    // is written, so that an encoding decodes only as encode_rows wrote it. Until then a topic beyond
    // K writes to the row's last count (std::min), never past the row; ascending, the last topic
    // named is the largest.
    std::uint64_t least_next_topic = 0;
    bool canonical = true;
    std::uint32_t largest = 0;
    auto put = [&](std::uint32_t topic, std::uint32_t count) {
      canonical &= topic >= least_next_topic && count != 0;
      least_next_topic = std::uint64_t{topic} + 1;
      largest = std::max(largest, count);
      row[std::min<std::size_t>(topic, width - 1)] = count;
    };
    if (wide) {
      for (; at < end; at += 2) put(encoded[at], encoded[at + 1]);
      canonical &= largest > packing.largest_count;
    } else {
      for (; at < end; ++at) put(encoded[at] & packing.topic_mask, encoded[at] >> packing.topic_bits);
    }
    if (!canonical) throw std::logic_error("a word-topic block's encoding has a bad row");
    if (least_next_topic > width)
      throw std::logic_error("a word-topic block's encoding names a topic beyond K");
  }
  if (at != encoded.size())
    throw std::logic_error("a word-topic block's encoding has more rows than its block");
}

std::vector<std::size_t> row_starts(std::span<const std::uint32_t> encoded, std::size_t rows) {
  std::vector<std::size_t> starts;
  starts.reserve(rows + 1);
  std::size_t at = 0;
  for (std::size_t row = 0; row < rows; ++row) {
    if (at >= encoded.size()) throw std::logic_error("an encoding of count rows ends early");
    starts.push_back(at);
    at += 1 + words_after(encoded[at]);
  }
  if (at != encoded.size())
    throw std::logic_error("an encoding of count rows does not end where its rows do");
  starts.push_back(at);
  return starts;
}

namespace {

// The checks of an entry that follows one of document `previous`: documents in order, words known.
void check_entry(const std::string& path, const io::WordCount& entry, std::uint32_t previous,
                 std::uint32_t known_words) {
  if (entry.document < previous) {
    throw io::InputError::at(path, entry.source,
                             "document " + std::to_string(entry.document + 1) + " after document " +
                                 std::to_string(previous + 1) + ": documents must come in order");
  }
  if (entry.word >= known_words) {
    throw io::InputError::at(path, entry.source,
                             "word id " + std::to_string(entry.word + 1) + " beyond the model's " +
                                 std::to_string(known_words) + " words");
  }
}

// A word listed twice for a document: the later entry and the earlier one's line.
struct RepeatedWord {
  std::uint32_t document = 0;
  std::uint32_t word = 0;
  std::uint64_t later = 0;
  std::uint64_t earlier = 0;
};

// The entries of a bag-of-words file that name a document's words: (word, line source) pairs.
struct WordEntry {
  std::uint32_t document = 0;
  std::uint32_t word = 0;
  std::uint64_t source = 0;
};

// The first word of `entries` (all of one document, in any order) listed twice, by the later line.
std::optional<RepeatedWord> repeated_word(std::vector<WordEntry>& entries) {
  std::sort(entries.begin(), entries.end(), [](const WordEntry& a, const WordEntry& b) {
    return std::tie(a.document, a.word, a.source) < std::tie(b.document, b.word, b.source);
  });
  std::optional<RepeatedWord> first;
  for (std::size_t k = 1; k < entries.size(); ++k) {
    const WordEntry& a = entries[k - 1];
    const WordEntry& b = entries[k];
    if (a.document != b.document || a.word != b.word) continue;
    if (!first || b.source < first->later) first = RepeatedWord{b.document, b.word, b.source, a.source};
  }
  return first;
}

// A word listed twice for one document would count its tokens twice over (UCI's files list each pair
// once, with its count): refused at the later entry, naming the first.
io::InputError repeated_word_error(const std::string& path, const RepeatedWord& repeated) {
  return io::InputError::at(path, repeated.later,
                            "word " + std::to_string(repeated.word + 1) + " listed twice for document " +
                                std::to_string(repeated.document + 1) + " (first on " +
                                io::line_name(path, repeated.earlier, repeated.later) + ")");
}

// The entries of one document at a time, in file order, checked for a repeated word when it ends.
class DocumentWords {
 public:
  // Adds an entry; when it starts a new document, the one before is checked and returned.
  std::vector<WordEntry> add(const io::WordCount& entry) {
    std::vector<WordEntry> ended;
    if (!entries_.empty() && entries_.back().document != entry.document) ended = finish();
    entries_.push_back(WordEntry{entry.document, entry.word, entry.source});
    return ended;
  }
  // Checks the open document, and returns its entries.
  std::vector<WordEntry> finish() {
    std::vector<WordEntry> ended = std::move(entries_);
    entries_.clear();
    if (const auto found = repeated_word(ended); found && (!repeated_ || found->later < repeated_->later))
      repeated_ = found;
    return ended;
  }
  // The first repeated word of the documents finished so far.
  const std::optional<RepeatedWord>& repeated() const { return repeated_; }

 private:
  std::vector<WordEntry> entries_;
  std::optional<RepeatedWord> repeated_;
};

// Gathers the words of consecutive occurrences of one document, and visits the document when the
// next one starts (or at finish()).
class DocumentGatherer {
 public:
  using Visit = std::function<void(std::uint32_t id, const std::vector<std::uint32_t>& words)>;
  explicit DocumentGatherer(const Visit& visit) : visit_(visit) {}
  void operator()(std::uint32_t document, std::uint32_t word, std::uint32_t count) {
    if (open_ && document != document_) finish();
    document_ = document;
    open_ = true;
    words_.insert(words_.end(), count, word);
  }
  void finish() {
    if (open_) visit_(document_, words_);
    words_.clear();
    open_ = false;
  }

 private:
  const Visit& visit_;
  std::vector<std::uint32_t> words_;
  std::uint32_t document_ = 0;
  bool open_ = false;
};

}  // namespace

CorpusRead read_documents(
    const CorpusFiles& files, io::Vocabulary& vocabulary, bool grow, std::uint32_t known_words,
    const std::function<void(std::uint32_t id, const std::vector<std::uint32_t>& words)>& visit) {
  CorpusRead read;
  if (!files.text.empty()) {
    std::uint32_t id = 0;
    read.unknown_tokens = io::read_text_documents(
        files.text, vocabulary, grow, [&](const io::TextDocument& document) { visit(id++, document.words); });
    read.words = vocabulary.size();
    return read;
  }
  // UCI files list documents in order; a document's words are gathered, then visited.
  DocumentGatherer gather(visit);
  DocumentWords words;
  std::uint32_t previous = 0;
  const auto refuse_repeated = [&] {
    if (words.repeated()) throw repeated_word_error(files.data, *words.repeated());
  };
  const io::CorpusSize size = io::read_bag_of_words(files.data, [&](const io::WordCount& entry) {
    check_entry(files.data, entry, previous, known_words);
    previous = entry.document;
    words.add(entry);
    refuse_repeated();
    gather(entry.document, entry.word, entry.count);
  });
  words.finish();
  refuse_repeated();
  gather.finish();
  read.words = static_cast<std::uint32_t>(size.words);
  return read;
}

namespace {

// Occurrences of a word in a document, as read: a UCI entry, or a token of a text document. A count
// of 0 marks where a text document starts, so that an empty one is dealt and visited too.
struct Occurrences {
  std::uint32_t document = 0;
  std::uint32_t word = 0;
  std::uint32_t count = 0;
};

// What one worker read of its byte range, in file order.
struct RangeRead {
  std::vector<Occurrences> occurrences;
  std::vector<std::uint64_t> document_tokens;  // by document id, up to the last one read
};

// Adds up the workers' document tokens (and, when `word_tokens` is given, every word's tokens over
// `words` words), deals the documents in id order as a whole read deals them (those without tokens too
// when `deal_empty`: text documents are all there), hands each occurrence to its document's worker and
// visits this worker's documents.
void deal_documents(
    Peers& peers, RangeRead read, bool deal_empty, std::uint32_t words,
    std::vector<std::uint64_t>* word_tokens,
    const std::function<void(std::uint32_t id, const std::vector<std::uint32_t>& words)>& visit) {
  if (word_tokens) {
    // A text document's start marker counts 0.
    word_tokens->assign(words, 0);
    for (const Occurrences& o : read.occurrences) (*word_tokens)[o.word] += o.count;
    peers.sum(*word_tokens);
  }
  peers.sum(read.document_tokens);
  DocumentDealer dealer(peers.count());
  std::vector<std::uint32_t> owner(read.document_tokens.size(), 0);
  for (std::size_t d = 0; d < read.document_tokens.size(); ++d) {
    if (deal_empty || read.document_tokens[d] > 0) owner[d] = dealer.deal(read.document_tokens[d]);
  }
  // Fresh vectors: assigning {} would empty them and keep their memory.
  read.document_tokens = std::vector<std::uint64_t>();
  std::vector<std::vector<Occurrences>> by_owner(static_cast<std::size_t>(peers.count()));
  for (const Occurrences& o : read.occurrences) by_owner[owner[o.document]].push_back(o);
  read.occurrences = std::vector<Occurrences>();
  owner = std::vector<std::uint32_t>();

  const std::vector<Occurrences> mine = peers.route(by_owner);
  by_owner = {};
  DocumentGatherer gather(visit);
  for (const Occurrences& o : mine) gather(o.document, o.word, o.count);
  gather.finish();
}

// A UCI corpus's byte range, checked as a whole read checks it: documents in order (across the
// ranges too), known words, no word twice in a document, and the entry count against the header's over
// all ranges.
RangeRead read_bag_of_words_range(const std::string& path, std::uint32_t known_words, Peers& peers,
                                  std::uint32_t& words) {
  RangeRead read;
  std::optional<io::WordCount> first;  // the range's first entry, whose order is checked below
  std::uint32_t previous = 0;
  // The documents at the ends of the range may go on in the ranges beside it: their entries are checked
  // for repeated words together with the other ranges' (below), the others' here.
  DocumentWords document_words;
  std::vector<WordEntry> edge_entries;
  const auto ended = [&](std::vector<WordEntry> entries) {
    if (!entries.empty() && entries.front().document == first->document)
      edge_entries.insert(edge_entries.end(), entries.begin(), entries.end());
  };
  const io::ByteRange byte_range = io::worker_range(path, peers);
  // An error met in the range waits for that check: a word repeated across ranges before it comes first,
  // as a single read would find it.
  std::optional<io::InputError> range_error;
  io::BagOfWordsRange range;
  try {
    range = io::read_bag_of_words(path, byte_range, [&](const io::WordCount& entry) {
      check_entry(path, entry, first ? previous : entry.document, known_words);
      if (!first) first = entry;
      previous = entry.document;
      ended(document_words.add(entry));
      read.occurrences.push_back(Occurrences{entry.document, entry.word, entry.count});
      if (entry.document >= read.document_tokens.size())
        read.document_tokens.resize(entry.document + std::size_t{1}, 0);
      read.document_tokens[entry.document] += entry.count;
    });
  } catch (const io::InputError& error) {
    range_error = error;
  }
  words = static_cast<std::uint32_t>(range.declared.words);
  const std::vector<WordEntry> last = document_words.finish();  // the range's last document, or its only one
  edge_entries.insert(edge_entries.end(), last.begin(), last.end());
  // A document's edge entries from every range meet at one worker.
  std::vector<std::vector<WordEntry>> edges_by_checker(static_cast<std::size_t>(peers.count()));
  for (const WordEntry& entry : edge_entries)
    edges_by_checker[entry.document % edges_by_checker.size()].push_back(entry);
  std::vector<WordEntry> edges = peers.route(edges_by_checker);
  // The first of the errors found, in file order.
  std::optional<io::InputError> first_error = range_error;
  for (const auto& repeated : {document_words.repeated(), repeated_word(edges)}) {
    if (repeated && (!first_error || repeated->later < first_error->order()))
      first_error = repeated_word_error(path, *repeated);
  }
  if (first_error) throw *first_error;

  // Each worker learns where the others' ranges end, and so the document before its first.
  struct RangeEnd {
    std::uint32_t last_document = 0;
    std::uint32_t any = 0;
  };
  const RangeEnd mine{previous, first ? 1u : 0u};
  const std::vector<RangeEnd> ends =
      peers.route(std::vector<std::vector<RangeEnd>>(static_cast<std::size_t>(peers.count()), {mine}));
  std::optional<std::uint32_t> before;  // the last document of the nearest earlier range with entries
  for (std::size_t w = 0; w < static_cast<std::size_t>(peers.index()); ++w) {
    if (ends[w].any) before = ends[w].last_document;
  }
  if (before && first) check_entry(path, *first, *before, known_words);
  std::vector<std::uint64_t> entries{range.entries};
  peers.sum(entries);
  io::check_entry_count(path, range.declared, entries[0]);
  return read;
}

// A text corpus's byte range. Its words are numbered in order of first appearance in the whole
// corpus: each worker numbers those of its range, the workers' lists are put together in range
// order (which keeps the first appearance's order) into `vocabulary`, and the ids are renumbered.
// Documents are numbered in file order: after those of the ranges before.
RangeRead read_text_range(const std::string& path, io::Vocabulary& vocabulary, bool grow, Peers& peers,
                          std::uint64_t& unknown_tokens) {
  io::Vocabulary local;
  io::Vocabulary& numbering = grow ? local : vocabulary;
  RangeRead read;
  std::uint32_t documents = 0;
  std::vector<std::uint64_t> unknown{io::read_text_documents(
      path, numbering, grow,
      [&](const io::TextDocument& document) {
        read.occurrences.push_back(Occurrences{documents, 0, 0});
        for (const std::uint32_t word : document.words)
          read.occurrences.push_back(Occurrences{documents, word, 1});
        ++documents;
      },
      io::worker_range(path, peers))};
  peers.sum(unknown);
  unknown_tokens = unknown[0];

  if (grow) {
    std::vector<char> listed;
    for (std::uint32_t id = 0; id < local.size(); ++id) {
      listed.insert(listed.end(), local.word(id).begin(), local.word(id).end());
      listed.push_back('\n');
    }
    const std::vector<char> all =
        peers.route(std::vector<std::vector<char>>(static_cast<std::size_t>(peers.count()), listed));
    for (auto begin = all.begin(); begin != all.end();) {
      const auto end = std::find(begin, all.end(), '\n');
      vocabulary.add(std::string_view(&*begin, static_cast<std::size_t>(end - begin)));
      begin = end + 1;
    }
    std::vector<std::uint32_t> global(local.size());
    for (std::uint32_t id = 0; id < local.size(); ++id) global[id] = vocabulary.find(local.word(id));
    for (Occurrences& o : read.occurrences) {
      if (o.count > 0) o.word = global[o.word];
    }
  }

  // Document ids: this worker's count at its place, summed, gives every range's count.
  std::vector<std::uint64_t> counts(static_cast<std::size_t>(peers.index()) + 1, 0);
  counts.back() = documents;
  peers.sum(counts);
  const auto first = static_cast<std::uint32_t>(
      std::accumulate(counts.begin(), counts.begin() + peers.index(), std::uint64_t{0}));
  read.document_tokens.assign(first + std::size_t{documents}, 0);
  for (Occurrences& o : read.occurrences) {
    o.document += first;
    read.document_tokens[o.document] += o.count;
  }
  return read;
}

}  // namespace

CorpusRead read_dealt_documents(
    const CorpusFiles& files, io::Vocabulary& vocabulary, bool grow, std::uint32_t known_words, Peers& peers,
    std::vector<std::uint64_t>* word_tokens,
    const std::function<void(std::uint32_t id, const std::vector<std::uint32_t>& words)>& visit) {
  CorpusRead corpus;
  if (!files.text.empty()) {
    RangeRead read = read_text_range(files.text, vocabulary, grow, peers, corpus.unknown_tokens);
    corpus.words = vocabulary.size();
    deal_documents(peers, std::move(read), true, corpus.words, word_tokens, visit);
  } else {
    RangeRead read = read_bag_of_words_range(files.data, known_words, peers, corpus.words);
    deal_documents(peers, std::move(read), false, corpus.words, word_tokens, visit);
  }
  return corpus;
}

}  // namespace schmp::lda
