#include "mpi.hpp"

#include <sched.h>
#include <sys/prctl.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

namespace schmp::detail {

namespace {

// Messages up to this size travel in a single broadcast; the first block also carries the length.
constexpr std::size_t kInlineBroadcastBytes = 2048;
constexpr std::size_t kLengthBytes = sizeof(std::uint64_t);
// Spinning is cheap in latency and costly in cores: spin this many polls before sleeping.
constexpr int kSpinPolls = 20000;
constexpr int kMaxSleepMicros = 10;

// MPI counts are ints: byte messages travel in pieces (kLargestPiece); a sum of more than 2^31 values
// would need splitting too, which no program needs.
int mpi_count(std::size_t count) {
  if (count > static_cast<std::size_t>(INT32_MAX)) {
    throw std::runtime_error("message of " + std::to_string(count) + " elements exceeds MPI's int count");
  }
  return static_cast<int>(count);
}

void print_failure(const Failure& failure, const std::string& program) {
  std::fprintf(stderr, "%s: error: %s\n", program.c_str(), failure.message.c_str());
  std::fflush(stderr);
}

}  // namespace

void check_mpi(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw std::runtime_error(std::string(call) + " failed: " + std::string(text, length));
}

bool mpi_started() {
  int started = 0;
  MPI_Initialized(&started);
  return started != 0;
}

int world_rank() {
  int rank = 0;
  if (mpi_started()) check_mpi(MPI_Comm_rank(MPI_COMM_WORLD, &rank), "MPI_Comm_rank");
  return rank;
}

int world_size() {
  int size = 1;
  if (mpi_started()) check_mpi(MPI_Comm_size(MPI_COMM_WORLD, &size), "MPI_Comm_size");
  return size;
}

Communicator Communicator::split(MPI_Comm parent, int color, int key) {
  MPI_Comm comm = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split(parent, color, key, &comm), "MPI_Comm_split");
  return Communicator(comm);
}

Communicator Communicator::split_by_host(MPI_Comm parent) {
  MPI_Comm comm = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split_type(parent, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &comm),
            "MPI_Comm_split_type");
  return Communicator(comm);
}

Communicator Communicator::duplicate(MPI_Comm parent) {
  MPI_Comm comm = MPI_COMM_NULL;
  check_mpi(MPI_Comm_dup(parent, &comm), "MPI_Comm_dup");
  return Communicator(comm);
}

