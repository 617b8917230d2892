// Run under mpirun by peers_test: every rank checks the workers' collectives (runtime/peers.hpp) on
// MPI_COMM_WORLD and prints "rank R: ok" or what went wrong.
//   peers_probe                 sums, maxima and routes; messages, broadcasts and sums in pieces;
//                               summed messages of different shapes refused
//   peers_probe fail N          the last rank fails after N calls, and every other rank must stop
//                               with PeerFailure at its next call instead of waiting
//   peers_probe documents PATH  LDA's documents of a UCI corpus read among the ranks, each reading
//                               its byte range, against a whole read dealt as before
//   peers_probe text PATH       the same for a text corpus (Mallet's format), its words' ids too

#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "apps/lda/documents.hpp"
#include "runtime/mpi.hpp"
#include "runtime/peers.hpp"

namespace {

struct Record {
  int from = 0;
  int to = 0;
  std::uint64_t sequence = 0;
};

// How many records worker `from` hands worker `to`: uneven, none for some pairs, and enough for many
// steps of 64 bytes.
std::uint64_t records_between(int from, int to) {
  return static_cast<std::uint64_t>((from * 7 + to * 3) % 11) * 5;
}

std::string check(schmp::Peers& peers) {
  const int me = peers.index();
  const int count = peers.count();
  if (peers.max(static_cast<std::uint64_t>(me) * 3 + 1) != static_cast<std::uint64_t>(count - 1) * 3 + 1)
    return "max";
  // Worker w contributes w + 1 ones: entry i sums to the workers above i.
  std::vector<std::uint64_t> ones(static_cast<std::size_t>(me) + 1, 1);
  peers.sum(ones);
  if (ones.size() != static_cast<std::size_t>(count)) return "sum: length";
  for (int i = 0; i < count; ++i) {
    if (ones[static_cast<std::size_t>(i)] != static_cast<std::uint64_t>(count - i)) return "sum: values";
  }
  std::vector<std::vector<Record>> outgoing(static_cast<std::size_t>(count));
  for (int to = 0; to < count; ++to) {
    for (std::uint64_t k = 0; k < records_between(me, to); ++k)
      outgoing[static_cast<std::size_t>(to)].push_back(Record{me, to, k});
  }
  const std::vector<Record> received = peers.route(outgoing);
  std::size_t next = 0;
  for (int from = 0; from < count; ++from) {
    for (std::uint64_t k = 0; k < records_between(from, me); ++k, ++next) {
      if (next >= received.size()) return "route: too few records";
      const Record& r = received[next];
      if (r.from != from || r.to != me || r.sequence != k) return "route: record out of place";
    }
  }
  if (next != received.size()) return "route: too many records";
  return "ok";
}

// Messages of every length around the piece size, sent round the ranks and broadcast from each, in
// pieces of 10 bytes: they arrive whole.
std::string check_pieces(MPI_Comm comm) {
  constexpr std::size_t kPiece = 10;
  int me = 0, count = 1;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &count);
  schmp::detail::Waiter waiter(false);
  auto message = [](int from, std::size_t length) {
    schmp::Bytes bytes(length);
    for (std::size_t i = 0; i < length; ++i)
      bytes[i] = static_cast<std::byte>(from * 31 + static_cast<int>(i));
    return bytes;
  };
  const std::size_t lengths[] = {0, 1, kPiece - 1, kPiece, kPiece + 1, 2 * kPiece, 3 * kPiece + 7, 5000};
  schmp::detail::Outbox outbox(kPiece);
  const int next = (me + 1) % count, previous = (me + count - 1) % count;
  for (const std::size_t length : lengths) outbox.send(comm, next, 7, message(me, length));
  for (const std::size_t length : lengths) {
    const schmp::Bytes received = schmp::detail::receive_bytes(comm, previous, 7, waiter, &outbox, kPiece);
    if (received != message(previous, length)) return "pieces: a message sent in pieces arrived otherwise";
    // Announced by its length, a long message is allocated once, not grown piece by piece.
    if (length >= kPiece && received.capacity() != length)
      return "pieces: a long message's buffer grew past its length";
  }
  outbox.drain(waiter);
  for (int root = 0; root < count; ++root) {
    for (const std::size_t length :
         {std::size_t{0}, std::size_t{3000}, std::size_t{2040}, std::size_t{2041}}) {
      schmp::Bytes bytes = me == root ? message(root, length) : schmp::Bytes(3, std::byte{1});
      schmp::detail::broadcast_bytes(comm, root, bytes, waiter, kPiece);
      if (bytes != message(root, length)) return "pieces: a broadcast in pieces arrived otherwise";
    }
  }
  // Sums in pieces of 4 values, onto one rank and onto every rank: rank r adds r + i to entry i.
  constexpr std::size_t kSumPiece = 4;
  for (const std::size_t length : {std::size_t{0}, std::size_t{3}, std::size_t{4}, std::size_t{9}}) {
    auto contribution = [&] {
      std::vector<double> values(length);
      for (std::size_t i = 0; i < length; ++i) values[i] = me + static_cast<double>(i);
      return values;
    };
    auto summed = [&](std::size_t i) { return count * (count - 1) / 2.0 + count * static_cast<double>(i); };
    std::vector<double> everywhere = contribution();
    schmp::detail::allreduce_sum(comm, everywhere, waiter, kSumPiece);
    std::vector<double> onto_last = contribution();
    schmp::detail::reduce_sum(comm, count - 1, onto_last, waiter, kSumPiece);
    for (std::size_t i = 0; i < length; ++i) {
      if (everywhere[i] != summed(i)) return "pieces: an allreduce in pieces summed otherwise";
      if (me == count - 1 && onto_last[i] != summed(i))
        return "pieces: a reduction in pieces summed otherwise";
    }
  }
  return "ok";
}

