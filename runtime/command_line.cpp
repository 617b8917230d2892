#include "command_line.hpp"

#include <fnmatch.h>
#include <gflags/gflags.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <utility>

namespace schmp::detail {

namespace {

// One argument of the command line, or one flag line of a flag file.
struct Argument {
  std::string text;
  std::string origin;  // "FILE:LINE: " for a flag file's line; "" on the command line
};

bool is_flag(std::string_view text) { return text.size() > 1 && text.front() == '-'; }

// A flag argument's name and, after '=', its value: `--name=value`, `-name=value`, `--name`.
struct FlagText {
  std::string name;
  std::optional<std::string> value;
};

FlagText split_flag(std::string_view text) {
  text.remove_prefix(text.starts_with("--") ? 2 : 1);
  const std::size_t equals = text.find('=');
  if (equals == std::string_view::npos) return {std::string(text), std::nullopt};
  return {std::string(text.substr(0, equals)), std::string(text.substr(equals + 1))};
}

std::optional<gflags::CommandLineFlagInfo> find_flag(const std::string& name) {
  gflags::CommandLineFlagInfo info;
  if (!gflags::GetCommandLineFlagInfo(name.c_str(), &info)) return std::nullopt;
  return info;
}

bool is_true_false_flag(const std::string& name) {
  const auto info = find_flag(name);
  return info && info->type == "bool";
}

// The files of a --flagfile argument (`--flagfile=A,B`, or `--flagfile A` with A in `next`), or
// nullopt when the argument is some other flag. `origin` names a flag file's line.
std::optional<std::vector<std::string>> named_flagfiles(std::string_view text, const std::string* next,
                                                        const std::string& origin) {
  if (!is_flag(text)) return std::nullopt;
  const FlagText flag = split_flag(text);
  if (flag.name != "flagfile") return std::nullopt;
  if (!flag.value && !next) throw std::invalid_argument(origin + "--flagfile needs a value: --flagfile=FILE");
  const std::string_view value = flag.value ? *flag.value : *next;
  std::vector<std::string> files;
  for (std::size_t start = 0; start <= value.size();) {
    const std::size_t comma = std::min(value.find(',', start), value.size());
    if (comma > start) files.emplace_back(value.substr(start, comma - start));
    start = comma + 1;
  }
  return files;
}

// The command line with the lines of its flag files in place of each --flagfile, in order.
class FlagFileReader {
 public:
  explicit FlagFileReader(std::string program) : program_(std::move(program)) {}

  std::vector<Argument> expand(int argc, char** argv) {
    for (int k = 1; k < argc; ++k) {
      const std::string text = argv[k];
      // gflags reads no flag after "--": neither do we, nor a flag file named there.
      if (text == "--") {
        for (; k < argc; ++k) arguments_.push_back({argv[k], ""});
        break;
      }
      const std::string next = k + 1 < argc ? argv[k + 1] : "";
      const auto files = named_flagfiles(text, k + 1 < argc ? &next : nullptr, "");
      if (!files) {
        arguments_.push_back({text, ""});
        continue;
      }
      if (text.find('=') == std::string::npos) ++k;
      for (const std::string& file : *files) read(file, "");
    }
    return std::move(arguments_);
  }

 private:
  void read(const std::string& file, const std::string& origin) {
    // A regular file is known by its canonical path, so that one naming itself through others is found;
    // a pipe (`--flagfile <(...)`) is read once and names no file of its own.
    std::error_code error;
    const bool regular = std::filesystem::is_regular_file(file, error);
    const std::string canonical = regular ? std::filesystem::weakly_canonical(file, error).string() : "";
    if (regular && std::find(open_files_.begin(), open_files_.end(), canonical) != open_files_.end())
      throw std::invalid_argument(file + ": --flagfile names itself, directly or through other flag files");
    std::ifstream in(file);
    if (!in)
      throw std::invalid_argument(origin + file + ": cannot read the flag file: " + std::strerror(errno));
    if (regular) open_files_.push_back(canonical);
    bool in_program_names = false;
    bool applies = true;
    std::size_t number = 0;
    for (std::string line; std::getline(in, line);) {
      ++number;
      const auto blank = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
      const auto first = std::find_if_not(line.begin(), line.end(), blank);
      const auto last = std::find_if_not(line.rbegin(), line.rend(), blank).base();
      if (first >= last || *first == '#') continue;
      const std::string text(first, last);
      const std::string where = file + ":" + std::to_string(number) + ": ";
      if (text.front() != '-') {
        // Program-name patterns: the flags that follow apply only to a program one of them matches.
        if (!in_program_names) applies = false;
        in_program_names = true;
        applies = applies || names_this_program(text);
        continue;
      }
      in_program_names = false;
      if (!applies) continue;
      if (const auto nested = named_flagfiles(text, nullptr, where)) {
        for (const std::string& nested_file : *nested) read(nested_file, where);
      } else {
        arguments_.push_back({text, where});
      }
    }
    if (regular) open_files_.pop_back();
  }

