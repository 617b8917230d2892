#include "model.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <numeric>
#include <ostream>

#include "schmp/kernels/topic_kernels.hpp"
#include "schmp/output.hpp"

namespace schmp::lda {

namespace {

constexpr char kHeader[] = "# schmp-lda word-topic counts: ";
constexpr char kAlphaLine[] = "# alpha by topic:";

// PREFIX.topics: a topic a line, its top words with p(word | topic); with scores, best NPMI first (a
// topic of too few words to score last), else in topic order.
void write_topics(std::ostream& out, const Model& model, const std::vector<std::int64_t>& totals,
                  int top_words, const TopicScores& scores) {
  const auto width = static_cast<std::size_t>(model.topics);
  TopWords best(model.topics, top_words);
  for (std::uint32_t word = 0; word < model.words; ++word)
    best.offer(word, std::span<const std::uint32_t>(model.word_topic).subspan(word * width, width));
  const std::vector<std::vector<std::uint32_t>> words = best.words();
  std::vector<std::size_t> order(width);
  std::iota(order.begin(), order.end(), 0);
  const bool scored = !scores.npmi.empty();
  if (scored) {
    const auto key = [&](std::size_t k) { return std::isnan(scores.npmi[k]) ? -INFINITY : scores.npmi[k]; };
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return key(a) > key(b); });
    out << "# " << width << " topics, best first by the NPMI coherence of their top " << top_words
        << " words\n";
  }
  const bool named = model.vocabulary.size() >= model.words;
  const double beta_sum = model.beta * model.words;
  for (const std::size_t k : order) {
    out << "topic " << k << " (alpha " << model.alpha[k] << ", " << totals[k] << " tokens";
    if (scored) out << ", umass " << scores.umass[k] << ", npmi " << scores.npmi[k];
    out << "):";
    for (const std::uint32_t word : words[k]) {
      const double p =
          (model.word_topic[word * width + k] + model.beta) / (static_cast<double>(totals[k]) + beta_sum);
      out << ' ' << (named ? model.vocabulary.word(word) : std::to_string(word + 1)) << ' ' << p;
    }
    out << '\n';
  }
}

}  // namespace

std::vector<std::int64_t> Model::totals() const {
  const auto width = static_cast<std::size_t>(topics);
  std::vector<std::int64_t> totals(width, 0);
  for (std::size_t i = 0; i < word_topic.size(); ++i) totals[i % width] += word_topic[i];
  return totals;
}

double Model::alpha_sum() const { return std::accumulate(alpha.begin(), alpha.end(), 0.0); }

void write_model(const std::string& prefix, const Model& model, int top_words, const TopicScores& scores,
                 std::vector<io::FileWriter> more) {
  const auto width = static_cast<std::size_t>(model.topics);
  std::vector<io::FileWriter> files;
  files.emplace_back(prefix + ".word_topic", [&](std::ostream& out) {
    out << kHeader << model.words << " words, " << model.topics << " topics, alpha ";
    char number[32];
    const auto write_number = [&](auto value) {
      out.write(number, std::to_chars(number, number + sizeof number, value).ptr - number);
    };
    write_number(kernels::symmetric(model.alpha) ? model.alpha.front()
                                                 : model.alpha_sum() / static_cast<double>(width));
    out << ", beta ";
    write_number(model.beta);
    out << '\n';
    if (!kernels::symmetric(model.alpha)) {
      out << kAlphaLine;
      for (const double a : model.alpha) {
        out << ' ';
        write_number(a);
      }
      out << '\n';
    }
    for (std::size_t word = 0; word < model.words; ++word) {
      for (std::size_t k = 0; k < width; ++k) {
        if (k) out << ' ';
        write_number(model.word_topic[word * width + k]);
      }
      out << '\n';
    }
  });
  const bool named = model.vocabulary.size() >= model.words;
  if (named) {
    files.emplace_back(prefix + ".vocab", [&](std::ostream& out) {
      for (std::uint32_t word = 0; word < model.words; ++word) out << model.vocabulary.word(word) << '\n';
    });
  }
  const std::vector<std::int64_t> totals = model.totals();
  files.emplace_back(prefix + ".topics",
                     [&](std::ostream& out) { write_topics(out, model, totals, top_words, scores); });
  std::move(more.begin(), more.end(), std::back_inserter(files));
  io::write_files_atomically(files);
  if (!named) {
    // A .vocab left by an earlier model under this prefix would be read with this one's counts.
    std::error_code ignored;
    std::filesystem::remove(prefix + ".vocab", ignored);
  }
}

