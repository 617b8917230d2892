// Private to schmp_io and its tests: the readers of schmp/io.hpp that stream their input, with the
// number of bytes they read and parse at once as a parameter (the public ones pass kChunkBytes), so that
// tests can make lines straddle chunk edges. Records, line numbers and errors do not depend on it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "line_reader.hpp"
#include "schmp/dataset.hpp"
#include "schmp/io.hpp"

namespace schmp::io::internal {

// How many bytes of text a streaming reader reads and parses at once: this, not the input's size (or the
// size of the byte range a worker reads), bounds the text (and, for ratings, the parsed records) it
// holds while reading. 64 MiB still feeds 16 parsing threads
// kMinBytesPerTask each (parallel_parse.hpp) and is small beside the datasets the workers build.
inline constexpr std::uint64_t kChunkBytes = std::uint64_t{64} << 20;

RatingsRead read_ratings(const std::string& path, int index_base, const IdBounds& bounds,
                         const std::function<void(const Rating&)>& visit, ByteRange range,
                         std::uint64_t chunk_bytes);

BagOfWordsRange read_bag_of_words(const std::string& path, ByteRange range,
                                  const std::function<void(const WordCount&)>& visit,
                                  std::uint64_t chunk_bytes);

Vocabulary read_vocabulary(const std::string& path, std::uint64_t chunk_bytes);

ColumnBlock read_column_block(const std::string& data, std::uint32_t begin, std::uint32_t end,
                              std::uint64_t chunk_bytes);

// read_libsvm on lines already read (a chunk of a ChunkReader, or a range): those whose first byte lies
// in `lines_in` (offsets into text.text()), so that threads can parse consecutive pieces of one text.
SparseRows parse_libsvm(const RangeText& text, ByteRange lines_in = {},
                        const std::vector<std::string>& names = {});

// The entries of a MatrixMarket coordinate file (of the lines of `range` past the header, as
// read_matrix_market takes them) a chunk at a time: visit() gets each chunk's entries with the header's
// sizes. Returns those sizes, without entries; the entry count is not checked.
Coordinates read_matrix_market_in_chunks(const std::string& path, std::uint64_t chunk_bytes,
                                         const std::function<void(const Coordinates&)>& visit,
                                         ByteRange range = {});

// The numbers of a plain-text vector (one per line, `#` comments, blank lines skipped) on the lines of
// `text`, with the source of each value's line in `sources` when given.
std::vector<double> read_text_vector(const RangeText& text, std::vector<std::uint64_t>* sources);

std::uint64_t read_text_documents(const std::string& path, Vocabulary& vocabulary, bool grow,
                                  const std::function<void(const TextDocument&)>& visit, ByteRange range,
                                  std::uint64_t chunk_bytes);

}  // namespace schmp::io::internal
