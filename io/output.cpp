#include "schmp/output.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace schmp::io {

namespace {

std::string temporary_name(const std::string& path) { return path + ".tmp." + std::to_string(::getpid()); }

class FileDescriptor {
 public:
  explicit FileDescriptor(const std::string& path) : fd_(::open(path.c_str(), O_RDONLY)) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  bool sync() const { return fd_ >= 0 && ::fsync(fd_) == 0; }

 private:
  int fd_;
};

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
}

void check_writable(const std::string& path) {
  const std::string temporary = temporary_name(path);
  {
    std::ofstream probe(temporary, std::ios::binary | std::ios::trunc);
    if (!probe) throw std::runtime_error(path + ": cannot write: " + std::strerror(errno));
  }
  std::error_code ignored;
  std::filesystem::remove(temporary, ignored);
}

}  // namespace schmp::io
