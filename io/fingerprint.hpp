// Telling whether every worker sees the same file: each host has its own copy of the data, or its own
// mount of it, and a stale one would have its workers read other data than the rest without a word.
#pragma once

#include <cstdint>
#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "schmp/io.hpp"
#include "schmp/peers.hpp"

namespace schmp::io::internal {

// FNV-1a over what a worker sees of a file (its size and a sample of its bytes, or its values): equal on
// every worker that sees the same.
class Fingerprint {
 public:
  void add(std::string_view bytes) {
    for (const char c : bytes) value_ = (value_ ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  }
  void add_number(std::uint64_t number) { add(std::to_string(number) + '\n'); }
  std::uint64_t value() const { return value_; }
  // Its low 32 bits in hex, as messages show it ("1f0e3a9c"): enough to tell two copies apart by eye.
  std::string checksum() const {
    char text[16];
    std::snprintf(text, sizeof text, "%08llx", static_cast<unsigned long long>(value_ & 0xffffffffu));
    return text;
  }

 private:
  std::uint64_t value_ = 14695981039346656037ull;
};

// This host's name, as messages about hosts name it ("?" when it cannot be had).
std::string host_name();

// What a worker sees of a file: a fingerprint, equal on every worker that sees the same, and how
// messages describe it ("852362 bytes (sampled checksum 1f0e3a9c)").
struct Seen {
  std::uint64_t fingerprint = 0;
  std::string description;
};

// Collective: when the workers do not all see the same `path`, the error that every one of them is to
// raise, naming each copy with its workers, their hosts and what they see.
std::optional<InputError> differing_copies(const std::string& path, const Seen& seen, Peers& peers);

// What a worker that cannot read `path` sees of it: the error, with the part file it met it in, but not
// `path` as this worker spells it (`shards` and `shards/` are one path).
Seen unreadable_copy(const std::string& path, const InputError& error);

// Collective: whether `mine` is true on any worker.
bool on_any_worker(bool mine, Peers& peers);

// The error for a file that read otherwise at a second look.
InputError changed_while_read(const std::string& path);

// Collective: checks that every worker sees the same at `path`, as `read` (returning the Seen of what it
// read) makes of it on each. A worker whose read throws InputError counts as one more copy, so that a
// host that lacks the file, or holds a bad copy, is named beside those that read it. When every worker
// failed alike, this one's error is raised.
template <class Read>
void check_read_on_every_worker(const std::string& path, Peers& peers, Read read) {
  const auto look = [&]() -> std::pair<Seen, std::exception_ptr> {
    try {
      return {read(), nullptr};
    } catch (const InputError& error) {
      return {unreadable_copy(path, error), std::current_exception()};
    }
  };
  const auto [seen, failure] = look();
  if (std::optional<InputError> differs = differing_copies(path, seen, peers)) {
    // A file still being written reads otherwise from one look to the next, on one host as on many:
    // then the hosts are not to blame.
    if (on_any_worker(look().first.fingerprint != seen.fingerprint, peers)) throw changed_while_read(path);
    throw *differs;
  }
  if (failure) std::rethrow_exception(failure);
}

}  // namespace schmp::io::internal
