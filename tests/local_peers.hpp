// Peers for tests: the workers of a job as threads of one process, so that a reader that works among
// workers can be checked part by part against a whole read without mpirun. A worker that throws
// between calls stops the others at their next call with PeerFailure, as the framework's do.
#pragma once

#include <algorithm>
#include <atomic>
#include <barrier>
#include <cstring>
#include <exception>
#include <functional>
#include <span>
#include <stdexcept>
#include <thread>
#include <vector>

#include "schmp/peers.hpp"

namespace schmp::testing {

// A worker's place among `count` workers, for readers whose only calls check that every worker sees the
// same input (LIBSVM rows, io::worker_range): max() and sum() answer as if every worker gave the same
// value (sum() as if each put it in its own place, as that check does), and route() throws.
class PlaceOnly final : public Peers {
 public:
  PlaceOnly(int index, int count) : Peers(index, count) {}

 protected:
  std::uint64_t reduce_max(std::uint64_t value) override { return value; }
  void reduce_sum(std::vector<std::uint64_t>& values) override {
    const std::uint64_t mine = values.at(static_cast<std::size_t>(index()));
    std::fill(values.begin(), values.end(), mine);
  }
  void exchange(const std::vector<std::span<const std::byte>>&,
                const std::function<std::span<std::byte>(std::uint64_t)>&) override {
    throw std::logic_error("PlaceOnly: no peers");
  }
};

class LocalPeers {
 public:
  explicit LocalPeers(int count) : count_(count), sync_(count), slots_(static_cast<std::size_t>(count)) {}

  // Runs body(peers) for every worker at once, each on a thread of its own with its own Peers, and
  // rethrows the exception of the lowest worker that threw anything other than PeerFailure.
  void run(const std::function<void(Peers&)>& body) {
    std::vector<std::exception_ptr> errors(static_cast<std::size_t>(count_));
    std::vector<std::thread> threads;
    for (int w = 0; w < count_; ++w) {
      threads.emplace_back([&, w] {
        Worker peers(*this, w);
        try {
          body(peers);
        } catch (const PeerFailure&) {
        } catch (...) {
          errors[static_cast<std::size_t>(w)] = std::current_exception();
          failed_ = true;
        }
        sync_.arrive_and_drop();
      });
    }
    for (std::thread& thread : threads) thread.join();
    for (const std::exception_ptr& error : errors) {
      if (error) std::rethrow_exception(error);
    }
  }

 private:
  // What each worker puts on the table for a call.
  struct Slot {
    std::uint64_t value = 0;
    const std::vector<std::uint64_t>* values = nullptr;
    const std::vector<std::span<const std::byte>>* outgoing = nullptr;
  };

  class Worker final : public Peers {
   public:
    Worker(LocalPeers& all, int index) : Peers(index, all.count_), all_(all) {}

   protected:
    std::uint64_t reduce_max(std::uint64_t value) override {
      mine().value = value;
      meet();
      std::uint64_t largest = 0;
      for (const Slot& slot : all_.slots_) largest = std::max(largest, slot.value);
      all_.sync_.arrive_and_wait();
      return largest;
    }
    void reduce_sum(std::vector<std::uint64_t>& values) override {
      mine().values = &values;
      meet();
      std::vector<std::uint64_t> sum;
      for (const Slot& slot : all_.slots_) {
        if (slot.values->size() > sum.size()) sum.resize(slot.values->size(), 0);
        for (std::size_t i = 0; i < slot.values->size(); ++i) sum[i] += (*slot.values)[i];
      }
      all_.sync_.arrive_and_wait();
      values = std::move(sum);
    }
    void exchange(const std::vector<std::span<const std::byte>>& outgoing,
                  const std::function<std::span<std::byte>(std::uint64_t total)>& receive) override {
      mine().outgoing = &outgoing;
      meet();
      const auto me = static_cast<std::size_t>(index());
      std::uint64_t total = 0;
      for (const Slot& slot : all_.slots_) total += (*slot.outgoing)[me].size();
      std::byte* next = receive(total).data();
      for (const Slot& slot : all_.slots_) {
        const std::span<const std::byte> piece = (*slot.outgoing)[me];
        if (!piece.empty()) std::memcpy(next, piece.data(), piece.size());
        next += piece.size();
      }
      all_.sync_.arrive_and_wait();
    }

   private:
    Slot& mine() { return all_.slots_[static_cast<std::size_t>(index())]; }
    // Every worker's slot is filled, or one of them failed.
    void meet() {
      all_.sync_.arrive_and_wait();
      if (all_.failed_) throw PeerFailure();
    }
    LocalPeers& all_;
  };

  int count_;
  std::barrier<> sync_;
  std::vector<Slot> slots_;
  std::atomic<bool> failed_{false};
};

}  // namespace schmp::testing
