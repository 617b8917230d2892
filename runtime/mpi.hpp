// MPI plumbing shared by every role: polite waiting, byte broadcasts, sums, point-to-point messages
// whose buffers live until MPI is done with them, and agreeing on failures. Nothing above this file
// calls MPI directly except through these helpers.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <list>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "schmp/message.hpp"

namespace schmp::detail {

// Message tags of the point-to-point protocol.
enum Tag : int {
  kTagSchedulerStart = 1,
  kTagSchedule = 2,
  kTagFeedback = 3,
  kTagReply = 4,
  kTagBlock = 5,    // a rotation program's model block, passed around the ring
  kTagPart = 6,     // a rotation worker's share of the final model
  kTagSaved = 7,    // a rotation worker's share of a checkpoint
  kTagRoute = 8,    // records a worker hands to their owner while the workers are built (peers.hpp)
  kTagColumns = 9,  // a worker's rows in a scheduler's columns, at start-up (column_shares.hpp)
};

// Throws std::runtime_error naming the call when an MPI call fails.
void check_mpi(int code, const char* call);

// Whether this process started MPI. One that no launcher started is a job of one rank and does not
// (see Job): the collectives below then act as on a one-rank communicator, without MPI, and nothing
// may be sent or received.
bool mpi_started();

// This process's rank and the job's size in MPI_COMM_WORLD: 0 and 1 without MPI.
int world_rank();
int world_size();

// An MPI communicator this process created, freed when it goes.
class Communicator {
 public:
  // The ranks of `parent` with the same color, ordered by key (MPI_UNDEFINED: none, get() is null).
  static Communicator split(MPI_Comm parent, int color, int key);
  // The ranks of `parent` that share this host's memory.
  static Communicator split_by_host(MPI_Comm parent);
  // The same ranks as `parent`, in a context of their own: its messages never match the parent's.
  static Communicator duplicate(MPI_Comm parent);
  // No communicator: for a job of one process, which talks to no one.
  static Communicator none() { return Communicator(MPI_COMM_NULL); }
  ~Communicator();
  Communicator(Communicator&& other) noexcept : comm_(other.comm_) { other.comm_ = MPI_COMM_NULL; }
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;
  Communicator& operator=(Communicator&&) = delete;
  MPI_Comm get() const { return comm_; }

 private:
  explicit Communicator(MPI_Comm comm) : comm_(comm) {}
  MPI_Comm comm_;
};

class Outbox;

// Waits for MPI requests. A waiting rank first spins briefly (when it has a core of its own), then
// sleeps between polls so that it leaves the processor to the ranks that compute.
class Waiter {
 public:
  explicit Waiter(bool may_spin);
  void wait(MPI_Request& request, Outbox* outbox = nullptr);
  // Blocks until a message from `source` with `tag` is ready to be received; returns its size.
  int probe(MPI_Comm comm, int source, int tag, Outbox* outbox = nullptr);

 private:
  void pause(int polls);
  bool may_spin_;
};

// MPI counts are ints: a message longer than this travels in pieces of this many bytes and a last,
// shorter one (empty if need be), so that its receiver knows where it ends. (Tests pass smaller pieces,
// the same to sender and receiver.)
inline constexpr std::size_t kLargestPiece = std::size_t{1} << 30;

// A message in pieces is announced by its length, sent with its tag plus this, so that the receiver
// allocates it once: growing the buffer piece by piece would hold more than twice the message.
inline constexpr int kLengthTagOffset = 1000;

// Sends that return at once: each buffer is kept until its send completes.
class Outbox {
 public:
  explicit Outbox(std::size_t piece_bytes = kLargestPiece) : piece_bytes_(piece_bytes) {}
  Outbox(const Outbox&) = delete;
  Outbox& operator=(const Outbox&) = delete;
  ~Outbox();
  void send(MPI_Comm comm, int dest, int tag, Bytes bytes);
  void reap();  // releases the buffers of completed sends
  void drain(Waiter& waiter);

