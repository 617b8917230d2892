// The command line as every schmp program reads it: gflags' flags, checked here first so that each
// mistake is one line of schmp's own form rather than gflags' (which ignores an unknown flag, or a flag
// left without its value, inside a flag file; recurses without end on a flag file that names itself;
// drops a stray argument such as the `false` of `--sweeps false` without a word; and reports the rest
// in its own "ERROR: ..." form).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace schmp::detail {

// User text for a one-line message: control characters (a newline, a carriage return) as \xNN.
std::string printable(std::string_view text);

class CommandLine {
 public:
  // Reads the flags of argc/argv, of the flag files they name (--flagfile) and of the environment
  // (--fromenv, --tryfromenv) into gflags' FLAGS_ variables, then points argc/argv at what is left: the
  // program name and at most `positional` plain arguments, which stay valid while this object lives.
  // Before any flag is set, throws std::invalid_argument with one line (starting "FILE:LINE: " for a
  // flag file's line) for the first mistake in the arguments' order: an unknown flag (a near name is
  // suggested), a value that does not parse as its flag's type, a flag without its value, a flag file
  // that cannot be read or that names itself, or a plain argument past `positional`. `ranks` processes read
  // the same command line (the ranks of a job), each for itself: with more than one, a flag file must be a
  // regular file, since a pipe or stdin reaches one of them only.
  //
  // Flag files are read as gflags documents them: `--name=value` lines (a true/false flag may stand
  // alone), `#` comments, and lines of program-name patterns that start a section applying only to the
  // programs they match; paths are the working directory's. Trailing blanks (a CRLF file's carriage
  // return among them) are not part of a value; a line that is neither a flag nor program names (`lambda=7`)
  // is refused. --undefok lets the unknown flags it names (and their --no forms) through, as in gflags.
  //
  // Asked for help (--help, --helpfull, --helpshort, --helpon, --helpmatch, --helpxml) or the version,
  // prints it and exits 0 before any mistake is reported; gflags' help exits 1, which mpirun reports as a
  // failed job.
  CommandLine(int& argc, char**& argv, int positional, int ranks);
  CommandLine(const CommandLine&) = delete;  // argv points into it
  CommandLine& operator=(const CommandLine&) = delete;

 private:
  std::vector<std::string> arguments_;
  std::vector<char*> pointers_;
};

}  // namespace schmp::detail
