#include "schmp/output.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <stdexcept>

#include "file_descriptor.hpp"

namespace schmp::io {

namespace {

std::string temporary_name(const std::string& path) { return path + ".tmp." + std::to_string(::getpid()); }

// The file a path names, through any links (nullopt for a loop of links): writing through a link (a
// checkpoint kept on a shared filesystem, linked from the run's directory) updates the file it points
// at, where a rename onto the link would replace the link with a file of its own.
std::optional<std::string> linked_file(const std::string& path) {
  std::filesystem::path file = path;
  std::error_code error;
  // 40 hops, as the kernel allows.
  for (int hop = 0; std::filesystem::is_symlink(file, error); ++hop) {
    const std::filesystem::path target = std::filesystem::read_symlink(file, error);
    if (error || hop == 40) return std::nullopt;
    file = target.is_absolute() ? target : file.parent_path() / target;
  }
  return file.string();
}

std::string through_links(const std::string& path) {
  const std::optional<std::string> file = linked_file(path);
  if (!file) throw std::runtime_error(path + ": cannot write: too many levels of symbolic links (a loop?)");
  return *file;
}

using internal::FileDescriptor;

// The rename that publishes a file would replace a device or a pipe by a regular file: /dev/null given as
// an output, by root, would be gone.
void refuse_special_file(const std::string& path) {
  // Through a link too: /dev/stdout is a link to the terminal or pipe.
  std::error_code error;
  const std::filesystem::file_status status = std::filesystem::status(path, error);
  if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status) &&
      !std::filesystem::is_directory(status))
    throw std::runtime_error(
        path + ": cannot write: not a regular file (a device or a pipe), which would be replaced");
}

// A file written and flushed under its temporary name, removed unless published.
class TemporaryFile {
 public:
  TemporaryFile(const std::string& path, const std::function<void(std::ostream&)>& write)
      : path_(path), file_(through_links(path)), temporary_(temporary_name(file_)) {
    refuse_special_file(path);
    std::ofstream out(temporary_, std::ios::binary | std::ios::trunc);
    if (!out) throw failure(std::strerror(errno));
    // A constructor that throws runs no destructor: the file is removed here.
    try {
      errno = 0;  // so that a failed write's reason is not mistaken for an older one
      write(out);
      out.close();
      if (out.fail()) throw failure(errno != 0 ? std::strerror(errno) : "write failed");
      // The data must be on disk before the name points at it, or a crash could publish an empty file.
      if (!FileDescriptor(temporary_).sync()) throw failure(std::strerror(errno));
    } catch (...) {
      out.close();
      remove();
      throw;
    }
    written_ = true;
  }
  ~TemporaryFile() {
    if (written_) remove();
  }
  TemporaryFile(const TemporaryFile&) = delete;
  TemporaryFile& operator=(const TemporaryFile&) = delete;

  // Renames the file into place; flush_rename() then makes the rename durable.
  void rename() {
    if (std::rename(temporary_.c_str(), file_.c_str()) != 0) throw failure(std::strerror(errno));
    written_ = false;
  }

  // The rename must reach the disk, or a crash could leave the old file under the name. Some
  // filesystems cannot sync a directory (EINVAL): there the rename is as durable as they allow.
  void flush_rename() const {
    const std::filesystem::path directory = std::filesystem::path(file_).parent_path();
    if (!FileDescriptor(directory.empty() ? "." : directory.string(), O_RDONLY | O_DIRECTORY).sync() &&
        errno != EINVAL && errno != ENOTSUP) {
      throw std::runtime_error(path_ +
                               ": written, but the directory cannot be flushed: " + std::strerror(errno));
    }
  }

 private:
  void remove() const {
    std::error_code ignored;
    std::filesystem::remove(temporary_, ignored);
  }
  std::runtime_error failure(const std::string& why) const {
    return std::runtime_error(path_ + ": cannot write: " + why);
  }

  std::string path_;  // as given, for messages
  std::string file_;  // what it names, through links
  std::string temporary_;
  bool written_ = false;  // whether the temporary file is there to remove
};

}  // namespace

void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& write) {
  TemporaryFile file(path, write);
  file.rename();
  file.flush_rename();
}

void write_files_atomically(const std::vector<FileWriter>& files) {
  std::vector<std::unique_ptr<TemporaryFile>> written;
  for (const auto& [path, write] : files) written.push_back(std::make_unique<TemporaryFile>(path, write));
  // Renamed one right after the other, once every one is complete, and only then flushed.
  for (const auto& file : written) file->rename();
  for (const auto& file : written) file->flush_rename();
}

void check_writable(const std::string& path) {
  // The temporary beside it could be made, but the rename onto a directory would fail after the run.
  std::error_code kind_error;
  if (std::filesystem::is_directory(path, kind_error))
    throw std::runtime_error(path + ": cannot write: Is a directory");
  refuse_special_file(path);
  // Beside the file the run will write: through a link, that may be on another filesystem.
  const std::string temporary = temporary_name(through_links(path));
  {
    std::ofstream probe(temporary, std::ios::binary | std::ios::trunc);
    if (!probe) throw std::runtime_error(path + ": cannot write: " + std::strerror(errno));
  }
  std::error_code ignored;
  std::filesystem::remove(temporary, ignored);
}

bool same_file(const std::string& a, const std::string& b) {
  std::error_code error;
  if (std::filesystem::exists(a, error) && std::filesystem::exists(b, error))
    return std::filesystem::equivalent(a, b, error);
  // A file not there yet, perhaps named through links that lead to it (a run writes through them).
  const std::optional<std::string> first_file = linked_file(a);
  const std::optional<std::string> second_file = linked_file(b);
  if (!first_file || !second_file) return false;
  const std::filesystem::path first = std::filesystem::weakly_canonical(*first_file, error);
  if (error) return false;
  const std::filesystem::path second = std::filesystem::weakly_canonical(*second_file, error);
  return !error && first == second;
}

namespace {

// Whether `output` lies in `input`, a directory (of shards).
bool lies_in(const std::string& output, const std::string& input) {
  std::error_code error;
  if (!std::filesystem::is_directory(input, error)) return false;
  const std::filesystem::path directory = std::filesystem::canonical(input, error);
  if (error) return false;
  const std::filesystem::path file = std::filesystem::weakly_canonical(output, error);
  if (error) return false;
  const std::filesystem::path within = file.lexically_relative(directory);
  return !within.empty() && *within.begin() != "..";
}

}  // namespace

void refuse_overwriting(const std::vector<FlagFile>& outputs, const std::vector<FlagFile>& inputs) {
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    const FlagFile& output = outputs[k];
    if (output.path.empty()) continue;
    for (const FlagFile& input : inputs) {
      if (input.path.empty()) continue;
      if (same_file(output.path, input.path)) {
        throw std::runtime_error(output.path + ": " + output.flag + " names the file of " + input.flag +
                                 ", which the run would overwrite");
      }
      if (lies_in(output.path, input.path)) {
        throw std::runtime_error(output.path + ": " + output.flag + " lies in the directory of " +
                                 input.flag + ", whose part files the run would overwrite");
      }
    }
    for (std::size_t j = 0; j < k; ++j) {
      if (!outputs[j].path.empty() && same_file(output.path, outputs[j].path)) {
        throw std::runtime_error(output.path + ": " + output.flag + " and " + outputs[j].flag +
                                 " name the same file: one would replace the other");
      }
    }
  }
}

}  // namespace schmp::io