Model read_model(const std::string& prefix) {
  const std::string path = prefix + ".word_topic";
  std::ifstream in(path);
  if (!in) throw io::InputError(path, 0, "cannot open");
  Model model;
  std::string line;
  std::uint64_t number = 1;
  auto fail = [&](const std::string& message) { throw io::InputError(path, number, message); };
  if (!io::read_whole_line(in, line, path, number)) fail("empty: not a schmp-lda model");
  unsigned long long words = 0;
  int topics = 0;
  double alpha = 0;
  const std::string format = std::string(kHeader) + "%llu words, %d topics, alpha %lf, beta %lf";
  if (std::sscanf(line.c_str(), format.c_str(), &words, &topics, &alpha, &model.beta) != 4 ||
      line.rfind(kHeader, 0) != 0) {
    fail("expected '" + std::string(kHeader) + "W words, K topics, alpha A, beta B': not a schmp-lda model");
  }
  const auto finite_positive = [](double prior) { return std::isfinite(prior) && prior > 0; };
  if (words == 0 || words > UINT32_MAX || topics < 1 || topics > 100000 || !finite_positive(alpha) ||
      !finite_positive(model.beta) || !std::isfinite(model.beta * static_cast<double>(words)))
    fail("bad sizes or priors in the header");
  // Each word's line holds at least two bytes a topic: sizes the file cannot hold are refused before
  // their memory is asked for.
  if (std::filesystem::is_regular_file(path) &&
      static_cast<double>(words) * 2 * topics > static_cast<double>(std::filesystem::file_size(path)))
    fail("the header's words and topics ask for more counts than the file holds");
  model.words = static_cast<std::uint32_t>(words);
  model.topics = topics;
  const auto width = static_cast<std::size_t>(topics);
  model.alpha.assign(width, alpha);
  model.word_topic.assign(model.words * width, 0);
  ++number;
  if (!io::read_whole_line(in, line, path, number)) fail("missing the counts of word 1");
  if (line.rfind(kAlphaLine, 0) == 0) {
    // K priors, each finite and positive, and nothing after them.
    const char* cursor = line.data() + sizeof kAlphaLine - 1;
    const char* end = line.data() + line.size();
    for (double& a : model.alpha) {
      while (cursor < end && *cursor == ' ') ++cursor;
      const auto [next, error] = std::from_chars(cursor, end, a);
      if (error != std::errc() || !finite_positive(a))
        fail("expected " + std::to_string(width) + " priors alpha_k, finite and positive");
      cursor = next;
    }
    while (cursor < end && (*cursor == ' ' || *cursor == '\r')) ++cursor;
    if (cursor != end) fail("more than " + std::to_string(width) + " priors alpha_k");
    ++number;
    if (!io::read_whole_line(in, line, path, number)) fail("missing the counts of word 1");
  }
  for (std::size_t word = 0; word < model.words; ++word) {
    if (word > 0) {
      ++number;
      if (!io::read_whole_line(in, line, path, number))
        fail("missing the counts of word " + std::to_string(word + 1));
    }
    const char* cursor = line.data();
    const char* end = line.data() + line.size();
    for (std::size_t k = 0; k < width; ++k) {
      while (cursor < end && *cursor == ' ') ++cursor;
      const auto [next, error] = std::from_chars(cursor, end, model.word_topic[word * width + k]);
      if (error != std::errc()) fail("expected " + std::to_string(width) + " counts");
      cursor = next;
    }
    while (cursor < end && (*cursor == ' ' || *cursor == '\r')) ++cursor;
    if (cursor != end) fail("more than " + std::to_string(width) + " counts");
  }
  ++number;
  if (io::read_whole_line(in, line, path, number) && !line.empty())
    fail("more than the " + std::to_string(words) + " words the header declares");
  std::ifstream vocabulary(prefix + ".vocab");
  if (vocabulary) {
    // Written a word a line: a last word without its newline was cut short and would be another word.
    char last = '\n';
    if (vocabulary.seekg(-1, std::ios::end)) vocabulary.get(last);
    if (last != '\n') throw io::cut_short(prefix + ".vocab", 0);
    model.vocabulary = io::read_vocabulary(prefix + ".vocab");
    if (model.vocabulary.size() != model.words) {
      throw io::InputError(prefix + ".vocab", 0,
                           "holds " + std::to_string(model.vocabulary.size()) + " words, the model " +
                               std::to_string(model.words));
    }
  }
  return model;
}

}  // namespace schmp::lda
