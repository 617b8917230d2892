// The workers' collectives of schmp/peers.hpp over MPI, with the failure protocol that keeps a worker
// that failed from leaving the others waiting.
//
// Every collective starts with the same small reduction, the *header*: the largest of each worker's
// {failed, value}. A worker that failed makes exactly one more header, with failed set, in close(); the
// others meet it in whatever call they have reached (or in their own close()), see the flag and stop
// with PeerFailure. Every worker thus makes the same number of headers, and no collective is left
// half-matched.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "mpi.hpp"
#include "schmp/peers.hpp"

namespace schmp::detail {

class WorkerPeers final : public Peers {
 public:
  // `workers`: the communicator of the workers alone, in worker order. `round_bytes` bounds what one
  // worker sends another in one step of route() (MPI counts are ints); tests make it small.
  WorkerPeers(MPI_Comm workers, Waiter& waiter, std::uint64_t round_bytes = kRoundBytes);

  // After the worker's constructor, on every worker: `failed` says whether it threw (other than
  // PeerFailure). No call may follow.
  void close(bool failed);

  static constexpr std::uint64_t kRoundBytes = std::uint64_t{1} << 28;

 protected:
  std::uint64_t reduce_max(std::uint64_t value) override;
  void reduce_sum(std::vector<std::uint64_t>& values) override;
  void exchange(const std::vector<std::span<const std::byte>>& outgoing,
                const std::function<std::span<std::byte>(std::uint64_t total)>& receive) override;

 private:
  // The header of a collective: the largest `value`; PeerFailure when a worker failed.
  std::uint64_t header(std::uint64_t value, bool failed = false);

  Communicator comm_;
  Waiter& waiter_;
  std::uint64_t round_bytes_;
  bool closed_ = false;
};

}  // namespace schmp::detail
