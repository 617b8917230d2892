#include "schmp/kernels/topic_kernels.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <iterator>
#include <numeric>

namespace schmp::kernels {

std::uint32_t resample_exact(const TopicCounts& counts, std::uint32_t old_topic, double uniform,
                             std::span<double> weights) {
  --counts.document[old_topic];
  --counts.word[old_topic];
  --counts.totals[old_topic];
  const std::size_t topics = counts.totals.size();
  double total = 0;
  for (std::size_t k = 0; k < topics; ++k) {
    total += (counts.document[k] + counts.priors.alpha[k]) * (counts.word[k] + counts.priors.beta) /
             (static_cast<double>(counts.totals[k]) + counts.priors.beta_sum);
    weights[k] = total;  // running sums: the draw is the first topic whose sum passes u * total
  }
  const double target = uniform * total;
  std::size_t topic = 0;
  while (topic + 1 < topics && weights[topic] <= target) ++topic;
  ++counts.document[topic];
  ++counts.word[topic];
  ++counts.totals[topic];
  return static_cast<std::uint32_t>(topic);
}

WordByWordSampler::WordByWordSampler(int topics)
    : coefficients_(static_cast<std::size_t>(topics), 0.0),
      bucket_shift_(std::bit_width(static_cast<unsigned>(std::sqrt(static_cast<double>(topics)))) - 1),
      bucket_sums_(((static_cast<std::size_t>(topics) - 1) >> bucket_shift_) + 1, 0.0),
      inverse_totals_(static_cast<std::size_t>(topics)) {}

void WordByWordSampler::start_word(std::span<std::uint32_t> word, std::span<std::int64_t> totals,
                                   const TopicPriors& priors) {
  if (priors.beta_sum != priors_.beta_sum) {
    for (InverseTotal& inverse : inverse_totals_) inverse.total = -1;
  }
  word_ = word;
  totals_ = totals;
  priors_ = priors;
  // Sums start afresh at each word, so the rounding of their running updates never builds up.
  std::fill(bucket_sums_.begin(), bucket_sums_.end(), 0.0);
  for (std::uint32_t k = 0; k < coefficients_.size(); ++k) {
    if (inverse_totals_[k].total != totals_[k]) refresh_inverse(k);
    coefficients_[k] = coefficient(k);
    bucket_sums_[k >> bucket_shift_] += priors_.alpha[k] * coefficients_[k];
  }
  prior_sum_ = std::accumulate(bucket_sums_.begin(), bucket_sums_.end(), 0.0);
  last_document_ = nullptr;
}

void WordByWordSampler::refresh_inverse(std::uint32_t k) {
  InverseTotal& inverse = inverse_totals_[k];
  inverse.total = totals_[k];
  inverse.of_total = 1 / (static_cast<double>(inverse.total) + priors_.beta_sum);
  inverse.of_one_less = inverse_of_one_less(inverse.total);
}

double WordByWordSampler::inverse_of_one_less(std::int64_t total) const {
  // With no token in the topic there is none to take out.
  return total > 0 ? 1 / (static_cast<double>(total - 1) + priors_.beta_sum) : 0;
}

void WordByWordSampler::change_prior(std::uint32_t k, double change) {
  bucket_sums_[k >> bucket_shift_] += change;
  prior_sum_ += change;
}

void WordByWordSampler::set_coefficient(std::uint32_t k, double coefficient) {
  change_prior(k, priors_.alpha[k] * (coefficient - coefficients_[k]));
  coefficients_[k] = coefficient;
}

void WordByWordSampler::take_out(std::uint32_t topic) {
  --word_[topic];
  --totals_[topic];
  // The total is one less than the inverses were computed at: each inverse moves down by one.
  InverseTotal& inverse = inverse_totals_[topic];
  inverse.total = totals_[topic];
  inverse.of_total = inverse.of_one_less;
  inverse.of_one_less = inverse_of_one_less(inverse.total);
}

void WordByWordSampler::put_in(std::uint32_t topic) {
  ++word_[topic];
  ++totals_[topic];
  InverseTotal& inverse = inverse_totals_[topic];
  inverse.total = totals_[topic];
  inverse.of_one_less = inverse.of_total;
  inverse.of_total = 1 / (static_cast<double>(inverse.total) + priors_.beta_sum);
  set_coefficient(topic, coefficient(topic));
}

std::uint32_t WordByWordSampler::draw_prior(double target) const {
  std::size_t bucket = 0;
  while (bucket + 1 < bucket_sums_.size() && target >= bucket_sums_[bucket]) target -= bucket_sums_[bucket++];
  const std::size_t end = std::min(coefficients_.size(), (bucket + 1) << bucket_shift_);
  std::size_t k = bucket << bucket_shift_;
  for (; k + 1 < end; ++k) {
    target -= priors_.alpha[k] * coefficients_[k];
    if (target < 0) break;
  }
  return static_cast<std::uint32_t>(k);
}

double WordByWordSampler::document_part(std::span<const std::uint32_t> document,
                                        const std::vector<std::uint32_t>& document_topics) const {
  // Four independent sums: a single running sum waits on each add.
  const std::size_t size = document_topics.size();
  double sums[4] = {0, 0, 0, 0};
  std::size_t i = 0;
  for (; i + 4 <= size; i += 4) {
    for (std::size_t lane = 0; lane < 4; ++lane) {
      const std::uint32_t k = document_topics[i + lane];
      sums[lane] += document[k] * coefficients_[k];
    }
  }
  for (; i < size; ++i) sums[0] += document[document_topics[i]] * coefficients_[document_topics[i]];
  return (sums[0] + sums[1]) + (sums[2] + sums[3]);
}

WordByWordSampler::Drawn WordByWordSampler::draw(std::span<const std::uint32_t> document,
                                                 const std::vector<std::uint32_t>& document_topics,
                                                 std::uint32_t old_topic, double target) const {
  // The walk mostly stops within the first, heaviest topics. The old topic's coefficient is 0 while
  // it walks (move() gave that topic the first interval), so the walk cannot stop there.
  double running = 0;
  std::size_t old_place = kUnlisted;
  for (std::size_t i = 0; i < document_topics.size(); ++i) {
    const std::uint32_t k = document_topics[i];
    if (k == old_topic) old_place = i;
    running += document[k] * coefficients_[k];
    if (running > target) return {k, i, old_place};
  }
  // Rounding: the walk's sum fell just short of the total. The last other topic with a count takes it.
  std::size_t last = document_topics.size() - 1;
  while (last > 0 && (document_topics[last] == old_topic || document[document_topics[last]] == 0)) --last;
  return {document_topics[last], last, old_place};
}

// A document's topic list is kept in decreasing order of n_dk (SparseLDA's trick): the topics a token
// leaves and joins are mostly near the front, and so is the draw's stopping point.
void WordByWordSampler::reorder(std::span<const std::uint32_t> document,
                                std::vector<std::uint32_t>& document_topics, std::uint32_t old_topic,
                                Drawn drawn) {
  auto place_of = [&](std::uint32_t topic) {
    return static_cast<std::size_t>(std::find(document_topics.begin(), document_topics.end(), topic) -
                                    document_topics.begin());
  };
  // The old topic sinks past the topics that now outnumber it; the drawn topic, if among them, moves
  // up one place.
  const std::size_t first = drawn.old_place != kUnlisted ? drawn.old_place : place_of(old_topic);
  std::size_t i = first;
  while (i + 1 < document_topics.size() && document[document_topics[i + 1]] > document[old_topic]) {
    document_topics[i] = document_topics[i + 1];
    ++i;
  }
  document_topics[i] = old_topic;
  if (drawn.place != kUnlisted && drawn.place > first && drawn.place <= i) --drawn.place;
  if (document[old_topic] == 0) document_topics.pop_back();
  // The new topic rises past those it now outnumbers. Drawn from the list, it is where the draw found
  // it; drawn from the prior terms, it is new to the list or must be looked for.
  const std::uint32_t new_topic = drawn.topic;
  if (document[new_topic] == 1) {
    i = document_topics.size();
    document_topics.push_back(new_topic);
  } else {
    i = drawn.place != kUnlisted ? drawn.place : place_of(new_topic);
  }
  while (i > 0 && document[document_topics[i - 1]] < document[new_topic]) {
    document_topics[i] = document_topics[i - 1];
    --i;
  }
  document_topics[i] = new_topic;
}

std::uint32_t WordByWordSampler::move(std::span<std::uint32_t> document,
                                      std::vector<std::uint32_t>& document_topics, std::uint32_t old_topic,
                                      double uniform, bool learn) {
  // Most tokens draw the topic they had, so the old topic takes the first interval of the draw: a
  // token that lands there stays, with no walk and no count or sum touched. The others take the
  // document's topics in list order after it, then the prior terms.
  const bool part_carried = document.data() == last_document_;
  const double in_part = part_carried ? last_part_ : document_part(document, document_topics);
  last_document_ = document.data();
  // The old topic's coefficient and term with the token out of the counts.
  const double in_coefficient = coefficients_[old_topic];
  const double out_coefficient =
      learn ? (word_[old_topic] - 1 + priors_.beta) * inverse_totals_[old_topic].of_one_less : in_coefficient;
  const double old_term = (document[old_topic] - 1) * out_coefficient;
  // sum_k n_dk c_k and sum_k alpha_k c_k with the token out: the draw's two parts.
  const double part = in_part - document[old_topic] * in_coefficient + old_term;
  const double prior_change = priors_.alpha[old_topic] * (out_coefficient - in_coefficient);
  const double target = uniform * (part + prior_sum_ + prior_change);
  if (target < old_term) {
    last_part_ = in_part;
    return old_topic;
  }
  // Past the first interval the token is out of the document's count, the coefficient and the prior
  // sums (which draw_prior reads); they are put back exactly as they were if it stays after all.
  --document[old_topic];
  const double in_bucket_sum = bucket_sums_[old_topic >> bucket_shift_];
  const double in_prior_sum = prior_sum_;
  coefficients_[old_topic] = out_coefficient;
  change_prior(old_topic, prior_change);
  Drawn drawn;
  if (target < part) {
    coefficients_[old_topic] = 0;  // its interval came first
    drawn = draw(document, document_topics, old_topic, target - old_term);
    coefficients_[old_topic] = out_coefficient;
  } else {
    // Rarely, once documents have settled, the draw lands in the prior terms.
    drawn = {draw_prior(target - part), kUnlisted, kUnlisted};
  }
  if (drawn.topic == old_topic) {
    // The prior terms gave the old topic back, or the walk fell back on it by rounding (no other
    // topic listed, the carried part an ulp above the old topic's term): the token stays.
    ++document[old_topic];
    coefficients_[old_topic] = in_coefficient;
    bucket_sums_[old_topic >> bucket_shift_] = in_bucket_sum;
    prior_sum_ = in_prior_sum;
    last_part_ = in_part;
    return old_topic;
  }
  const std::uint32_t topic = drawn.topic;
  if (learn) take_out(old_topic);
  last_part_ = part - document[topic] * coefficients_[topic];
  ++document[topic];
  if (learn) put_in(topic);
  last_part_ += document[topic] * coefficients_[topic];
  reorder(document, document_topics, old_topic, drawn);
  return topic;
}

std::uint32_t WordByWordSampler::resample(std::span<std::uint32_t> document,
                                          std::vector<std::uint32_t>& document_topics,
                                          std::uint32_t old_topic, double uniform) {
  return move(document, document_topics, old_topic, uniform, true);
}

std::uint32_t WordByWordSampler::fold_in(std::span<std::uint32_t> document,
                                         std::vector<std::uint32_t>& document_topics, std::uint32_t old_topic,
                                         double uniform) {
  return move(document, document_topics, old_topic, uniform, false);
}

double WordByWordSampler::predictive(std::span<const std::uint32_t> document,
                                     const std::vector<std::uint32_t>& document_topics, double length) const {
  // The draw's normaliser: sum_k n_dk c_k over the document's topics, plus sum_k alpha_k c_k.
  return (document_part(document, document_topics) + prior_sum_) / (length + priors_.alpha_sum);
}

std::uint64_t metropolis_hastings_sweep(std::span<TopicToken> tokens, std::span<std::uint32_t> block_counts,
                                        std::span<std::int64_t> totals, const DocumentTopics& documents,
                                        const TopicPriors& priors, int steps, FastRandom& random,
                                        std::span<std::uint32_t> local) {
  const std::size_t topics = totals.size();
  const auto last_topic = static_cast<std::uint32_t>(topics - 1);
  const std::span<const double> alpha = priors.alpha;
  const double beta = priors.beta;
  const double beta_sum = priors.beta_sum;
  // A uniform draw past the tokens' share picks a topic from the prior: with a symmetric prior,
  // (u - tokens) / prior in [0, K); with alpha_k apart, where u - tokens falls among their running sums.
  auto topic_of_excess = [&](double excess, double prior) {
    return std::min(static_cast<std::uint32_t>(excess / prior), last_topic);
  };
  const bool uniform_prior = symmetric(alpha);
  std::vector<double> alpha_running;
  if (!uniform_prior) std::partial_sum(alpha.begin(), alpha.end(), std::back_inserter(alpha_running));
  auto topic_of_alpha = [&](double excess) {
    if (uniform_prior) return topic_of_excess(excess, alpha[0]);
    const auto at =
        std::upper_bound(alpha_running.begin(), alpha_running.end(), excess) - alpha_running.begin();
    return std::min(static_cast<std::uint32_t>(at), last_topic);
  };

  // The document proposal reads a random token of a random document: a cache miss nearly every time,
  // which was most of a step's cost. Its random slot does not depend on the chain's state, so it is
  // drawn kLookahead tokens early and its cache line fetched while the tokens before it are moved.
  // Each planned proposal is a slot, or a topic with kPriorTopic set (the prior's share).
  constexpr std::size_t kLookahead = 16;
  constexpr std::uint32_t kPriorTopic = 0x80000000u;
  const auto per_token = static_cast<std::size_t>(steps);
  std::vector<std::uint32_t> planned(kLookahead * per_token);
  auto plan = [&](std::size_t i) {
    const TopicToken& token = tokens[i];
    const std::uint32_t first_slot = documents.offsets[token.document];
    const auto length = static_cast<double>(documents.offsets[token.document + 1] - first_slot);
    std::uint32_t* proposals = &planned[(i % kLookahead) * per_token];
    for (std::size_t step = 0; step < per_token; ++step) {
      const double u = random.uniform() * (length + priors.alpha_sum);
      if (u < length) {
        proposals[step] = first_slot + static_cast<std::uint32_t>(u);
        __builtin_prefetch(&documents.topics[proposals[step]]);
      } else {
        proposals[step] = kPriorTopic | topic_of_alpha(u - length);
      }
    }
  };
  for (std::size_t i = 0; i < std::min(kLookahead, tokens.size()); ++i) plan(i);

  std::uint64_t moved = 0;
  for (std::size_t begin = 0; begin < tokens.size();) {
    const std::uint32_t word_row = tokens[begin].word;
    std::size_t end = begin;
    while (end < tokens.size() && tokens[end].word == word_row) ++local[tokens[end++].topic];
    const auto word_tokens = static_cast<double>(end - begin);
    std::uint32_t* word = &block_counts[word_row * topics];
    for (std::size_t i = begin; i < end; ++i) {
      TopicToken& token = tokens[i];
      std::uint32_t* document = &documents.counts[token.document * topics];
      const std::uint32_t old_topic = token.topic;
      --document[old_topic];
      --word[old_topic];
      --totals[old_topic];
      --local[old_topic];
      // While the token moves it stays at its current topic s in the word's and the document's token
      // lists, which is what the proposals' reverse moves need.
      std::uint32_t s = old_topic;
      auto move_to = [&](std::uint32_t t) {
        s = t;
        token.topic = t;
        documents.topics[token.slot] = t;
      };
      const std::uint32_t* proposals = &planned[(i % kLookahead) * per_token];
      for (std::size_t step = 0; step < per_token; ++step) {
        const double u = random.uniform() * (word_tokens + beta * static_cast<double>(topics));
        std::uint32_t t = u < word_tokens ? tokens[begin + static_cast<std::size_t>(u)].topic
                                          : topic_of_excess(u - word_tokens, beta);
        if (t != s) {
          const double forward = (document[t] + alpha[t]) * (word[t] + beta) *
                                 (static_cast<double>(totals[s]) + beta_sum) * (local[s] + beta);
          const double backward = (document[s] + alpha[s]) * (word[s] + beta) *
                                  (static_cast<double>(totals[t]) + beta_sum) * (local[t] + beta);
          if (random.uniform() * backward < forward) move_to(t);
        }
        const std::uint32_t proposal = proposals[step];
        t = proposal & kPriorTopic ? proposal & ~kPriorTopic : documents.topics[proposal];
        if (t != s) {
          const double forward = (word[t] + beta) * (static_cast<double>(totals[s]) + beta_sum);
          const double backward = (word[s] + beta) * (static_cast<double>(totals[t]) + beta_sum);
          if (random.uniform() * backward < forward) move_to(t);
        }
      }
      if (i + kLookahead < tokens.size()) plan(i + kLookahead);
      ++document[s];
      ++word[s];
      ++totals[s];
      ++local[s];
      moved += s != old_topic;
    }
    for (std::size_t i = begin; i < end; ++i) --local[tokens[i].topic];
    begin = end;
  }
  return moved;
}

}  // namespace schmp::kernels