Communicator::~Communicator() {
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

Waiter::Waiter(bool may_spin) : may_spin_(may_spin) {
  // Short sleeps are the point of sleeping between polls: ask the kernel not to stretch them.
  prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
}

void Waiter::pause(int polls) {
  if (may_spin_ && polls < kSpinPolls) return;
  const int sleeps = may_spin_ ? polls - kSpinPolls : polls;
  // Back off from 1 us to 10 us. A sleep costs about 7 us more than asked on a typical kernel, so
  // longer sleeps would add tens of microseconds to every round; at 10 us a waiting rank still uses
  // only a few percent of a core.
  const auto micros = std::min(kMaxSleepMicros, 1 << std::min(sleeps / 32, 4));
  std::this_thread::sleep_for(std::chrono::microseconds(micros));
}

void Waiter::wait(MPI_Request& request, Outbox* outbox) {
  for (int polls = 0;; ++polls) {
    int done = 0;
    check_mpi(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done) return;
    if (outbox) outbox->reap();
    pause(polls);
  }
}

int Waiter::probe(MPI_Comm comm, int source, int tag, Outbox* outbox) {
  for (int polls = 0;; ++polls) {
    int ready = 0;
    MPI_Status status;
    check_mpi(MPI_Iprobe(source, tag, comm, &ready, &status), "MPI_Iprobe");
    if (ready) {
      int count = 0;
      check_mpi(MPI_Get_count(&status, MPI_BYTE, &count), "MPI_Get_count");
      return count;
    }
    if (outbox) outbox->reap();
    pause(polls);
  }
}

Outbox::~Outbox() {
  // A job that ends normally drains its outbox; here only an unwinding error path can leave sends,
  // and MPI_Abort follows it, so the requests are simply let go.
  for (Pending& p : pending_) {
    for (MPI_Request& request : p.requests) {
      if (request != MPI_REQUEST_NULL) MPI_Request_free(&request);
    }
  }
}

void Outbox::send(MPI_Comm comm, int dest, int tag, Bytes bytes) {
  reap();
  if (bytes.size() >= piece_bytes_) {
    const std::uint64_t length = bytes.size();
    Pending& announcement = pending_.emplace_back();
    announcement.bytes.resize(sizeof length);
    std::memcpy(announcement.bytes.data(), &length, sizeof length);
    MPI_Request& request = announcement.requests.emplace_back(MPI_REQUEST_NULL);
    check_mpi(MPI_Isend(announcement.bytes.data(), sizeof length, MPI_BYTE, dest, tag + kLengthTagOffset,
                        comm, &request),
              "MPI_Isend");
  }
  Pending& p = pending_.emplace_back();
  p.bytes = std::move(bytes);
  // Pieces from one sender with one tag arrive in the order sent (MPI's non-overtaking rule).
  const std::size_t size = p.bytes.size();
  for (std::size_t at = 0;; at += piece_bytes_) {
    const std::size_t piece = std::min(piece_bytes_, size - at);
    MPI_Request& request = p.requests.emplace_back(MPI_REQUEST_NULL);
    check_mpi(MPI_Isend(p.bytes.data() + at, mpi_count(piece), MPI_BYTE, dest, tag, comm, &request),
              "MPI_Isend");
    if (piece < piece_bytes_) break;
  }
}

void Outbox::reap() {
  for (auto it = pending_.begin(); it != pending_.end();) {
    int done = 0;
    check_mpi(
        MPI_Testall(static_cast<int>(it->requests.size()), it->requests.data(), &done, MPI_STATUSES_IGNORE),
        "MPI_Testall");
    it = done ? pending_.erase(it) : std::next(it);
  }
}

void Outbox::drain(Waiter& waiter) {
  for (Pending& p : pending_) {
    for (MPI_Request& request : p.requests) waiter.wait(request);
  }
  pending_.clear();
}

Bytes receive_bytes(MPI_Comm comm, int source, int tag, Waiter& waiter, Outbox* outbox,
                    std::size_t piece_bytes) {
  Bytes bytes;
  for (;;) {
    const int size = waiter.probe(comm, source, tag, outbox);
    if (bytes.empty() && static_cast<std::size_t>(size) >= piece_bytes) {
      std::uint64_t length = 0;
      if (waiter.probe(comm, source, tag + kLengthTagOffset, outbox) != sizeof length)
        throw std::runtime_error("a long message was announced with a malformed length");
      check_mpi(
          MPI_Recv(&length, sizeof length, MPI_BYTE, source, tag + kLengthTagOffset, comm, MPI_STATUS_IGNORE),
          "MPI_Recv");
      bytes.reserve(length);
    }
    const std::size_t at = bytes.size();
    bytes.resize(at + static_cast<std::size_t>(size));
    check_mpi(MPI_Recv(bytes.data() + at, size, MPI_BYTE, source, tag, comm, MPI_STATUS_IGNORE), "MPI_Recv");
    if (static_cast<std::size_t>(size) < piece_bytes) return bytes;
  }
}

void broadcast_bytes(MPI_Comm comm, int root, Bytes& bytes, Waiter& waiter, std::size_t piece_bytes) {
  if (!mpi_started()) return;
  int rank = 0;
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  Bytes block(kInlineBroadcastBytes);
  if (rank == root) {
    const std::uint64_t length = bytes.size();
    std::memcpy(block.data(), &length, kLengthBytes);
    // std::copy_n, not memcpy: an empty message has no data pointer, which memcpy may not be given.
    std::copy_n(bytes.begin(), std::min<std::size_t>(bytes.size(), kInlineBroadcastBytes - kLengthBytes),
                block.begin() + kLengthBytes);
  }
  MPI_Request request;
  check_mpi(MPI_Ibcast(block.data(), static_cast<int>(block.size()), MPI_BYTE, root, comm, &request),
            "MPI_Ibcast");
  waiter.wait(request);
  std::uint64_t length = 0;
  std::memcpy(&length, block.data(), kLengthBytes);
  const std::size_t inline_bytes = std::min<std::size_t>(length, kInlineBroadcastBytes - kLengthBytes);
  if (rank != root) {
    bytes.resize(length);
    std::copy_n(block.begin() + kLengthBytes, inline_bytes, bytes.begin());
  }
  for (std::size_t at = inline_bytes; at < length; at += piece_bytes) {
    const std::size_t piece = std::min(piece_bytes, length - at);
    check_mpi(MPI_Ibcast(bytes.data() + at, mpi_count(piece), MPI_BYTE, root, comm, &request), "MPI_Ibcast");
    waiter.wait(request);
  }
}

namespace {

// A sum over ranks reduced piece by piece, each piece within MPI's int count: `reduce(at, count)` starts
// the reduction of values [at, at + count) and returns its request. Every rank cuts the same pieces.
template <class Reduce>
void sum_in_pieces(std::size_t size, std::size_t piece_values, Waiter& waiter, Reduce reduce) {
  std::size_t at = 0;
  do {
    const std::size_t count = std::min(piece_values, size - at);
    MPI_Request request = reduce(at, mpi_count(count));
    waiter.wait(request);
    at += count;
  } while (at < size);
}

}  // namespace

void reduce_sum(MPI_Comm comm, int root, std::vector<double>& values, Waiter& waiter,
                std::size_t piece_values) {
  if (!mpi_started()) return;
  int rank = 0;
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  std::vector<double> sum(rank == root ? values.size() : 0);
  sum_in_pieces(values.size(), piece_values, waiter, [&](std::size_t at, int count) {
    MPI_Request request;
    check_mpi(MPI_Ireduce(values.data() + at, rank == root ? sum.data() + at : nullptr, count, MPI_DOUBLE,
                          MPI_SUM, root, comm, &request),
              "MPI_Ireduce");
    return request;
  });
  if (rank == root) values = std::move(sum);
}

void allreduce_sum(MPI_Comm comm, std::vector<double>& values, Waiter& waiter, std::size_t piece_values) {
  if (!mpi_started()) return;
  std::vector<double> sum(values.size());
  sum_in_pieces(values.size(), piece_values, waiter, [&](std::size_t at, int count) {
    MPI_Request request;
    check_mpi(MPI_Iallreduce(values.data() + at, sum.data() + at, count, MPI_DOUBLE, MPI_SUM, comm, &request),
              "MPI_Iallreduce");
    return request;
  });
  values = std::move(sum);
}

std::uint64_t allreduce_max(MPI_Comm comm, std::uint64_t value) {
  if (!mpi_started()) return value;
  std::uint64_t result = 0;
  check_mpi(MPI_Allreduce(&value, &result, 1, MPI_UINT64_T, MPI_MAX, comm), "MPI_Allreduce");
  return result;
}

void SameShape::check(MPI_Comm comm, const Flat& message, const std::string& kind) {
  if (!mpi_started() || std::find(checked_.begin(), checked_.end(), kind) != checked_.end()) return;
  checked_.push_back(kind);
  // Equal on every rank exactly when the largest of it and of its complement are its own.
  std::uint64_t signature = message.values.size();
  for (const std::uint64_t length : message.shape) signature = signature * 0x100000001B3ull ^ length;
  const std::uint64_t mine[2] = {signature, ~signature};
  std::uint64_t largest[2] = {0, 0};
  check_mpi(MPI_Allreduce(mine, largest, 2, MPI_UINT64_T, MPI_MAX, comm), "MPI_Allreduce");
  if (largest[0] != mine[0] || largest[1] != mine[1]) {
    throw std::runtime_error("the workers' " + kind + " messages differ in shape (this one's holds " +
                             std::to_string(message.values.size()) +
                             " numbers): size their vectors by the job, not by a worker's own data");
  }
}

namespace {
HeldFailure* held_failure = nullptr;  // the one in scope, if any
}  // namespace

HeldFailure::HeldFailure() { held_failure = this; }
HeldFailure::~HeldFailure() { held_failure = nullptr; }

bool agree_on_failure(MPI_Comm comm, const std::optional<Failure>& mine, const std::string& program) {
  const auto tell = [&] {
    if (held_failure == nullptr) {
      print_failure(*mine, program);
    } else if (!held_failure->failure_) {
      held_failure->failure_ = *mine;
    }
  };
  if (!mpi_started()) {
    if (mine) tell();
    return mine.has_value();
  }
  int rank = 0;
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  const std::uint64_t none = ~std::uint64_t{0};
  const std::uint64_t key = mine ? std::min(mine->key, none - 1) : none;
  std::uint64_t best_key = none;
  check_mpi(MPI_Allreduce(&key, &best_key, 1, MPI_UINT64_T, MPI_MIN, comm), "MPI_Allreduce");
  if (best_key == none) return false;
  const int candidate = key == best_key ? rank : INT32_MAX;
  int winner = 0;
  check_mpi(MPI_Allreduce(&candidate, &winner, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce");
  if (rank == winner) tell();
  return true;
}

HostPlacement host_placement(MPI_Comm comm) {
  cpu_set_t bound;
  CPU_ZERO(&bound);
  const bool known = sched_getaffinity(0, sizeof bound, &bound) == 0;  // fails beyond 1,024 CPUs
  HostPlacement placement;
  placement.bound_cpus = known ? std::max(1, CPU_COUNT(&bound))
                               : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  placement.cpus = placement.bound_cpus;
  if (!mpi_started()) return placement;
  const Communicator host = Communicator::split_by_host(comm);
  check_mpi(MPI_Comm_size(host.get(), &placement.ranks), "MPI_Comm_size");
  check_mpi(MPI_Comm_rank(host.get(), &placement.index), "MPI_Comm_rank");
  std::vector<cpu_set_t> bindings(static_cast<std::size_t>(placement.ranks));
  check_mpi(
      MPI_Allgather(&bound, sizeof bound, MPI_BYTE, bindings.data(), sizeof bound, MPI_BYTE, host.get()),
      "MPI_Allgather");
  const auto sharing = std::count_if(bindings.begin(), bindings.end(),
                                     [&](const cpu_set_t& other) { return CPU_EQUAL(&other, &bound); });
  placement.cpus = std::max(1, placement.bound_cpus / static_cast<int>(std::max<std::ptrdiff_t>(1, sharing)));
  return placement;
}

void give_cpus_to(MPI_Comm comm, int root) {
  cpu_set_t bound;
  CPU_ZERO(&bound);
  if (sched_getaffinity(0, sizeof bound, &bound) != 0) return;  // beyond 1,024 CPUs: keep the binding
  int rank = 0;
  int size = 1;
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  std::vector<cpu_set_t> bindings(static_cast<std::size_t>(rank == root ? size : 0));
  check_mpi(MPI_Gather(&bound, sizeof bound, MPI_BYTE, bindings.data(), sizeof bound, MPI_BYTE, root, comm),
            "MPI_Gather");
  if (rank != root) return;
  for (const cpu_set_t& other : bindings) CPU_OR(&bound, &bound, &other);
  sched_setaffinity(0, sizeof bound, &bound);
}

bool HostPlacement::oversubscribed() const {
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  return static_cast<unsigned>(ranks) > cores;
}

}  // namespace schmp::detail
