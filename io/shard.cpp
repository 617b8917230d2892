// Splitting a text file into a directory of part files of nearly equal sizes (schmp-shard).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "file_descriptor.hpp"
#include "line_reader.hpp"
#include "schmp/io.hpp"

namespace schmp::io {

namespace {

namespace fs = std::filesystem;

constexpr std::size_t kBlock = std::size_t{1} << 20;
// More part files than any cluster has workers; the split's bookkeeping takes 8 bytes a part.
constexpr int kMostParts = 1000000;

// The line that starts at `offset`, without its line ending, and moves `offset` past it; nothing at the
// end of the file. Only header lines are read this way.
std::optional<std::string> read_line(internal::InputFile& file, std::uint64_t& offset) {
  if (offset >= file.size()) return std::nullopt;
  const std::uint64_t end = internal::line_start_from(file, offset + 1);
  std::string line;
  file.append(offset, static_cast<std::size_t>(end - offset), line);
  // A byte-order mark at the start is no part of the first line, as the readers take it.
  if (offset == 0 && line.starts_with(internal::kByteOrderMark))
    line.erase(0, internal::kByteOrderMark.size());
  offset = end;
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
  return line;
}

std::vector<std::string_view> tokens_of(std::string_view line) {
  std::vector<std::string_view> tokens;
  internal::Tokenizer tokenizer(line);
  while (const auto token = tokenizer.next()) tokens.push_back(*token);
  return tokens;
}

bool is_whole_number(std::string_view token) {
  return !token.empty() &&
         std::all_of(token.begin(), token.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The offset past the first `count` non-blank lines (and the blank lines among them).
std::uint64_t past_non_blank_lines(internal::InputFile& file, std::uint64_t count) {
  std::uint64_t offset = 0;
  while (count > 0) {
    const auto line = read_line(file, offset);
    if (!line) break;
    if (!tokens_of(*line).empty()) --count;
  }
  return offset;
}

// UCI docword.txt: three lines of one number each (D, W, NNZ), then `doc word count` lines. A file that
// is something else but looks like this loses nothing: its header only stays in the first part.
bool looks_like_docword(internal::InputFile& file) {
  std::uint64_t offset = 0;
  int lines = 0;
  while (lines < 4) {
    const auto line = read_line(file, offset);
    if (!line) return false;
    const std::vector<std::string_view> tokens = tokens_of(*line);
    if (tokens.empty()) continue;
    const std::size_t expected = lines < 3 ? 1 : 3;
    if (tokens.size() != expected || !std::all_of(tokens.begin(), tokens.end(), is_whole_number))
      return false;
    ++lines;
  }
  return true;
}

// The offset just past the header that must stay in the first part.
std::uint64_t header_end(internal::InputFile& file, const ShardOptions& options) {
  if (options.header_lines) {
    std::uint64_t offset = 0;
    std::uint64_t lines = 0;
    while (lines < *options.header_lines && read_line(file, offset)) ++lines;
    return offset;
  }
  ShardFormat format = options.format;
  if (format == ShardFormat::automatic) {
    std::uint64_t offset = 0;
    const auto first = read_line(file, offset);
    if (first && internal::starts_with_matrix_market_banner(*first)) {
      format = ShardFormat::matrix_market;
    } else if (looks_like_docword(file)) {
      format = ShardFormat::docword;
    }
  }
  switch (format) {
    case ShardFormat::docword:
      return past_non_blank_lines(file, 3);
    case ShardFormat::matrix_market: {
      // The banner, then comment and blank lines up to the size line, the first other line.
      std::uint64_t offset = 0;
      if (!read_line(file, offset)) return offset;
      while (const auto line = read_line(file, offset)) {
        const std::string_view content = internal::trim_front(*line);
        if (!content.empty() && content[0] != '%') break;
      }
      return offset;
    }
    default:
      return 0;
  }
}

// A directory that is removed, with what it holds, unless it was published.
class StagingDirectory {
 public:
  explicit StagingDirectory(fs::path path) : path_(std::move(path)) {
    std::error_code error;
    fs::remove_all(path_, error);  // left over by a run that was killed, with the same process id
    if (!fs::create_directory(path_, error)) {
      throw std::runtime_error(path_.string() + ": cannot create directory: " + error.message());
    }
  }
  ~StagingDirectory() {
    if (path_.empty()) return;
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  StagingDirectory(const StagingDirectory&) = delete;
  StagingDirectory& operator=(const StagingDirectory&) = delete;

  const fs::path& path() const { return path_; }
  // The directory now lives on under another name: keep it.
  void release() { path_.clear(); }

 private:
  fs::path path_;
};

// Flushes a file or a directory to disk. Some filesystems cannot sync a directory (EINVAL, ENOTSUP):
// there its entries are as durable as they allow.
void flush_to_disk(const fs::path& path, int flags) {
  if (internal::FileDescriptor(path.string(), flags).sync()) return;
  if ((flags & O_DIRECTORY) != 0 && (errno == EINVAL || errno == ENOTSUP)) return;
  throw std::runtime_error(path.string() + ": cannot flush to disk: " + std::strerror(errno));
}

// Stops the split as a failure does when ShardOptions::stop_requested says so.
void stop_if_requested(const std::function<bool()>& stop_requested) {
  if (stop_requested && stop_requested()) throw std::runtime_error("stopped before the parts were complete");
}

// Copies the bytes [begin, end) of the input to a new file, with a newline after them when asked.
void write_part(internal::InputFile& input, std::uint64_t begin, std::uint64_t end, bool add_newline,
                const fs::path& path, const std::function<bool()>& stop_requested) {
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error(path.string() + ": cannot write: " + std::strerror(errno));
    std::string block;
    errno = 0;  // so that a failed write's reason is not mistaken for an older one
    for (std::uint64_t at = begin; at < end; at += block.size()) {
      stop_if_requested(stop_requested);
      block.clear();
      input.append(at, static_cast<std::size_t>(std::min<std::uint64_t>(kBlock, end - at)), block);
      out.write(block.data(), static_cast<std::streamsize>(block.size()));
    }
    if (add_newline) out.put('\n');
    out.close();
    if (!out)
      throw std::runtime_error(path.string() +
                               ": cannot write: " + (errno != 0 ? std::strerror(errno) : "write failed"));
  }
  flush_to_disk(path, O_RDONLY);
}

std::string part_name(int part, int parts) {
  const std::size_t digits = std::max<std::size_t>(5, std::to_string(parts - 1).size());
  std::string number = std::to_string(part);
  number.insert(0, digits - number.size(), '0');
  return std::string(internal::kPartPrefix) + number;
}

// Whether a directory is where a filesystem is mounted: it lies on another device than its parent, is
// the root, or is listed as a mount point in /proc/self/mountinfo (a bind mount of the same device).
bool is_mount_point(const fs::path& directory) {
  struct stat own {};
  struct stat parent {};
  if (::stat(directory.c_str(), &own) != 0) return false;
  std::error_code error;
  const fs::path resolved = fs::canonical(directory, error);
  if (error) return false;
  if (::stat(resolved.parent_path().c_str(), &parent) != 0) return false;
  if (own.st_dev != parent.st_dev || own.st_ino == parent.st_ino) return true;
  // Each line: ID PARENT MAJOR:MINOR ROOT MOUNT_POINT ...; spaces in paths are written \040.
  std::ifstream mounts("/proc/self/mountinfo");
  for (std::string line; std::getline(mounts, line);) {
    std::istringstream fields(line);
    std::string skipped, mount_point;
    fields >> skipped >> skipped >> skipped >> skipped >> mount_point;
    std::string decoded;
    for (std::size_t at = 0; at < mount_point.size(); ++at) {
      const bool space = mount_point.compare(at, 4, "\\040") == 0;
      decoded.push_back(space ? ' ' : mount_point[at]);
      if (space) at += 3;
    }
    if (decoded == resolved.string()) return true;
  }
  return false;
}

// Moves the complete staging directory to `target`. A non-empty `target` (with --force) is moved
// aside first and removed after, so that the name never shows a half-written directory.
void publish(StagingDirectory& staging, const fs::path& target, const std::string& hidden_prefix) {
  std::error_code error;
  const bool replace = fs::exists(target, error) && !fs::is_empty(target, error);
  const fs::path old = target.parent_path() / (hidden_prefix + ".old");
  if (replace) {
    fs::remove_all(old, error);
    fs::rename(target, old, error);
    if (error) throw std::runtime_error(target.string() + ": cannot move aside: " + error.message());
  }
  // rename(2) replaces an empty directory.
  fs::rename(staging.path(), target, error);
  if (error) {
    std::error_code ignored;
    if (replace) fs::rename(old, target, ignored);
    throw std::runtime_error(target.string() + ": cannot rename into place: " + error.message());
  }
  staging.release();
  if (replace) fs::remove_all(old, error);
  flush_to_disk(target.parent_path().empty() ? fs::path(".") : target.parent_path(), O_RDONLY | O_DIRECTORY);
}

}  // namespace

ShardFormat parse_shard_format(const std::string& name) {
  if (name == "auto") return ShardFormat::automatic;
  if (name == "libsvm") return ShardFormat::libsvm;
  if (name == "ratings") return ShardFormat::ratings;
  if (name == "docword") return ShardFormat::docword;
  if (name == "matrix_market") return ShardFormat::matrix_market;
  if (name == "text") return ShardFormat::text;
  throw std::invalid_argument("unknown format '" + name +
                              "' (known: auto, libsvm, ratings, docword, matrix_market, text)");
}

std::vector<std::string> write_shards(const ShardOptions& options) {
  if (options.parts < 1 || options.parts > kMostParts)
    throw std::invalid_argument("--parts must be between 1 and " + std::to_string(kMostParts));
  if (options.output.empty()) throw std::invalid_argument("no output directory (--out)");
  // "shards/" names the directory "shards": drop the empty last component a trailing slash leaves.
  fs::path target = fs::path(options.output).lexically_normal();
  if (!target.has_filename()) target = target.parent_path();

  // Refused before any work, so that a mistaken --out costs nothing. The directory is made beside the
  // target and renamed onto it: that cannot be done to the directory the tool runs in, or one above.
  std::error_code error;
  const fs::path here = fs::current_path(error);
  if (!error) {
    const fs::path within = here.lexically_relative(fs::absolute(target, error).lexically_normal());
    if (!error && !within.empty() && *within.begin() != "..") {
      throw std::runtime_error(
          target.string() + ": is the current directory or holds it: --out must name a directory beside it");
    }
  }
  // The directory is renamed onto the target, which replaces an empty directory but not a link.
  if (fs::is_symlink(fs::symlink_status(target, error)))
    throw std::runtime_error(target.string() + ": is a symbolic link: --out must name the directory itself");
  const fs::file_status status = fs::status(target, error);
  if (fs::exists(status)) {
    if (!fs::is_directory(status))
      throw std::runtime_error(target.string() + ": exists and is not a directory");
    // A filesystem mounted there cannot be renamed over: found now, not after every part is written.
    if (is_mount_point(target)) {
      throw std::runtime_error(
          target.string() +
          ": is a mount point, which cannot be replaced: --out must name a directory in it");
    }
    if (!fs::is_empty(target, error) && !options.force) {
      throw std::runtime_error(target.string() + ": exists and is not empty (--force replaces it)");
    }
    // Replacing the target would delete an input inside it (splitting a directory of shards into
    // itself is fine: it is read whole before it is replaced).
    const fs::path input = fs::weakly_canonical(options.input, error);
    const fs::path inside =
        error ? fs::path() : input.lexically_relative(fs::weakly_canonical(target, error));
    if (!error && !inside.empty() && inside != "." && *inside.begin() != "..") {
      throw std::runtime_error(target.string() + ": holds the input " + options.input +
                               ", which replacing it would delete: --out must name another directory");
    }
  }

  internal::InputFile input(options.input);
  const std::uint64_t size = input.size();
  const std::uint64_t header = header_end(input, options);
  // Part k starts at the first line start at or after the k-th of `parts` equal cuts, and never inside
  // the header.
  std::vector<std::uint64_t> starts(static_cast<std::size_t>(options.parts) + 1, size);
  starts[0] = 0;
  for (int part = 1; part < options.parts; ++part) {
    starts[static_cast<std::size_t>(part)] =
        std::max(header, internal::line_start_from(input, split_range(size, part, options.parts).begin));
  }
  std::string last_byte;
  if (size > 0) input.append(size - 1, 1, last_byte);
  const bool ends_without_newline = size > 0 && last_byte != "\n";

  // Hidden, beside the target (on its filesystem, so that rename works), and the process's own. Built by
  // appending: GCC 12 raises a false -Wrestrict on "." + std::string(...).
  std::string hidden_prefix = ".";
  hidden_prefix.append(target.filename().string()).append(".shard-").append(std::to_string(::getpid()));
  StagingDirectory staging(target.parent_path() / (hidden_prefix + ".tmp"));
  std::vector<std::string> paths;
  for (int part = 0; part < options.parts; ++part) {
    const std::uint64_t begin = starts[static_cast<std::size_t>(part)];
    const std::uint64_t end = starts[static_cast<std::size_t>(part) + 1];
    const std::string name = part_name(part, options.parts);
    // The part that holds the input's last byte ends the last line: it must end with a newline too.
    write_part(input, begin, end, ends_without_newline && begin < end && end == size, staging.path() / name,
               options.stop_requested);
    paths.push_back((target / name).string());
  }
  flush_to_disk(staging.path(), O_RDONLY | O_DIRECTORY);
  stop_if_requested(options.stop_requested);
  publish(staging, target, hidden_prefix);
  return paths;
}

}  // namespace schmp::io
