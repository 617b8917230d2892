#include "flag_registry.hpp"

#include <gflags/gflags.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <utility>

namespace schmp {

namespace {

// A number as short as it reads back: 0.1, not gflags' 0.10000000000000001.
std::string shortest(double value) {
  if (value == std::trunc(value) && std::abs(value) < 1e15)
    return std::to_string(static_cast<long long>(value));
  char digits[32];
  return std::string(digits, std::to_chars(digits, digits + sizeof digits, value).ptr);
}

// "a", "a or b", "a, b or c".
std::string listed(const std::vector<std::string>& items) {
  std::string words;
  for (std::size_t k = 0; k < items.size(); ++k) {
    if (k > 0) words += k + 1 == items.size() ? " or " : ", ";
    words += items[k];
  }
  return words;
}

}  // namespace

Rule::Rule(std::string words, std::function<bool(double)> number)
    : words_(std::move(words)), number_(std::move(number)) {}

Rule::Rule(std::string words, std::vector<std::string> choices)
    : words_(std::move(words)), choices_(std::move(choices)) {}

bool Rule::holds(const std::string& value) const {
  return choices_.empty() || std::find(choices_.begin(), choices_.end(), value) != choices_.end();
}

Rule any() { return Rule(); }

// NaN breaks every rule. Infinity passes at_least (an interval of inf seconds: never), not positive (an
// infinite penalty, prior or step breaks the arithmetic as a NaN does).
Rule at_least(double low) {
  return Rule(low == 0 ? "0 or more" : "at least " + shortest(low), [low](double x) { return x >= low; });
}

Rule positive() {
  return Rule("positive and finite", [](double x) { return x > 0 && std::isfinite(x); });
}

Rule between(double low, double high) {
  return Rule("between " + shortest(low) + " and " + shortest(high),
              [low, high](double x) { return x >= low && x <= high; });
}

Rule above_up_to(double low, double high) {
  return Rule("in (" + shortest(low) + ", " + shortest(high) + "]",
              [low, high](double x) { return x > low && x <= high; });
}

Rule one_of(std::initializer_list<double> values) {
  std::vector<std::string> words;
  for (const double value : values) words.push_back(shortest(value));
  return Rule(listed(words), [allowed = std::vector<double>(values)](double x) {
    return std::find(allowed.begin(), allowed.end(), x) != allowed.end();
  });
}

Rule one_of(std::initializer_list<const char*> values) {
  std::vector<std::string> choices(values.begin(), values.end());
  std::string words = listed(choices);
  return Rule(std::move(words), std::move(choices));
}

void set_default(const char* flag, const std::string& value) {
  if (gflags::SetCommandLineOptionWithMode(flag, value.c_str(), gflags::SET_FLAGS_DEFAULT).empty())
    throw std::logic_error(std::string("set_default: no flag --") + flag + " takes '" + value + "'");
}

namespace detail {

namespace {

std::vector<DeclaredFlag>& registry() {
  static std::vector<DeclaredFlag> flags;
  return flags;
}

gflags::CommandLineFlagInfo info_of(const std::string& name) {
  return gflags::GetCommandLineFlagInfoOrDie(name.c_str());
}

bool add(DeclaredFlag flag) {
  const gflags::CommandLineFlagInfo info = info_of(flag.name);
  const bool number = info.type != "string" && info.type != "bool";
  // A rule of the wrong kind would never be checked: a program's mistake, found at its first start.
  if ((flag.rule.is_choice() && number) || (flag.rule.is_number() && !number))
    throw std::logic_error("--" + flag.name + " is a " + info.type + " flag: the rule '" + flag.rule.words() +
                           "' does not apply to it");
  flag.declared_default = info.default_value;
  registry().push_back(std::move(flag));
  return true;
}

// The framework's groups in the order of declaration.
std::vector<std::string> framework_groups() {
  std::vector<std::string> groups;
  for (const DeclaredFlag& flag : registry()) {
    if (!flag.group.empty() && std::find(groups.begin(), groups.end(), flag.group) == groups.end())
      groups.push_back(flag.group);
  }
  return groups;
}

// The flags of `group` ("": the program's own), in the order of declaration.
std::vector<const DeclaredFlag*> flags_in(const std::string& group) {
  std::vector<const DeclaredFlag*> flags;
  for (const DeclaredFlag& flag : registry()) {
    if (flag.group == group) flags.push_back(&flag);
  }
  return flags;
}

void print_help_line(const DeclaredFlag& flag) {
  const gflags::CommandLineFlagInfo info = info_of(flag.name);
  const std::string value = shown_value(info.type, info.default_value);
  std::string left = "  --" + flag.name + (value.empty() ? "" : "=" + value);
  constexpr std::size_t kColumn = 30;
  if (left.size() + 2 > kColumn) {
    std::printf("%s\n%*s%s\n", left.c_str(), static_cast<int>(kColumn), "", info.description.c_str());
  } else {
    left.resize(kColumn, ' ');
    std::printf("%s%s\n", left.c_str(), info.description.c_str());
  }
}

// A table cell: a '|' in the text would end the cell.
std::string cell(const std::string& text) {
  std::string out;
  for (const char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

void print_table(const std::vector<const DeclaredFlag*>& flags, bool declared_defaults) {
  std::printf("| flag | type | default | meaning |\n|---|---|---|---|\n");
  for (const DeclaredFlag* flag : flags) {
    const gflags::CommandLineFlagInfo info = info_of(flag->name);
    const std::string value =
        shown_value(info.type, declared_defaults ? flag->declared_default : info.default_value);
    std::string row = "| `--" + flag->name + "` | " + info.type + " | ";
    if (!value.empty()) row.append("`").append(cell(value)).append("`");
    row += " | " + cell(info.description);
    if (!flag->rule.words().empty()) row += ". Must be " + cell(flag->rule.words());
    std::printf("%s. |\n", row.c_str());
  }
}

}  // namespace

std::string shown_value(const std::string& type, const std::string& value) {
  if (type != "double") return value;
  char* end = nullptr;
  const double number = std::strtod(value.c_str(), &end);
  return end != value.c_str() && *end == '\0' ? shortest(number) : value;
}

const std::vector<DeclaredFlag>& declared_flags() { return registry(); }

bool declare_flag(const char* name, Rule rule) {
  DeclaredFlag flag;
  flag.name = name;
  flag.rule = std::move(rule);
  return add(std::move(flag));
}

bool declare_framework_flag(const char* name, const char* group, Rule rule, bool dynamic_only,
                            bool per_host) {
  DeclaredFlag flag;
  flag.name = name;
  flag.rule = std::move(rule);
  flag.group = group;
  flag.dynamic_only = dynamic_only;
  flag.per_host = per_host;
  return add(std::move(flag));
}

void check_declared_flags() {
  for (const DeclaredFlag& flag : registry()) {
    const gflags::CommandLineFlagInfo info = info_of(flag.name);
    const std::string& value = info.current_value;
    if (flag.rule.is_choice()) {
      if (!flag.rule.holds(value))
        throw std::invalid_argument("--" + flag.name + " must be " + flag.rule.words() + ", not '" + value +
                                    "'");
    } else if (flag.rule.is_number() && !flag.rule.holds(std::strtod(value.c_str(), nullptr))) {
      throw std::invalid_argument("--" + flag.name + " must be " + flag.rule.words() + ", not " +
                                  shown_value(info.type, value));
    }
  }
}

void print_help(const char* program) {
  std::printf("%s\n", gflags::ProgramUsage());
  if (const auto own = flags_in(""); !own.empty()) {
    std::printf("\n%s's flags:\n", program);
    for (const DeclaredFlag* flag : own) print_help_line(*flag);
  }
  for (const std::string& group : framework_groups()) {
    std::printf("\nFramework flags, %s:\n", group.c_str());
    for (const DeclaredFlag* flag : flags_in(group)) print_help_line(*flag);
  }
  std::printf(
      "\nFlag files and the environment: --flagfile=FILE, --fromenv=NAMES, --tryfromenv=NAMES, "
      "--undefok=NAMES.\n--helpfull lists every flag, logging's included. docs/flags.md has them all.\n");
}

void print_markdown(const char* program, bool framework) {
  if (framework) {
    for (const std::string& group : framework_groups()) {
      std::string heading = group;
      heading[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(heading[0])));
      std::printf("### %s\n\n", heading.c_str());
      print_table(flags_in(group), true);
      std::printf("\n");
    }
    return;
  }
  std::printf("## %s\n\n```\n%s\n```\n\n", program, gflags::ProgramUsage());
  print_table(flags_in(""), false);
  // The framework defaults this program changes (set_default).
  std::string changed;
  for (const DeclaredFlag& flag : registry()) {
    const gflags::CommandLineFlagInfo info = info_of(flag.name);
    if (flag.group.empty() || info.default_value == flag.declared_default) continue;
    changed += (changed.empty() ? " `--" : ", `--") + flag.name + "=" +
               shown_value(info.type, info.default_value) + "`";
  }
  if (!changed.empty()) std::printf("\nFramework defaults it changes:%s.\n", changed.c_str());
  std::printf("\n");
}

}  // namespace detail

}  // namespace schmp
