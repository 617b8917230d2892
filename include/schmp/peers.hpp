// Collectives among the workers of a job, for a Worker's constructor (rabit's Allreduce, in spirit).
//
// A worker that reads only its own byte range of a shared input learns there what the whole input
// decides only together: the largest id, every word's count, and which records belong to the other
// workers (the ratings of their users, the lines of their documents). Peers adds these up and hands the
// records to their owners:
//
//   Worker(const Config& config, const WorkerContext& context) {
//     schmp::Peers& peers = schmp::peers_of(context);
//     ... read io::worker_range(path, peers) of the input ...
//     const std::uint64_t users = peers.max(my_largest_user + 1);
//     peers.sum(item_counts);                       // every worker gets the job's counts
//     std::vector<Rating> mine = peers.route(by_owner);  // by_owner[w]: what worker w is to keep
//   }
//
// Every worker makes the same calls in the same order, in its constructor and only there. A worker
// that fails before or between them (bad input in its range) stops the others at their next call with
// PeerFailure, and the framework reports the first failure once; no worker waits for one that never
// comes. In a job of one worker every call returns at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <span>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "schmp/program.hpp"

namespace schmp {

// Raised by a Peers call when another worker failed: the framework reports that worker's error.
class PeerFailure : public std::runtime_error {
 public:
  PeerFailure() : std::runtime_error("another worker failed while the workers were being built") {}
};

class Peers {
 public:
  Peers() = default;  // a job of one worker
  virtual ~Peers() = default;
  Peers(const Peers&) = delete;
  Peers& operator=(const Peers&) = delete;

  int index() const { return index_; }  // this worker's, 0 .. count() - 1
  int count() const { return count_; }

  // The largest of the workers' values.
  std::uint64_t max(std::uint64_t value) { return reduce_max(value); }

  // Elementwise sums across the workers, onto every worker. The vectors may differ in length: each
  // counts as zeros past its end, and every worker gets the longest length.
  void sum(std::vector<std::uint64_t>& values) { reduce_sum(values); }

  // Hands outgoing[w] to worker w (outgoing holds count() vectors; any may be empty). Returns what the
  // workers handed this one, worker 0's records first, each worker's in the order it gave them: records
  // read from consecutive byte ranges arrive in file order.
  template <class T>
  requires std::is_trivially_copyable_v<T> std::vector<T> route(const std::vector<std::vector<T>>& outgoing) {
    if (outgoing.size() != static_cast<std::size_t>(count_))
      throw std::invalid_argument("Peers::route: one vector per worker, and no more");
    std::vector<std::span<const std::byte>> bytes;
    bytes.reserve(outgoing.size());
    for (const std::vector<T>& records : outgoing) bytes.push_back(std::as_bytes(std::span(records)));
    std::vector<T> received;
    exchange(bytes, [&](std::uint64_t total) {
      received.resize(static_cast<std::size_t>(total / sizeof(T)));
      return std::as_writable_bytes(std::span(received));
    });
    return received;
  }

 protected:
  Peers(int index, int count) : index_(index), count_(count) {}

  // The transport (the framework's, over MPI); the defaults serve a job of one worker.
  virtual std::uint64_t reduce_max(std::uint64_t value) { return value; }
  virtual void reduce_sum(std::vector<std::uint64_t>&) {}
  // outgoing[w]'s bytes go to worker w. Calls `receive` once with the number of bytes coming to this
  // worker, and writes them, worker 0's first, into the span it returns.
  virtual void exchange(const std::vector<std::span<const std::byte>>& outgoing,
                        const std::function<std::span<std::byte>(std::uint64_t total)>& receive) {
    const std::span<std::byte> destination = receive(outgoing[0].size());
    if (!outgoing[0].empty()) std::memcpy(destination.data(), outgoing[0].data(), outgoing[0].size());
  }

 private:
  int index_ = 0;
  int count_ = 1;
};

// The workers a Worker is built among: the framework's, or, for a context without any (a worker made
// alone, in a test), a job of one.
Peers& peers_of(const WorkerContext& context);

}  // namespace schmp
