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

// Throws std::runtime_error naming the path when an output is the same file as an input, or lies in an
// input that is a directory of shards (the run would overwrite its own data; through links and other
// spellings of the path too), or is the same file as another output (one would replace the other).
// Empty paths are flags not given, and are skipped.
void refuse_overwriting(const std::vector<FlagFile>& outputs, const std::vector<FlagFile>& inputs);

// Whether two paths name one file: the same inode when both exist, else the same path once `.`, `..`
// and the links are resolved (links to a file not there yet included: an output is written through them).
bool same_file(const std::string& a, const std::string& b);

// The files a run reads and writes, by flag: a program's Config may list its own (`io::RunFiles
// files() const`), and the framework adds --trace, --checkpoint and --resume and refuses, on every rank
// before any work, an output that would overwrite an input or another output (refuse_overwriting).
struct RunFiles {
  std::vector<FlagFile> written;
  std::vector<FlagFile> read;
};

}  // namespace schmp::io
