// Output files that are never seen half-written: the content goes to a temporary file beside the
// target, is flushed to disk, and only then renamed over the target.
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace schmp::io {

// Calls write(stream) and publishes the file atomically; throws std::runtime_error naming the path
// when it cannot be written (the temporary file is removed).
void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& write);

// Files that belong together (a dataset and its true coefficients): each is written and flushed under
// a temporary name, and none is renamed into place until every one is complete, so that a failure to
// write leaves none of them rather than one without the other.
using FileWriter = std::pair<std::string, std::function<void(std::ostream&)>>;
void write_files_atomically(const std::vector<FileWriter>& files);

// Throws std::runtime_error naming the path unless a file can be created there: lets a program
// refuse an unwritable output before a long run rather than after it.
void check_writable(const std::string& path);

// A file that a command-line flag names ("--output", "model.txt").
struct FlagFile {
  std::string flag;
  std::string path;
};

// Throws std::runtime_error naming the path when an output is the same file as an input (the run would
// overwrite its own data; through links and other spellings of the path too) or as another output (one
// would replace the other). Empty paths are not given, and are skipped.
void refuse_overwriting(const std::vector<FlagFile>& outputs, const std::vector<FlagFile>& inputs);

}  // namespace schmp::io
