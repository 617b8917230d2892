// Private to schmp_io: a POSIX file descriptor, closed by its destructor, for what streams cannot do
// (flushing a file or a directory to disk).
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <string>

namespace schmp::io::internal {

class FileDescriptor {
 public:
  explicit FileDescriptor(const std::string& path, int flags = O_RDONLY) : fd_(::open(path.c_str(), flags)) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  bool sync() const { return fd_ >= 0 && ::fsync(fd_) == 0; }

 private:
  int fd_;
};

}  // namespace schmp::io::internal
