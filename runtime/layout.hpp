// Which rank plays which role. Rank 0 is the coordinator. With at least S + 2 ranks, ranks 1..S are
// the schedulers and the rest are workers; with fewer, the coordinator runs the S schedulers itself
// and every other rank is a worker; a single process plays every role.
#pragma once

namespace schmp::detail {

struct Layout {
  int size = 1;
  int rank = 0;
  int schedulers = 1;
  bool hosted_schedulers = true;  // the schedulers run inside the coordinator's process

  static Layout make(int size, int rank, int schedulers);

  bool single_process() const { return size == 1; }
  bool is_coordinator() const { return rank == 0; }
  bool is_scheduler_rank() const { return !hosted_schedulers && rank >= 1 && rank <= schedulers; }
  bool is_worker() const { return single_process() || (rank > 0 && !is_scheduler_rank()); }
  int first_worker_rank() const { return single_process() ? 0 : hosted_schedulers ? 1 : schedulers + 1; }
  int workers() const { return single_process() ? 1 : size - first_worker_rank(); }
  int worker_index() const { return rank - first_worker_rank(); }
  int scheduler_index() const { return rank - 1; }
  const char* role_name() const;
};

}  // namespace schmp::detail
