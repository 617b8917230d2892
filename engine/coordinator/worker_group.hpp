// The coordinator's view of the workers: it sends them one message and gets back their summed reply.
#pragma once

#include <mpi.h>

#include <optional>

#include "../../runtime/mpi.hpp"
#include "../../runtime/protocol.hpp"
#include "schmp/internal/roles.hpp"

namespace schmp::detail {

class WorkerGroup {
 public:
  virtual ~WorkerGroup() = default;
  virtual int count() const = 0;
  virtual void send(const RoundMessage& message) = 0;
  virtual WorkerReply collect() = 0;  // only after a message that asks for a reply
  // The worker itself when it runs in this process, else null.
  virtual WorkerRole* local() { return nullptr; }
};

// The single worker of a one-process job, called directly.
class LocalWorker final : public WorkerGroup {
 public:
  explicit LocalWorker(WorkerRole& worker) : worker_(worker) {}
  int count() const override { return 1; }
  void send(const RoundMessage& message) override;
  WorkerReply collect() override;
  WorkerRole* local() override { return &worker_; }

 private:
  WorkerRole& worker_;
  std::optional<WorkerReply> reply_;
};

// Worker ranks: messages go out by broadcast over `compute` (the coordinator is its rank 0); the
// summed reply comes back from the first worker, rank `first_worker` of `world`.
class RemoteWorkers final : public WorkerGroup {
 public:
  RemoteWorkers(MPI_Comm world, MPI_Comm compute, int first_worker, int count, Waiter& waiter)
      : world_(world), compute_(compute), first_worker_(first_worker), count_(count), waiter_(waiter) {}
  int count() const override { return count_; }
  void send(const RoundMessage& message) override;
  WorkerReply collect() override;

 private:
  MPI_Comm world_;
  MPI_Comm compute_;
  int first_worker_;
  int count_;
  Waiter& waiter_;
};

}  // namespace schmp::detail
