// The parts of schmp/io.hpp shared by every reader: errors, file sizes and byte ranges.
#include "schmp/io.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <istream>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "fingerprint.hpp"
#include "line_reader.hpp"
#include "schmp/peers.hpp"

namespace schmp::io {

namespace {

std::string located_message(const std::string& file, std::uint64_t line, const std::string& message) {
  if (line == 0) return file + ": " + message;
  return file + ":" + std::to_string(line) + ": " + message;
}

}  // namespace

InputError::InputError(std::string file, std::uint64_t line, const std::string& message)
    : std::runtime_error(located_message(file, line, message)),
      file_(std::move(file)),
      line_(line),
      order_(line),
      message_(message) {}

InputError InputError::at(const std::string& path, std::uint64_t source, const std::string& message) {
  if (source == kUnknownSource) return InputError(path, 0, message);
  try {
    internal::InputFile file(path);
    const internal::LinePosition position = internal::locate_line(file, source);
    InputError error(file.parts()[position.part].path, position.line, message);
    error.order_ = source;  // across the part files, where their own line numbers start over
    return error;
  } catch (const InputError&) {
    // The data cannot be read again to count its lines: the message still names the data.
    return InputError(path, 0, message);
  }
}

std::string line_name(const std::string& path, std::uint64_t source, std::uint64_t from) {
  if (source == kUnknownSource) return path;
  internal::InputFile file(path);
  const internal::LinePosition position = internal::locate_line(file, source);
  const std::string number = std::to_string(position.line);
  const bool same_part = file.size() > 0 && from != kUnknownSource &&
                         file.part_at(std::min(from, file.size() - 1)) == position.part;
  if (same_part) return "line " + number;
  return file.parts()[position.part].path + ":" + number;
}

std::uint64_t file_size(const std::string& path) { return internal::InputFile(path).size(); }

bool is_matrix_market(const std::string& path) {
  internal::InputFile file(path);
  constexpr std::size_t kBannerLength = 14;  // "%%MatrixMarket"
  std::string start;
  file.append(0,
              static_cast<std::size_t>(
                  std::min<std::uint64_t>(internal::kByteOrderMark.size() + kBannerLength, file.size())),
              start);
  // The readers pass over a byte-order mark at the start of the file, so the banner may follow one.
  std::string_view text = start;
  if (text.starts_with(internal::kByteOrderMark)) text.remove_prefix(internal::kByteOrderMark.size());
  return internal::starts_with_matrix_market_banner(text);
}

ByteRange split_range(std::uint64_t size, int part, int parts) {
  if (parts < 1 || part < 0 || part >= parts) {
    throw std::invalid_argument("split_range: part " + std::to_string(part) + " of " + std::to_string(parts));
  }
  // The first size % parts ranges get one byte more; computed without size * part, which could overflow.
  const auto count = static_cast<std::uint64_t>(parts);
  const auto index = static_cast<std::uint64_t>(part);
  const std::uint64_t base = size / count;
  const std::uint64_t extra = size % count;
  const auto start = [&](std::uint64_t i) { return i * base + std::min(i, extra); };
  return ByteRange{start(index), start(index + 1)};
}

namespace internal {

namespace {

// What one worker sees of a file, for the message that names the copies: plain data that Peers::route
// can carry (a longer host name or description is cut short).
struct SeenCopy {
  char host[64];
  char seen[192];
};

template <std::size_t N>
void copy_text(char (&into)[N], const std::string& text) {
  const std::size_t length = std::min(text.size(), sizeof into - 1);
  std::copy_n(text.begin(), length, into);
  into[length] = '\0';
}

// A fingerprint of 256 blocks of 4 KiB spread evenly over the data, from its first byte to its last, or
// of all of it up to 1 MiB: a copy of the same size with other content (data generated again, a copy
// cut and padded) is told apart for 1 MiB of reading, whatever the data's size. A change that no block
// meets goes unseen.
Fingerprint sampled_content(InputFile& file) {
  constexpr std::uint64_t kBlock = 4096;
  constexpr std::uint64_t kBlocks = 256;
  const std::uint64_t size = file.size();
  Fingerprint fingerprint;
  std::string block;
  if (size <= kBlock * kBlocks) {
    file.append(0, static_cast<std::size_t>(size), block);
    fingerprint.add(block);
    return fingerprint;
  }
  const std::uint64_t step = (size - kBlock) / (kBlocks - 1);
  for (std::uint64_t k = 0; k < kBlocks; ++k) {
    block.clear();
    file.append(k + 1 == kBlocks ? size - kBlock : step * k, kBlock, block);
    fingerprint.add(block);
  }
  return fingerprint;
}

// "worker 2 on host a sees 12 bytes", "3 workers, on hosts a, b and 1 more, see 18 bytes"
std::string described(const std::vector<std::size_t>& workers, const std::vector<SeenCopy>& copies) {
  std::vector<std::string> hosts;
  for (const std::size_t w : workers) {
    if (std::find(hosts.begin(), hosts.end(), copies[w].host) == hosts.end())
      hosts.emplace_back(copies[w].host);
  }
  const std::string seen = copies[workers.front()].seen;
  if (workers.size() == 1)
    return "worker " + std::to_string(workers.front()) + " on host " + hosts[0] + " sees " + seen;
  std::string on = hosts.size() == 1 ? "host " + hosts[0] : "hosts " + hosts[0];
  if (hosts.size() == 2) on += " and " + hosts[1];
  if (hosts.size() > 2) on += ", " + hosts[1] + " and " + std::to_string(hosts.size() - 2) + " more";
  return std::to_string(workers.size()) + " workers, on " + on + ", see " + seen;
}

}  // namespace

std::string host_name() {
  char name[256] = {};
  return ::gethostname(name, sizeof name - 1) == 0 ? std::string(name) : std::string("?");
}

Seen unreadable_copy(const std::string& path, const InputError& error) {
  // "part-00001:3: message" for a part of a directory, "line 3: message" for the file itself.
  const std::string part =
      error.file() == path ? "" : std::filesystem::path(error.file()).filename().string();
  const std::string line = error.line() == 0 ? "" : std::to_string(error.line());
  std::string reason = error.message();
  if (!part.empty()) {
    reason = part + (line.empty() ? "" : ":" + line) + ": " + reason;
  } else if (!line.empty()) {
    reason = "line " + line + ": " + reason;
  }
  Fingerprint fingerprint;
  fingerprint.add("unreadable\n" + reason);
  return {fingerprint.value(), "no readable file (" + reason + ")"};
}

bool on_any_worker(bool mine, Peers& peers) {
  std::vector<std::uint64_t> count{mine ? 1u : 0u};
  peers.sum(count);
  return count[0] > 0;
}

InputError changed_while_read(const std::string& path) {
  return InputError(path, 0,
                    "changed while the workers read it: wait until it is complete (a file still being "
                    "written reads otherwise from one look to the next)");
}

std::optional<InputError> differing_copies(const std::string& path, const Seen& seen, Peers& peers) {
  // Every worker's fingerprint, on every worker: each adds its own in its place to zeros.
  const auto count = static_cast<std::size_t>(peers.count());
  std::vector<std::uint64_t> all(count, 0);
  all[static_cast<std::size_t>(peers.index())] = seen.fingerprint;
  peers.sum(all);
  if (std::all_of(all.begin(), all.end(), [&](std::uint64_t value) { return value == all.front(); }))
    return std::nullopt;
  // Which copy is stale is not for the workers to say (two hosts of as many workers each split evenly):
  // every worker learns what each sees, where, and refuses alike, naming every copy.
  SeenCopy mine{};
  copy_text(mine.host, host_name());
  copy_text(mine.seen, seen.description);
  const std::vector<SeenCopy> copies = peers.route(std::vector<std::vector<SeenCopy>>(count, {mine}));
  std::vector<std::uint64_t> distinct;  // in the order of their first workers
  for (const std::uint64_t value : all) {
    if (std::find(distinct.begin(), distinct.end(), value) == distinct.end()) distinct.push_back(value);
  }
  std::string listed;
  for (const std::uint64_t value : distinct) {
    std::vector<std::size_t> workers;
    for (std::size_t w = 0; w < count; ++w) {
      if (all[w] == value) workers.push_back(w);
    }
    listed += (listed.empty() ? "" : "; ") + described(workers, copies);
  }
  return InputError(
      path, 0,
      "differs between the workers' hosts: " + listed + ": every host must see the same files at this path");
}

}  // namespace internal

ByteRange worker_range(const std::string& data, Peers& peers) {
  std::optional<internal::InputFile> file;
  internal::check_read_on_every_worker(data, peers, [&] {
    file.emplace(data);
    // Over the size and a sample of the content of the whole, the part files taken together: workers
    // cut their ranges from that alone, so shards of the same data cut otherwise read the same.
    internal::Fingerprint fingerprint;
    const internal::Fingerprint content = internal::sampled_content(*file);
    fingerprint.add_number(file->size());
    fingerprint.add_number(content.value());
    std::string seen = std::to_string(file->size()) + " bytes (sampled checksum " + content.checksum() + ")";
    std::error_code not_a_directory;
    if (std::filesystem::is_directory(data, not_a_directory)) {
      const std::vector<internal::PartFile>& parts = file->parts();
      const auto name = [](const internal::PartFile& part) {
        return std::filesystem::path(part.path).filename().string();
      };
      seen = (parts.size() == 1 ? "1 part file, " + name(parts.front())
                                : std::to_string(parts.size()) + " part files, " + name(parts.front()) +
                                      " to " + name(parts.back())) +
             ", of " + seen;
    }
    return internal::Seen{fingerprint.value(), seen};
  });
  return split_range(file->size(), peers.index(), peers.count());
}

std::uint32_t SparseRows::columns() const {
  if (index.empty()) return 0;
  // Indices never exceed 2^32 - 3 (0-based), so adding one cannot wrap.
  return *std::max_element(index.begin(), index.end()) + 1;
}

InputError cut_short(const std::string& path, std::uint64_t number) {
  return InputError(path, number, "the file ends mid-line: it was cut short (its lines end with newlines)");
}

bool read_whole_line(std::istream& in, std::string& line, const std::string& path, std::uint64_t number) {
  if (!std::getline(in, line)) return false;
  // getline stops at the end of the file without failing when the last line has no newline.
  if (in.eof()) throw cut_short(path, number);
  return true;
}

}  // namespace schmp::io