  // Whether one of a line's blank-separated patterns matches the program's path or its name alone.
  bool names_this_program(const std::string& patterns) const {
    const std::string name = std::filesystem::path(program_).filename().string();
    std::size_t start = 0;
    while (start < patterns.size()) {
      const std::size_t end = std::min(patterns.find_first_of(" \t", start), patterns.size());
      const std::string pattern = patterns.substr(start, end - start);
      if (!pattern.empty() && (fnmatch(pattern.c_str(), program_.c_str(), FNM_PATHNAME) == 0 ||
                               fnmatch(pattern.c_str(), name.c_str(), FNM_PATHNAME) == 0))
        return true;
      start = end + 1;
    }
    return false;
  }

  std::string program_;
  std::vector<Argument> arguments_;
  std::vector<std::string> open_files_;
};

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t substitution = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      diagonal = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitution});
    }
  }
  return row[b.size()];
}

std::string unknown_flag(const std::string& name) {
  std::vector<gflags::CommandLineFlagInfo> flags;
  gflags::GetAllFlags(&flags);
  std::string nearest;
  std::size_t nearest_distance = std::max<std::size_t>(2, name.size() / 4) + 1;
  for (const gflags::CommandLineFlagInfo& flag : flags) {
    const std::size_t distance = edit_distance(name, flag.name);
    if (distance < nearest_distance) {
      nearest = flag.name;
      nearest_distance = distance;
    }
  }
  return "unknown flag --" + name + (nearest.empty() ? " (see --help)" : ": did you mean --" + nearest + "?");
}

std::string expected_value(const std::string& type) {
  if (type == "bool") return "true or false";
  if (type == "int32") return "a whole number that fits 32 bits";
  if (type == "uint32") return "a whole number from 0 that fits 32 bits";
  if (type == "int64") return "a whole number that fits 64 bits";
  if (type == "uint64") return "a whole number from 0 that fits 64 bits";
  return "a number";
}

// The names --undefok lets through unknown, as gflags does: its last value counts.
std::vector<std::string> allowed_unknown(const std::vector<Argument>& arguments) {
  std::string names;
  for (std::size_t k = 0; k < arguments.size(); ++k) {
    if (!is_flag(arguments[k].text)) continue;
    const FlagText flag = split_flag(arguments[k].text);
    if (flag.name != "undefok") continue;
    if (flag.value) {
      names = *flag.value;
    } else if (k + 1 < arguments.size()) {
      names = arguments[k + 1].text;
    }
  }
  std::vector<std::string> allowed;
  for (std::size_t start = 0; start <= names.size();) {
    const std::size_t comma = std::min(names.find(',', start), names.size());
    if (comma > start) allowed.push_back(names.substr(start, comma - start));
    start = comma + 1;
  }
  return allowed;
}

