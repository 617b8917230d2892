// read_bag_of_words (UCI docword.txt), and read_vocabulary (vocab.txt) on the same input. Entries visited
// must lie inside the header's sizes and be as many as it declares; a vocabulary must name its words by
// line.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_input.hpp"
#include "schmp/io.hpp"

using schmp::fuzz::finding;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = schmp::fuzz::write_input(data, size);

  std::vector<schmp::io::WordCount> entries;
  schmp::fuzz::try_read(path, [&] {
    const schmp::io::CorpusSize declared = schmp::io::read_bag_of_words(
        path, [&](const schmp::io::WordCount& entry) { entries.push_back(entry); });
    if (entries.size() != declared.entries) finding("entry count differs from the header's");
    for (std::size_t e = 0; e < entries.size(); ++e) {
      const schmp::io::WordCount& entry = entries[e];
      if (entry.document >= declared.documents || entry.word >= declared.words) finding("entry beyond sizes");
      if (entry.count == 0) finding("count 0");
      if (e > 0 && entry.source <= entries[e - 1].source) finding("entry sources not increasing");
    }
  });

  schmp::fuzz::try_read(path, [&] {
    const schmp::io::Vocabulary vocabulary = schmp::io::read_vocabulary(path);
    for (std::uint32_t id = 0; id < vocabulary.size(); ++id) {
      if (vocabulary.word(id).empty()) finding("empty word");
      if (vocabulary.find(vocabulary.word(id)) != id) finding("word does not map back to its id");
    }
  });
  return 0;
}
