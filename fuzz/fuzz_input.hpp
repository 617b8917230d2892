// Shared by the libFuzzer targets. The readers take a path, so each input is written to a scratch file
// first (one per process, rewritten for every input). A reader given bad input may only raise the error
// it documents (io::InputError), with a short one-line message; anything else is a finding: the target
// aborts and libFuzzer saves the input.
//
// A target is a file fuzz/NAME_fuzzer.cpp defining LLVMFuzzerTestOneInput plus one line
// schmp_add_fuzz_target(NAME) in fuzz/CMakeLists.txt; most are a few lines:
//
//   extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
//     const std::string& path = schmp::fuzz::write_input(data, size);
//     schmp::fuzz::try_read(path, [&] { schmp::io::read_something(path); });
//     return 0;
//   }
#pragma once

#include <cxxabi.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <typeinfo>

#include "../io/line_reader.hpp"
#include "schmp/io.hpp"

namespace schmp::fuzz {

// Reports a finding and aborts; libFuzzer then saves the input as a crash-* file.
[[noreturn]] inline void finding(const std::string& message) {
  std::fprintf(stderr, "==schmp-fuzz== finding: %s\n", message.c_str());
  std::abort();
}

// Whether a number read from data is one the readers may return: finite, and within their limit.
inline bool readable_value(double value) {
  return std::isfinite(value) && std::fabs(value) <= io::internal::kLargestDataValue;
}

// A failure of the harness itself, not of the code under test.
[[noreturn]] inline void harness_failure(const std::string& what) {
  std::fprintf(stderr, "==schmp-fuzz== harness: %s: %s\n", what.c_str(), std::strerror(errno));
  std::abort();
}

namespace internal {

// The process's scratch file: created in $TMPDIR (or /tmp) on first use, removed at exit.
class ScratchFile {
 public:
  static ScratchFile& get() {
    static ScratchFile file;
    return file;
  }

  const std::string& path() const { return path_; }

  void replace(const std::uint8_t* data, std::size_t size) {
    if (::ftruncate(fd_, 0) != 0) harness_failure("cannot truncate " + path_);
    std::size_t done = 0;
    while (done < size) {
      const ::ssize_t written = ::pwrite(fd_, data + done, size - done, static_cast<::off_t>(done));
      if (written < 0 && errno == EINTR) continue;
      if (written <= 0) harness_failure("cannot write " + path_);
      done += static_cast<std::size_t>(written);
    }
  }

  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;

 private:
  ScratchFile() {
    const char* directory = std::getenv("TMPDIR");
    std::string pattern = std::string(directory != nullptr && *directory != '\0' ? directory : "/tmp") +
                          "/schmp-fuzz-input-XXXXXX";
    fd_ = ::mkstemp(pattern.data());
    if (fd_ < 0) harness_failure("cannot create " + pattern);
    path_ = pattern;
  }

  ~ScratchFile() {
    ::close(fd_);
    ::unlink(path_.c_str());
  }

  std::string path_;
  int fd_ = -1;
};

inline std::string type_name(const std::type_info& type) {
  int status = 0;
  const std::unique_ptr<char, decltype(&std::free)> name(
      abi::__cxa_demangle(type.name(), nullptr, nullptr, &status), &std::free);
  return status == 0 && name ? std::string(name.get()) : std::string(type.name());
}

// The message with control characters escaped, to print it whole.
inline std::string printable(std::string_view message) {
  std::string text;
  for (const char c : message) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", byte);
      text += escaped;
    } else {
      text.push_back(c);
    }
  }
  return text;
}

// An error message is one short line of text: no control characters (a NUL would cut it short when
// printed, a newline would split it), and a bounded length whatever the input holds.
inline void check_message(const std::string& path, std::string_view message) {
  constexpr std::size_t kLongestMessage = 400;  // beyond the "path:line: " prefix
  if (message.size() > path.size() + 24 + kLongestMessage) {
    finding("error message of " + std::to_string(message.size()) +
            " bytes: " + printable(message.substr(0, path.size() + 200)) + "...");
  }
  for (const char c : message) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) {
      finding("control character " + std::to_string(byte) + " in error message: " + printable(message));
    }
  }
}

}  // namespace internal

// Writes the input to this process's scratch file and returns the file's path (the same every call).
inline const std::string& write_input(const std::uint8_t* data, std::size_t size) {
  internal::ScratchFile& file = internal::ScratchFile::get();
  file.replace(data, size);
  return file.path();
}

// Runs `read`, a reader on the file at `path`. Returns nothing when it succeeds and the error when it
// raises `Expected`, the reader's error for bad input. An error whose message is not one short line of
// text about `path` is a finding; so is any other exception.
template <class Expected = io::InputError, class Read>
std::optional<Expected> try_read(const std::string& path, Read&& read) {
  try {
    read();
    return std::nullopt;
  } catch (const Expected& error) {
    if constexpr (std::is_base_of_v<io::InputError, Expected>) {
      if (error.file() != path) finding("error names the file '" + error.file() + "', not " + path);
    }
    internal::check_message(path, error.what());
    return error;
  } catch (const std::exception& error) {
    finding("unexpected " + internal::type_name(typeid(error)) + ": " + internal::printable(error.what()));
  } catch (...) {
    finding("unexpected exception of an unknown type");
  }
}

}  // namespace schmp::fuzz
