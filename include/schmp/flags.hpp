// A program's own command-line flags, each declared once: its type, name, default, the rule its value
// must follow and one line of help.
//
//   SCHMP_FLAG(string, data, "", schmp::any(), "Training data (LIBSVM)");
//   SCHMP_FLAG(double, lambda, 0.1, schmp::at_least(0), "Weight of the penalty");
//   SCHMP_FLAG(string, solver, "ccd", schmp::one_of({"ccd", "sgd"}), "ccd: coordinate descent; sgd: SGD");
//
// The declaration is the whole flag. FLAGS_lambda holds its value once schmp::Job has read the command
// line. Job refuses a value that breaks the rule, in one line on every rank ("--lambda must be 0 or
// more"). `--help` lists the program's flags first, then the framework's. `--helpmarkdown` prints the
// same as a table, which docs/flags.md is made from. Every rank of a job must hold the same value of every
// declared flag (a flag defined with gflags' DEFINE_ alone is not compared).
//
// Types: bool, int32, uint32, int64, uint64, double, string. Declare flags at namespace scope, in the
// source file of main().
#pragma once

#include <gflags/gflags.h>

#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

namespace schmp {

// What a flag's value must be, in the words of the message "--NAME must be WORDS".
class Rule {
 public:
  Rule() = default;  // any value
  Rule(std::string words, std::function<bool(double)> number);
  Rule(std::string words, std::vector<std::string> choices);

  const std::string& words() const { return words_; }
  bool holds(double value) const { return !number_ || number_(value); }
  bool holds(const std::string& value) const;
  bool is_choice() const { return !choices_.empty(); }
  bool is_number() const { return static_cast<bool>(number_); }

 private:
  std::string words_;
  std::function<bool(double)> number_;
  std::vector<std::string> choices_;
};

Rule any();
Rule at_least(double low);                               // low or more ("at least 1", "0 or more")
Rule positive();                                         // more than 0
Rule between(double low, double high);                   // low <= value <= high
Rule above_up_to(double low, double high);               // low < value <= high ("in (0, 1]")
Rule one_of(std::initializer_list<double> values);       // "1 or 2": write {1.0, 2.0}
Rule one_of(std::initializer_list<const char*> values);  // "ccd or sgd"

// Gives a flag another default for this program, before schmp::Job reads the command line: a framework
// flag whose default suits the program better (Lasso's --eta). --help and docs/flags.md show it.
void set_default(const char* flag, const std::string& value);

namespace detail {
// Records a flag that DEFINE_TYPE has just registered with gflags (SCHMP_FLAG's second half).
bool declare_flag(const char* name, Rule rule);
}  // namespace detail

}  // namespace schmp

#define SCHMP_FLAG(type, name, value, rule, help)                                \
  DEFINE_##type(name, value, help);                                              \
  namespace schmp_flags {                                                        \
  [[maybe_unused]] const bool name = ::schmp::detail::declare_flag(#name, rule); \
  }
