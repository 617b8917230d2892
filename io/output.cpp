#include "schmp/output.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "file_descriptor.hpp"

namespace schmp::io {

namespace {

std::string temporary_name(const std::string& path) { return path + ".tmp." + std::to_string(::getpid()); }

using internal::FileDescriptor;

}  // namespace

void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& write) {
  const std::string temporary = temporary_name(path);
  auto fail = [&](const std::string& why) {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    return std::runtime_error(path + ": cannot write: " + why);
  };
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) throw fail(std::strerror(errno));
    try {
      write(out);
    } catch (...) {
      out.close();
      std::error_code ignored;
      std::filesystem::remove(temporary, ignored);
      throw;
    }
    out.close();
    if (out.fail()) throw fail("write failed");
  }
  // The data must be on disk before the name points at it, or a crash could publish an empty file.
  if (!FileDescriptor(temporary).sync()) throw fail(std::strerror(errno));
  if (std::rename(temporary.c_str(), path.c_str()) != 0) throw fail(std::strerror(errno));
  // And the rename itself must reach the disk, or a crash could leave the old file under the name.
  // Some filesystems cannot sync a directory (EINVAL): there the rename is as durable as they allow.
  const std::filesystem::path directory = std::filesystem::path(path).parent_path();
  if (!FileDescriptor(directory.empty() ? "." : directory.string(), O_RDONLY | O_DIRECTORY).sync() &&
      errno != EINVAL && errno != ENOTSUP) {
    throw std::runtime_error(path +
                             ": written, but the directory cannot be flushed: " + std::strerror(errno));
  }
}

void check_writable(const std::string& path) {
  // The temporary beside it could be made, but the rename onto a directory would fail after the run.
  std::error_code kind_error;
  if (std::filesystem::is_directory(path, kind_error))
    throw std::runtime_error(path + ": cannot write: Is a directory");
  const std::string temporary = temporary_name(path);
  {
    std::ofstream probe(temporary, std::ios::binary | std::ios::trunc);
    if (!probe) throw std::runtime_error(path + ": cannot write: " + std::strerror(errno));
  }
  std::error_code ignored;
  std::filesystem::remove(temporary, ignored);
}

}  // namespace schmp::io
