// schmp-shard: splits a text input into a directory of part files that every app reads as the file.
//
//   schmp-shard --input FILE --parts N --out DIR [--format auto|libsvm|ratings|docword|matrix_market|text]
//               [--header_lines K] [--force]
//
// The work is schmp::io::write_shards (schmp/io.hpp); docs/sharding.md is the manual.
#include <gflags/gflags.h>

#include <csignal>
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>

#include "../runtime/command_line.hpp"
#include "schmp/flags.hpp"
#include "schmp/io.hpp"

SCHMP_FLAG(string, input, "", schmp::any(), "The file to split (or a directory of shards to split again)");
SCHMP_FLAG(int32, parts, 0, schmp::any(), "Number of part files");
SCHMP_FLAG(string, out, "", schmp::any(), "The directory of shards to create");
SCHMP_FLAG(string, format, "auto",
           schmp::one_of({"auto", "libsvm", "ratings", "docword", "matrix_market", "text"}),
           "What header stays in the first part: docword keeps D, W, NNZ; matrix_market its banner, comments "
           "and size line");
SCHMP_FLAG(uint64, header_lines, 0, schmp::any(),
           "Lines kept in the first part as the header; when given, --format is not used");
SCHMP_FLAG(bool, force, false, schmp::any(), "Replace an existing non-empty --out directory");

namespace {

// Set by SIGINT or SIGTERM: the split stops at its next block and removes what it wrote.
volatile std::sig_atomic_t stop_signal = 0;

void note_signal(int signal) { stop_signal = signal; }

}  // namespace

int main(int argc, char** argv) {
  gflags::SetUsageMessage(
      "usage: schmp-shard --input FILE --parts N --out DIR [--format auto|libsvm|ratings|docword|"
      "matrix_market|text] [--header_lines K] [--force]");
  try {
    const schmp::detail::CommandLine command_line(argc, argv, 0, 1);
    if (FLAGS_input.empty()) throw std::invalid_argument("no input (--input FILE)");
    schmp::io::ShardOptions options;
    options.input = FLAGS_input;
    options.parts = FLAGS_parts;
    options.output = FLAGS_out;
    options.format = schmp::io::parse_shard_format(FLAGS_format);
    if (!gflags::GetCommandLineFlagInfoOrDie("header_lines").is_default)
      options.header_lines = FLAGS_header_lines;
    options.force = FLAGS_force;
    options.stop_requested = [] { return stop_signal != 0; };
    std::signal(SIGINT, note_signal);
    std::signal(SIGTERM, note_signal);
    const auto parts = schmp::io::write_shards(options);
    std::printf("schmp-shard: wrote %zu parts to %s\n", parts.size(), FLAGS_out.c_str());
  } catch (const std::exception& error) {
    if (stop_signal != 0) {
      std::fprintf(stderr, "schmp-shard: error: %s: %s left unwritten\n",
                   stop_signal == SIGINT ? "interrupted" : "terminated", FLAGS_out.c_str());
      return 128 + stop_signal;
    }
    std::fprintf(stderr, "schmp-shard: error: %s\n", error.what());
    return 1;
  }
  return 0;
}
