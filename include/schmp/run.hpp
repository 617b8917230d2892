// Running a program: schmp::Job owns MPI, flags and logging for the life of main(); Job::run<P>
// plays this rank's roles of program P and returns the exit status.
//
//   int main(int argc, char** argv) {
//     schmp::Job job(argc, argv, "usage: mpirun -np N my-app --data FILE [flags]");
//     return job.run<MyProgram>(MyProgram::Config{...from flags...});
//   }
#pragma once

#include <functional>
#include <initializer_list>
#include <memory>
#include <string>

#include "schmp/internal/adapters.hpp"
#include "schmp/program.hpp"
#include "schmp/rotation.hpp"

namespace schmp {

namespace detail {
class CommandLine;  // the parsed command line (runtime/command_line.hpp)
}  // namespace detail

// One-process subcommands beside a program's training run (`schmp-mf predict ...`):
//
//   if (schmp::take_subcommand(argc, argv, "predict"))
//     return schmp::run_tool(argc, argv, "usage: schmp-mf predict ...", [] { ...; return 0; });
//
// take_subcommand says whether argv[1] is `name` and, if so, drops it so that flags follow. run_tool
// parses the flags, runs `body`, and turns an exception into one line "program: error: message" and
// exit status 1.
bool take_subcommand(int& argc, char**& argv, const char* name);
int run_tool(int argc, char** argv, const std::string& usage, const std::function<int()>& body);

// "--NAME is not read WHERE" for the first of `flags` (names without dashes) that the command line or a
// flag file gave a value, or "" when none was: the flags of another mode (a model to predict with, given to
// training), which would otherwise be ignored, however wrong their paths. `where` is "in training",
// "by predict", ...
std::string unread_flag(std::initializer_list<const char*> flags, const std::string& where);

class Job {
 public:
  // Parses the command line (the flags of schmp/flags.hpp, --help and --flagfile, checked so that every
  // mistake is one line), sets up logging and, in a process a launcher started, MPI (one started without
  // mpirun is a job of one, which needs none). Every rank must then hold the same settings: the declared
  // flags, which a flag file or --fromenv could set apart on one host.
  Job(int& argc, char**& argv, const std::string& usage);
  ~Job();
  Job(const Job&) = delete;
  Job& operator=(const Job&) = delete;

  // A command line the program itself finds wrong (a flag's value it cannot parse): prints
  // "program: error: message" once, from the first rank, and returns the status every rank exits with.
  int refuse(const std::string& message) const;

  // Whether this process is the job's first rank: the one to print and write what main() adds after
  // its jobs (a model made of run_each's results).
  bool first_rank() const;
  // The job's ranks (1 in a process started without mpirun): run_each splits them into groups.
  int ranks() const;

  // Plays this rank's roles of program P (program.hpp or rotation.hpp) and returns the exit status.
  template <DynamicProgram P>
  int run(const typename P::Config& config) {
    return detail::run_program<P>(name_, config);
  }
  template <RotationProgram P>
  int run(const typename P::Config& config) {
    return detail::run_program<P>(name_, config);
  }

  // Plays independent jobs of program P side by side, as the folds of a cross-validation: the ranks
  // split into min(jobs, ranks) groups, and group g plays jobs g, g + groups, ... one after another,
  // each as run() plays a job on all ranks but quietly (no trace, checkpoint, progress or time line:
  // the program's finish() says what it says). Every rank gets each job's result, the Coordinator's
  // result() (program.hpp), in the order of `configs`. When a job fails its error is printed once and
  // `status` is the exit status, on every rank.
  template <DynamicProgram P>
  EachRun run_each(const std::vector<typename P::Config>& configs) {
    return detail::run_each_program<P>(name_, configs);
  }

 private:
  std::string name_;
  std::unique_ptr<detail::CommandLine> command_line_;  // what argc/argv point into after parsing
};

}  // namespace schmp
