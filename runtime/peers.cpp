#include "peers.hpp"

#include <algorithm>
#include <exception>
#include <limits>
#include <stdexcept>

namespace schmp {

Peers& peers_of(const WorkerContext& context) {
  if (context.peers != nullptr) return *context.peers;
  if (context.count != 1) throw std::logic_error("a worker of several was made without its peers");
  // Stateless: a job of one has nothing to agree on.
  static Peers alone;
  return alone;
}

}  // namespace schmp

namespace schmp::detail {

namespace {

int rank_in(MPI_Comm comm) {
  int rank = 0;
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  return rank;
}

int size_of(MPI_Comm comm) {
  int size = 1;
  check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  return size;
}

}  // namespace

WorkerPeers::WorkerPeers(MPI_Comm workers, Waiter& waiter, std::uint64_t round_bytes)
    : Peers(rank_in(workers), size_of(workers)),
      comm_(Communicator::duplicate(workers)),
      waiter_(waiter),
      // Each step's count must fit MPI's int.
      round_bytes_(std::clamp<std::uint64_t>(round_bytes, 1, std::numeric_limits<int>::max())) {}

std::uint64_t WorkerPeers::header(std::uint64_t value, bool failed) {
  if (closed_)
    throw std::logic_error("Peers used after the worker was built: collectives belong in its constructor");
  const std::uint64_t mine[2] = {failed ? 1u : 0u, value};
  std::uint64_t all[2] = {0, 0};
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Iallreduce(mine, all, 2, MPI_UINT64_T, MPI_MAX, comm_.get(), &request), "MPI_Iallreduce");
  waiter_.wait(request);
  if (all[0] != 0) {
    closed_ = true;
    throw PeerFailure();
  }
  return all[1];
}

void WorkerPeers::close(bool failed) {
  if (closed_) return;
  try {
    header(0, failed);
  } catch (const PeerFailure&) {
    // Another worker failed too, or this one did: the framework's agreement reports it.
  }
  closed_ = true;
}

std::uint64_t WorkerPeers::reduce_max(std::uint64_t value) { return header(value); }

void WorkerPeers::reduce_sum(std::vector<std::uint64_t>& values) {
  values.resize(static_cast<std::size_t>(header(values.size())), 0);
  constexpr std::size_t kMostPerCall = std::size_t{1} << 30;
  for (std::size_t first = 0; first < values.size(); first += kMostPerCall) {
    const std::size_t count = std::min(kMostPerCall, values.size() - first);
    MPI_Request request = MPI_REQUEST_NULL;
    check_mpi(MPI_Iallreduce(MPI_IN_PLACE, values.data() + first, static_cast<int>(count), MPI_UINT64_T,
                             MPI_SUM, comm_.get(), &request),
              "MPI_Iallreduce");
    waiter_.wait(request);
  }
}

void WorkerPeers::exchange(const std::vector<std::span<const std::byte>>& outgoing,
                           const std::function<std::span<std::byte>(std::uint64_t total)>& receive) {
  std::uint64_t largest = 0;
  std::vector<std::uint64_t> sent(outgoing.size());
  for (std::size_t w = 0; w < outgoing.size(); ++w) {
    sent[w] = outgoing[w].size();
    largest = std::max(largest, sent[w]);
  }
  const std::uint64_t largest_anywhere = header(largest);
  std::vector<std::uint64_t> coming(outgoing.size());
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(
      MPI_Ialltoall(sent.data(), 1, MPI_UINT64_T, coming.data(), 1, MPI_UINT64_T, comm_.get(), &request),
      "MPI_Ialltoall");
  waiter_.wait(request);
  std::vector<std::uint64_t> offset(outgoing.size() + 1, 0);
  for (std::size_t w = 0; w < outgoing.size(); ++w) offset[w + 1] = offset[w] + coming[w];

  // Room for what comes may not be had: every worker learns so before any record moves.
  std::span<std::byte> destination;
  std::exception_ptr error;
  try {
    destination = receive(offset.back());
  } catch (...) {
    error = std::current_exception();
  }
  try {
    header(0, error != nullptr);
  } catch (const PeerFailure&) {
    if (error) std::rethrow_exception(error);
    throw;
  }

  const auto me = static_cast<std::size_t>(index());
  if (sent[me] > 0) std::copy(outgoing[me].begin(), outgoing[me].end(), destination.begin() + offset[me]);
  // In steps of at most round_bytes_ per pair of workers.
  std::vector<MPI_Request> requests;
  for (std::uint64_t first = 0; first < largest_anywhere; first += round_bytes_) {
    requests.clear();
    for (std::size_t w = 0; w < outgoing.size(); ++w) {
      if (w == me) continue;
      const auto peer = static_cast<int>(w);
      if (coming[w] > first) {
        const auto count = static_cast<int>(std::min(round_bytes_, coming[w] - first));
        check_mpi(MPI_Irecv(destination.data() + offset[w] + first, count, MPI_BYTE, peer, kTagRoute,
                            comm_.get(), &requests.emplace_back()),
                  "MPI_Irecv");
      }
      if (sent[w] > first) {
        const auto count = static_cast<int>(std::min(round_bytes_, sent[w] - first));
        check_mpi(MPI_Isend(outgoing[w].data() + first, count, MPI_BYTE, peer, kTagRoute, comm_.get(),
                            &requests.emplace_back()),
                  "MPI_Isend");
      }
    }
    for (MPI_Request& pending : requests) waiter_.wait(pending);
  }
}

}  // namespace schmp::detail
