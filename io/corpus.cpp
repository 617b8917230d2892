// Text corpora for topic models: UCI bag-of-words files, vocabularies, and Mallet-style documents.
#include <algorithm>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "line_reader.hpp"
#include "schmp/io.hpp"
#include "whole_file_readers.hpp"

namespace schmp::io {

namespace {

using internal::Where;

// The most documents or words a bag-of-words header may declare.
constexpr std::uint64_t kMostIds = 0xFFFFFFFE;

// A 1-based id of at most `bound`, returned 0-based.
std::uint32_t parse_one_based(std::string_view token, const char* what, std::uint64_t bound,
                              const Where& where) {
  const std::uint64_t id = internal::parse_count(token, what, where);
  if (id == 0) where.fail(std::string(what) + " 0 (ids are 1-based)");
  if (id > bound) {
    where.fail(std::string(what) + " " + std::to_string(id) + " beyond the " + std::to_string(bound) +
               " the header declares");
  }
  return static_cast<std::uint32_t>(id - 1);
}

}  // namespace

namespace internal {

BagOfWordsRange read_bag_of_words(const std::string& path, ByteRange range,
                                  const std::function<void(const WordCount&)>& visit,
                                  std::uint64_t chunk_bytes) {
  // The header is read from the start of the data whatever the range, in small chunks: a worker far
  // into the file reads only the header's lines before its range.
  constexpr std::uint64_t kHeaderChunkBytes = 4096;
  LineStream header(path, kHeaderChunkBytes);
  BagOfWordsRange read;
  CorpusSize& size = read.declared;
  const char* header_names[] = {"document count D", "word count W", "entry count NNZ"};
  std::uint64_t* header_values[] = {&size.documents, &size.words, &size.entries};
  std::uint64_t* header_sources[] = {&size.documents_source, &size.words_source, nullptr};
  // The last line read, where a header that stops short is reported: the file's line 0 when it is empty.
  std::optional<std::uint64_t> last_source;
  for (int field = 0; field < 3;) {
    const auto line = header.next();
    if (!line) {
      const std::string message = std::string("missing the header's ") + header_names[field];
      throw last_source ? InputError::at(path, *last_source, message) : InputError(path, 0, message);
    }
    last_source = line->source;
    const Where where = line->where();
    Tokenizer tokens(line->text);
    const auto value = tokens.next();
    if (!value) continue;
    *header_values[field] = parse_count(*value, header_names[field], where);
    if (header_sources[field]) *header_sources[field] = line->source;
    // Ids are 32-bit: a header declaring more documents or words is an error here, not a huge model later.
    if (field < 2 && *header_values[field] > kMostIds) {
      where.fail(std::string(header_names[field]) + " " + std::to_string(*header_values[field]) +
                 " out of range (largest is " + std::to_string(kMostIds) + ")");
    }
    if (const auto extra = tokens.next()) {
      where.fail("unexpected " + quoted(*extra) + " after the " + header_names[field] +
                 " (the header is three lines: D, W, NNZ)");
    }
    ++field;
  }
  LineStream lines(path, chunk_bytes, ByteRange{std::max(range.begin, header.offset()), range.end});
  while (const auto line = lines.next()) {
    const Where where = line->where();
    Tokenizer tokens(line->text);
    const auto document = tokens.next();
    if (!document) continue;
    const auto word = tokens.next();
    const auto count = tokens.next();
    if (!word || !count) where.fail("expected 'doc word count'");
    if (const auto extra = tokens.next())
      where.fail("unexpected " + quoted(*extra) + " after 'doc word count'");
    WordCount entry;
    entry.document = parse_one_based(*document, "document id", size.documents, where);
    entry.word = parse_one_based(*word, "word id", size.words, where);
    const std::uint64_t occurrences = parse_count(*count, "count", where);
    if (occurrences == 0) where.fail("count 0 (an entry says how often the word occurs: at least once)");
    if (occurrences > 0xFFFFFFFFull) where.fail("count " + std::to_string(occurrences) + " out of range");
    entry.count = static_cast<std::uint32_t>(occurrences);
    entry.source = line->source;
    ++read.entries;
    visit(entry);
  }
  return read;
}

}  // namespace internal

Vocabulary::Vocabulary(std::vector<std::string> words) {
  for (std::string& word : words) {
    if (find(word) != kUnknown) throw std::invalid_argument("repeated word '" + word + "'");
    add(word);
  }
}

std::uint32_t Vocabulary::find(std::string_view word) const {
  const auto found = ids_.find(std::string(word));
  return found == ids_.end() ? kUnknown : found->second;
}

std::uint32_t Vocabulary::add(std::string_view word) {
  const auto [found, added] = ids_.emplace(std::string(word), size());
  if (added) {
    if (size() == kUnknown) throw std::length_error("vocabulary of 2^32 - 1 words");
    words_.emplace_back(word);
  }
  return found->second;
}

namespace internal {

Vocabulary read_vocabulary(const std::string& path, std::uint64_t chunk_bytes) {
  LineStream lines(path, chunk_bytes);
  Vocabulary vocabulary;
  // Blank lines at the end are only the file's end; one before a word would shift every id after it.
  std::optional<std::uint64_t> blank;
  while (const auto line = lines.next()) {
    const Where where = line->where();
    Tokenizer tokens(line->text);
    const auto word = tokens.next();
    if (!word) {
      if (!blank) blank = line->source;
      continue;
    }
    if (blank) {
      throw InputError::at(path, *blank, "blank line: line i names word i, so every line must hold a word");
    }
    if (const auto extra = tokens.next()) where.fail("unexpected " + quoted(*extra) + " after the word");
    const std::uint32_t before = vocabulary.size();
    const std::uint32_t id = vocabulary.add(*word);
    if (id != before) {
      // No blank line came before: word `id` is on the data's line `id`, counting from 0 over every
      // part, found (for the message only) without keeping a line per word.
      InputFile file(path);
      const std::string first = line_name(path, start_of_line(file, id), line->source);
      where.fail("repeated word " + quoted(*word) + " (first on " + first + ")");
    }
  }
  return vocabulary;
}

std::uint64_t read_text_documents(const std::string& path, Vocabulary& vocabulary, bool grow,
                                  const std::function<void(const TextDocument&)>& visit, ByteRange range,
                                  std::uint64_t chunk_bytes) {
  LineStream lines(path, chunk_bytes, range);
  std::uint64_t left_out = 0;
  TextDocument document;
  while (const auto line = lines.next()) {
    const Where where = line->where();
    Tokenizer tokens(line->text);
    const auto name = tokens.next();
    if (!name) continue;
    if (!tokens.next()) where.fail("expected 'name label word word ...': no label after the name");
    document.name = std::string(*name);
    document.words.clear();
    document.source = line->source;
    while (const auto word = tokens.next()) {
      const std::uint32_t id = grow ? vocabulary.add(*word) : vocabulary.find(*word);
      if (id == Vocabulary::kUnknown) {
        ++left_out;
      } else {
        document.words.push_back(id);
      }
    }
    visit(document);
  }
  return left_out;
}

}  // namespace internal

void check_entry_count(const std::string& path, const CorpusSize& declared, std::uint64_t entries) {
  if (entries != declared.entries) {
    throw InputError(path, 0,
                     "the header declares " + std::to_string(declared.entries) +
                         " entries (NNZ) but the file holds " + std::to_string(entries));
  }
}

CorpusSize read_bag_of_words(const std::string& path, const std::function<void(const WordCount&)>& visit) {
  const BagOfWordsRange read = internal::read_bag_of_words(path, ByteRange{}, visit, internal::kChunkBytes);
  check_entry_count(path, read.declared, read.entries);
  return read.declared;
}

BagOfWordsRange read_bag_of_words(const std::string& path, ByteRange range,
                                  const std::function<void(const WordCount&)>& visit) {
  return internal::read_bag_of_words(path, range, visit, internal::kChunkBytes);
}

Vocabulary read_vocabulary(const std::string& path) {
  return internal::read_vocabulary(path, internal::kChunkBytes);
}

std::uint64_t read_text_documents(const std::string& path, Vocabulary& vocabulary, bool grow,
                                  const std::function<void(const TextDocument&)>& visit, ByteRange range) {
  return internal::read_text_documents(path, vocabulary, grow, visit, range, internal::kChunkBytes);
}

}  // namespace schmp::io
