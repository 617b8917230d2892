// read_text_documents (Mallet-style `name label word word ...` lines), growing a vocabulary and with a
// fixed one: read again with the vocabulary it grew, a file must give the same documents and leave no
// token out; with a small fixed vocabulary, every token is either kept or counted as left out.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_input.hpp"
#include "schmp/io.hpp"

namespace {

using schmp::fuzz::finding;
using schmp::io::TextDocument;
using schmp::io::Vocabulary;

struct Read {
  std::vector<TextDocument> documents;
  std::uint64_t left_out = 0;
  bool failed = false;
};

Read read(const std::string& path, Vocabulary& vocabulary, bool grow) {
  Read result;
  result.failed = schmp::fuzz::try_read(path, [&] {
                    result.left_out = schmp::io::read_text_documents(
                        path, vocabulary, grow,
                        [&](const TextDocument& document) { result.documents.push_back(document); });
                  }).has_value();
  return result;
}

std::uint64_t tokens(const Read& read) {
  std::uint64_t count = 0;
  for (const TextDocument& document : read.documents) count += document.words.size();
  return count;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = schmp::fuzz::write_input(data, size);

  Vocabulary grown;
  const Read first = read(path, grown, true);
  if (first.left_out != 0) finding("a growing vocabulary left tokens out");
  for (const TextDocument& document : first.documents) {
    if (document.name.empty()) finding("document without a name");
    for (const std::uint32_t word : document.words) {
      if (word >= grown.size()) finding("word id beyond the vocabulary");
    }
  }

  const std::size_t grown_size = grown.size();
  const Read again = read(path, grown, false);
  if (grown.size() != grown_size) finding("a fixed vocabulary grew");
  if (again.failed != first.failed || again.left_out != 0 ||
      again.documents.size() != first.documents.size()) {
    finding("reading with the vocabulary it grew gives another result");
  }
  for (std::size_t d = 0; d < first.documents.size(); ++d) {
    const TextDocument& a = first.documents[d];
    const TextDocument& b = again.documents[d];
    if (a.name != b.name || a.words != b.words || a.source != b.source)
      finding("document differs on a second read");
  }

  Vocabulary fixed(std::vector<std::string>{"the", "a", "of", "cat"});
  const Read small = read(path, fixed, false);
  if (fixed.size() != 4) finding("a fixed vocabulary grew");
  if (small.failed != first.failed) finding("success depends on the vocabulary");
  if (!small.failed && tokens(small) + small.left_out != tokens(first)) {
    finding("tokens neither kept nor left out");
  }
  return 0;
}
