// Output files that are never seen half-written: the content goes to a temporary file beside the
// target, is flushed to disk, and only then renamed over the target.
#pragma once

#include <functional>
#include <ostream>
#include <string>

namespace schmp::io {

// Calls write(stream) and publishes the file atomically; throws std::runtime_error naming the path
// when it cannot be written (the temporary file is removed).
void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& write);

// Throws std::runtime_error naming the path unless a file can be created there: lets a program
// refuse an unwritable output before a long run rather than after it.
void check_writable(const std::string& path);

}  // namespace schmp::io