// Summed messages whose shapes differ across the ranks are refused on every rank, before MPI is asked to
// add buffers of different lengths, and only the first message of each kind is compared.
std::string check_shapes(MPI_Comm comm) {
  int me = 0, count = 1;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &count);
  const bool last = me == count - 1;
  auto message = [](std::vector<std::uint64_t> shape) {
    schmp::Flat flat;
    for (const std::uint64_t length : shape) flat.values.resize(flat.values.size() + length, 1.0);
    flat.shape = std::move(shape);
    return flat;
  };
  schmp::detail::SameShape shapes;
  try {
    shapes.check(comm, message({3, 2}), "Partial");
    // Already compared: not a collective again, so the ranks need not take part alike.
    if (last) shapes.check(comm, message({9}), "Partial");
  } catch (const std::exception&) {
    return "shapes: messages of one shape were refused";
  }
  // Another length on the last rank, then the same length cut into other vectors.
  for (const auto& ragged :
       {std::vector<std::uint64_t>{3, last ? 3u : 2u}, {last ? 4u : 3u, last ? 1u : 2u}}) {
    try {
      schmp::detail::SameShape().check(comm, message(ragged), "Stats");
      if (count > 1) return "shapes: messages of other shapes were let through";
    } catch (const std::runtime_error& e) {
      if (std::string(e.what()).find("the workers' Stats messages differ in shape") != 0)
        return std::string("shapes: ") + e.what();
    }
  }
  return "ok";
}

struct Document {
  std::uint32_t id;
  std::vector<std::uint32_t> words;
  bool operator==(const Document&) const = default;
};

std::string check_documents(schmp::Peers& peers, const std::string& path, bool text) {
  std::vector<Document> dealt;
  std::vector<std::uint64_t> word_tokens;
  const schmp::lda::CorpusFiles files =
      text ? schmp::lda::CorpusFiles{"", path} : schmp::lda::CorpusFiles{path, ""};
  schmp::io::Vocabulary vocabulary;
  const auto read =
      schmp::lda::read_dealt_documents(files, vocabulary, true, UINT32_MAX, peers, &word_tokens,
                                       [&](std::uint32_t id, const std::vector<std::uint32_t>& words) {
                                         dealt.push_back({id, words});
                                       });

  std::vector<Document> expected;
  std::vector<std::uint64_t> expected_tokens;
  schmp::lda::DocumentDealer dealer(peers.count());
  schmp::io::Vocabulary whole_vocabulary;
  const auto whole =
      schmp::lda::read_documents(files, whole_vocabulary, true, UINT32_MAX,
                                 [&](std::uint32_t id, const std::vector<std::uint32_t>& words) {
                                   for (const std::uint32_t word : words) {
                                     if (word >= expected_tokens.size())
                                       expected_tokens.resize(word + std::size_t{1}, 0);
                                     ++expected_tokens[word];
                                   }
                                   if (dealer.deal(words.size()) == static_cast<std::uint32_t>(peers.index()))
                                     expected.push_back({id, words});
                                 });
  expected_tokens.resize(whole.words, 0);
  if (read.words != whole.words) return "documents: word count";
  if (vocabulary.size() != whole_vocabulary.size()) return "documents: vocabulary size";
  for (std::uint32_t id = 0; id < vocabulary.size(); ++id) {
    if (vocabulary.word(id) != whole_vocabulary.word(id)) return "documents: words numbered otherwise";
  }
  if (word_tokens != expected_tokens) return "documents: word tokens";
  if (dealt != expected) return "documents: not the documents a whole read deals";
  return "ok";
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const std::string mode = argc > 2 ? argv[1] : "";
  const int fail_after = mode == "fail" ? std::atoi(argv[2]) : -1;
  int status = 0;
  {
    schmp::detail::Waiter waiter(false);
    schmp::detail::WorkerPeers peers(MPI_COMM_WORLD, waiter, 64);
    std::string outcome;
    bool failed = false;
    try {
      if (mode == "documents" || mode == "text") {
        outcome = check_documents(peers, argv[2], mode == "text");
        if (outcome != "ok") status = 1;
      } else if (fail_after < 0) {
        outcome = check(peers);
        if (outcome == "ok") outcome = check_pieces(MPI_COMM_WORLD);
        if (outcome == "ok") outcome = check_shapes(MPI_COMM_WORLD);
        if (outcome != "ok") status = 1;
      } else {
        for (int call = 0;; ++call) {
          if (rank == size - 1 && call == fail_after) throw std::runtime_error("bad input");
          peers.max(1);
        }
      }
    } catch (const schmp::PeerFailure&) {
      outcome = "stopped by a peer";
    } catch (const std::exception& e) {
      outcome = e.what();
      failed = true;
    }
    peers.close(failed);
    std::printf("rank %d: %s\n", rank, outcome.c_str());
  }
  MPI_Finalize();
  return status;
}
