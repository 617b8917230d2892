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

void sync_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& write) {
  const std::string temporary = path + ".tmp." + std::to_string(::getpid());
  auto fail = [&](const std::string& why) {
    std::filesystem::remove(temporary);
    return std::runtime_error(path + ": cannot write: " + why);
  };
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) throw fail(std::strerror(errno));
    write(out);
    out.flush();
    if (!out) throw fail("write failed");
  }
  sync_file(temporary);
  if (std::rename(temporary.c_str(), path.c_str()) != 0) throw fail(std::strerror(errno));
}

}  // namespace schmp::io