 private:
  struct Pending {
    Bytes bytes;
    std::vector<MPI_Request> requests;  // one per piece
  };
  std::size_t piece_bytes_;
  std::list<Pending> pending_;
};

// Receives what one Outbox::send sent, whatever its length.
Bytes receive_bytes(MPI_Comm comm, int source, int tag, Waiter& waiter, Outbox* outbox = nullptr,
                    std::size_t piece_bytes = kLargestPiece);

// Broadcasts `bytes` from `root`; on the other ranks `bytes` is replaced by what the root sent. Small
// messages travel in one collective, larger ones in two (the rest in pieces, when it is long).
void broadcast_bytes(MPI_Comm comm, int root, Bytes& bytes, Waiter& waiter,
                     std::size_t piece_bytes = kLargestPiece);

// Sums `values` elementwise onto `root` (every rank passes the same length), in pieces of at most
// `piece_values` values, so that any length fits MPI's int counts.
inline constexpr std::size_t kLargestSumPiece = kLargestPiece / sizeof(double);
void reduce_sum(MPI_Comm comm, int root, std::vector<double>& values, Waiter& waiter,
                std::size_t piece_values = kLargestSumPiece);

// Sums `values` elementwise onto every rank (every rank passes the same length), likewise in pieces.
void allreduce_sum(MPI_Comm comm, std::vector<double>& values, Waiter& waiter,
                   std::size_t piece_values = kLargestSumPiece);

std::uint64_t allreduce_max(MPI_Comm comm, std::uint64_t value);

// A summed message (a program's Setup, Stats, Partial or Shared) must have the same shape on every worker
// of `comm`: its vectors sized by the job (start(n), the summed Setup), not by a worker's own data. MPI
// adds buffers of one length only, and a message of another shape would be summed into the wrong fields
// or overrun. The first message of each kind is compared across the workers before it is summed (a
// collective); later ones of that kind are taken to keep the shape.
class SameShape {
 public:
  // Throws std::runtime_error naming `kind` on every worker when the shapes differ.
  void check(MPI_Comm comm, const Flat& message, const std::string& kind);

 private:
  std::vector<std::string> checked_;
};

// A failure one rank met while starting up. The key orders failures: the earliest input line wins,
// so that the same bad file gives the same message whichever rank read it.
struct Failure {
  std::uint64_t key = 0;
  std::string message;
};

// Collective: every rank passes its own failure, if any. When any rank failed, the winning failure is
// printed once, as "program: error: message", and every rank gets true.
bool agree_on_failure(MPI_Comm comm, const std::optional<Failure>& mine, const std::string& program);

// While one exists, agree_on_failure keeps the winning failure (on the rank that would print it)
// instead of printing it. Jobs played side by side on groups of ranks (launch_each) each agree within
// their group; the groups then agree on one failure among them all, printed once.
class HeldFailure {
 public:
  HeldFailure();
  ~HeldFailure();
  HeldFailure(const HeldFailure&) = delete;
  HeldFailure& operator=(const HeldFailure&) = delete;
  const std::optional<Failure>& failure() const { return failure_; }

 private:
  friend bool agree_on_failure(MPI_Comm, const std::optional<Failure>&, const std::string&);
  std::optional<Failure> failure_;
};

// Collective: where this rank sits on its host (the ranks of `comm` that share its memory).
struct HostPlacement {
  int ranks = 1;  // ranks on this host
  int index = 0;  // this rank's index among them
  // The CPUs this rank may run on (its binding: mpirun binds each rank to a core when it starts 2 or
  // fewer, to a socket when more), and its share of them, divided among the ranks of this host bound
  // to the same ones: how many threads it should run. oneTBB keeps to the binding whatever it is told.
  int bound_cpus = 1;
  int cpus = 1;
  // Whether the host runs more ranks than it has cores, in which case no rank should spin.
  bool oversubscribed() const;
};
HostPlacement host_placement(MPI_Comm comm);

// Collective over ranks that share one host: `root` widens its binding to the CPUs of them all, for a
// job it runs alone while they wait.
void give_cpus_to(MPI_Comm comm, int root);

}  // namespace schmp::detail
