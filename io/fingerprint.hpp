// Telling whether every worker sees the same file: each host has its own copy of the data, or its own
// mount of it, and a stale one would have its workers read other data than the rest without a word.
#pragma once

#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>
#include <string_view>
#include <utility>

#include "schmp/io.hpp"
#include "schmp/peers.hpp"

namespace schmp::io::internal {

// FNV-1a over what a worker sees of a file (its size, its part files, its values): equal on every
// worker that sees the same.
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

// Checks with the other workers (Peers::sum) that every one of them has the same fingerprint of `path`.
// When not, every worker raises the same InputError, naming each copy with its workers, their hosts and
// what they see (`seen`: "852362 bytes", "442 labels of checksum 1f0e3a9c").
void check_same_on_every_worker(const std::string& path, std::uint64_t fingerprint, const std::string& seen,
                                Peers& peers);

// What a worker that cannot read a file sees of it, for check_same_on_every_worker: a fingerprint of
// the error and "no readable file (cannot open file)".
std::pair<std::uint64_t, std::string> unreadable_copy(const InputError& error);

// check_same_on_every_worker on what `read` (returning the fingerprint and description of what it read)
// makes of `path` on this worker, a worker whose read throws InputError counting as one more copy, so
// that a host that lacks the file, or holds a bad copy, is named beside those that read it. When every
// worker failed alike, this one's error is raised.
template <class Read>
void check_read_on_every_worker(const std::string& path, Peers& peers, Read read) {
  std::pair<std::uint64_t, std::string> seen;
  std::exception_ptr failure;
  try {
    seen = read();
  } catch (const InputError& error) {
    failure = std::current_exception();
    seen = unreadable_copy(error);
  }
  check_same_on_every_worker(path, seen.first, seen.second, peers);
  if (failure) std::rethrow_exception(failure);
}

}  // namespace schmp::io::internal
