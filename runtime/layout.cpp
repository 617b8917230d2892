#include "layout.hpp"

namespace schmp::detail {

Layout Layout::make(int size, int rank, int schedulers) {
  Layout layout;
  layout.size = size;
  layout.rank = rank;
  layout.schedulers = schedulers;
  layout.hosted_schedulers = static_cast<long long>(size) < static_cast<long long>(schedulers) + 2;
  return layout;
}

const char* Layout::role_name() const {
  if (single_process()) return "all roles";
  if (is_coordinator()) return hosted_schedulers ? "coordinator+schedulers" : "coordinator";
  return is_scheduler_rank() ? "scheduler" : "worker";
}

}  // namespace schmp::detail