// The arguments as gflags will read them (every value joined to its flag by '='), then the plain ones.
std::vector<std::string> checked(const std::vector<Argument>& arguments, int positional) {
  const std::vector<std::string> undefined_ok = allowed_unknown(arguments);
  std::vector<std::string> flags;
  std::vector<std::string> plain;
  std::string bare_true_false;  // the flag just before, when it was a true/false flag without '='
  bool after_dashes = false;
  // Each value is tried on its flag, in gflags' own parser; the saver puts every flag back after.
  const gflags::FlagSaver restore_flags;
  for (std::size_t k = 0; k < arguments.size(); ++k) {
    const Argument& argument = arguments[k];
    const std::string previous_true_false = std::exchange(bare_true_false, "");
    if (after_dashes || !is_flag(argument.text)) {
      if (static_cast<int>(plain.size()) == positional) {
        throw std::invalid_argument("unexpected argument '" + argument.text + "'" +
                                    (previous_true_false.empty()
                                         ? ": settings are flags, --name=VALUE (see --help)"
                                         : " after --" + previous_true_false +
                                               ": a true/false flag takes its value after '=', as in --" +
                                               previous_true_false + "=" + argument.text));
      }
      plain.push_back(argument.text);
      continue;
    }
    if (argument.text == "--") {
      after_dashes = true;
      continue;
    }
    FlagText flag = split_flag(argument.text);
    auto info = find_flag(flag.name);
    if (!info && flag.name.starts_with("no") && is_true_false_flag(flag.name.substr(2))) {
      if (flag.value) {
        throw std::invalid_argument(argument.origin + "--" + flag.name + " takes no value: write --" +
                                    flag.name.substr(2) + "=" + *flag.value + " instead");
      }
      flags.push_back(argument.text);
      continue;
    }
    if (!info) {
      if (std::find(undefined_ok.begin(), undefined_ok.end(), flag.name) != undefined_ok.end()) continue;
      // `--data d.svm` on a flag file's line is one flag name with a blank in it to gflags.
      const std::size_t blank = flag.name.find_first_of(" \t");
      if (!argument.origin.empty() && !flag.value && blank != std::string::npos &&
          find_flag(flag.name.substr(0, blank))) {
        const std::string name = flag.name.substr(0, blank);
        const std::size_t value = flag.name.find_first_not_of(" \t", blank);
        throw std::invalid_argument(argument.origin + "in a flag file, a value follows '=': --" + name + "=" +
                                    flag.name.substr(value));
      }
      throw std::invalid_argument(argument.origin + unknown_flag(flag.name));
    }
    if (!flag.value) {
      if (info->type == "bool") {
        bare_true_false = flag.name;
        flags.push_back(argument.text);
        continue;
      }
      // On the command line a value may follow as the next argument, unless that is a flag itself; a
      // flag file's line holds its flag's value.
      const bool next_is_value =
          argument.origin.empty() && k + 1 < arguments.size() && arguments[k + 1].origin.empty() &&
          !(is_flag(arguments[k + 1].text) && find_flag(split_flag(arguments[k + 1].text).name));
      if (!next_is_value) {
        throw std::invalid_argument(argument.origin + "--" + flag.name + " needs a value: --" + flag.name +
                                    "=VALUE");
      }
      flag.value = arguments[++k].text;
    }
    // The recursive flags act when set: --flagfile is read above; --fromenv and --tryfromenv are left
    // to gflags, which reads the environment once.
    if (flag.name != "fromenv" && flag.name != "tryfromenv" &&
        gflags::SetCommandLineOption(flag.name.c_str(), flag.value->c_str()).empty()) {
      throw std::invalid_argument(argument.origin + "--" + flag.name + "=" + *flag.value + ": expected " +
                                  expected_value(info->type));
    }
    flags.push_back("--" + flag.name + "=" + *flag.value);
  }
  // After "--", gflags takes a plain argument that starts with '-' for no flag.
  if (!plain.empty()) flags.emplace_back("--");
  flags.insert(flags.end(), plain.begin(), plain.end());
  return flags;
}

}  // namespace

CommandLine::CommandLine(int& argc, char**& argv, int positional) {
  arguments_.emplace_back(argv[0]);
  for (std::string& argument : checked(FlagFileReader(argv[0]).expand(argc, argv), positional))
    arguments_.push_back(std::move(argument));
  for (std::string& argument : arguments_) pointers_.push_back(argument.data());
  pointers_.push_back(nullptr);
  int count = static_cast<int>(arguments_.size());
  char** pointers = pointers_.data();
  gflags::ParseCommandLineNonHelpFlags(&count, &pointers, true);
  // gflags' own --help exits 1, which mpirun reports as a failed job: help that was asked for is no
  // failure. The other reporting flags (--helpshort, --helpxml, --version) are gflags' as they are.
  std::string help;
  std::string help_full;
  if ((gflags::GetCommandLineOption("help", &help) && help == "true") ||
      (gflags::GetCommandLineOption("helpfull", &help_full) && help_full == "true")) {
    gflags::ShowUsageWithFlagsRestrict(pointers[0], "");
    std::exit(0);
  }
  gflags::HandleCommandLineHelpFlags();
  argc = count;
  argv = pointers;
}

}  // namespace schmp::detail
