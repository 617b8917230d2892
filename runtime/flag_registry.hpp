// The flags declared with SCHMP_FLAG (a program's) and with the framework's own declarations
// (runtime/flags.cpp): the one list that checks values, writes --help and the tables of docs/flags.md,
// and says which settings every rank must share.
#pragma once

#include <string>
#include <vector>

#include "schmp/flags.hpp"

namespace schmp::detail {

struct DeclaredFlag {
  std::string name;
  Rule rule;
  std::string declared_default;  // as declared, before a program's set_default()
  std::string group;             // "" for the program's own; else the framework group's title
  bool dynamic_only = false;     // read by dynamic-schedule programs only; rotation programs refuse it
  bool per_host = false;         // may differ between hosts, sized to each (--threads)
};

// In the order of declaration, which is each source file's order.
const std::vector<DeclaredFlag>& declared_flags();

bool declare_framework_flag(const char* name, const char* group, Rule rule, bool dynamic_only = false,
                            bool per_host = false);

// A flag's value of gflags' `type` as a person writes it: a double as short as it reads back (0.3, not
// gflags' 0.29999999999999999).
std::string shown_value(const std::string& type, const std::string& value);

// Throws std::invalid_argument, one line, for the first declared flag whose value breaks its rule.
void check_declared_flags();

// --help: the usage message, the program's flags, then the framework's by group, with defaults.
void print_help(const char* program);
// --helpmarkdown: the program's flags as a Markdown table and the framework defaults it changes; with
// `framework`, the framework's flags by group, with their declared defaults.
void print_markdown(const char* program, bool framework);

}  // namespace schmp::detail
