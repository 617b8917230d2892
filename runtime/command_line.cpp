#include "command_line.hpp"

#include <fnmatch.h>
#include <gflags/gflags.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "flag_registry.hpp"

namespace schmp::detail {

// User text in a message, with control characters (a newline, a carriage return) as \xNN: a message
// stays one line.
std::string printable(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (std::iscntrl(static_cast<unsigned char>(c))) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", static_cast<unsigned char>(c));
      out += escaped;
    } else {
      out += c;
    }
  }
  return out;
}

namespace {

// One argument of the command line, one flag line of a flag file, or one flag taken from the
// environment (--fromenv).
struct Argument {
  std::string text;
  std::string origin;  // what a message starts with: "FILE:LINE: ", "FLAGS_name (environment): ", or ""
  bool plain = false;  // after the command line's "--": an argument, whatever it looks like
  // A name --fromenv or --tryfromenv gave that no flag has (the text): an error unless --undefok, which
  // may come later, lets it through, as in gflags.
  bool unknown_in_environment = false;
  // A mistake met while reading flag files or the environment (its message, the text): raised in its
  // place, after any mistake before it, such as an unknown name from the environment.
  bool expansion_error = false;
};

bool is_flag(std::string_view text) { return text.size() > 1 && text.front() == '-'; }

// Whether an argument reads as a flag: neither plain, nor a name from the environment, nor a mistake.
bool reads_as_flag(const Argument& argument) {
  return !argument.plain && !argument.unknown_in_environment && !argument.expansion_error &&
         is_flag(argument.text);
}

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

// Whether `name` is a flag, or `noX` for a true/false flag X.
bool names_a_flag(const std::string& name) {
  if (find_flag(name)) return true;
  if (!name.starts_with("no")) return false;
  const auto negated = find_flag(name.substr(2));
  return negated && negated->type == "bool";
}

// Whether a command-line argument after a flag without '=' is that flag's value: not when it is a
// flag itself (a negative number is a value), nor one of the unknown flags `allowed` lets through.
bool is_value(std::string_view next, const std::vector<std::string>& allowed) {
  if (next.starts_with("--")) return false;
  if (!is_flag(next)) return true;
  const std::string name = split_flag(next).name;
  return !names_a_flag(name) && std::find(allowed.begin(), allowed.end(), name) == allowed.end();
}

// Whether arguments[k], a flag without '=', takes the next argument as its value: both on the command
// line (a flag file's line, or the environment, holds its flag's value whole) and the next one a value
// by is_value.
bool takes_next_as_value(const std::vector<Argument>& arguments, std::size_t k,
                         const std::vector<std::string>& allowed) {
  if (k + 1 >= arguments.size()) return false;
  const Argument& next = arguments[k + 1];
  return arguments[k].origin.empty() && next.origin.empty() && !next.plain && !next.unknown_in_environment &&
         !next.expansion_error && is_value(next.text, allowed);
}

std::vector<std::string> comma_list(std::string_view list) {
  std::vector<std::string> items;
  for (std::size_t start = 0; start <= list.size();) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    items.emplace_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  return items;
}

// The flags that act when they are read: on files (--flagfile) or on the environment (--fromenv,
// --tryfromenv).
enum class Recursive { kNone, kFlagfile, kEnvironment };

Recursive recursive_flag(std::string_view text) {
  if (!is_flag(text)) return Recursive::kNone;
  const std::string name = split_flag(text).name;
  if (name == "flagfile") return Recursive::kFlagfile;
  if (name == "fromenv" || name == "tryfromenv") return Recursive::kEnvironment;
  return Recursive::kNone;
}

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

// The flags an unknown name most likely meant, as "--a", "--a or --b" or "" (for names of three letters
// or more): one a letter off (a typo); else those that start with the name, if three at most (--iter:
// --iterations; --sched: --schedule_size or --schedulers); else, for a file to write (--model_out), the
// flag that names it; else one a few letters off (--lamda); else the
// longest flag the name starts with, unless another starts with that flag too (--output: --out;
// --checkpoint_interval gets none, --checkpoint being a file and --checkpoint_every beside it).
std::string meant_flags(const std::string& name) {
  if (name.size() < 3) return "";
  std::vector<gflags::CommandLineFlagInfo> flags;
  gflags::GetAllFlags(&flags);
  std::string nearest;
  std::size_t nearest_distance = std::max<std::size_t>(2, name.size() / 4) + 1;
  std::vector<std::string> completions;
  std::string longest_start;
  for (const gflags::CommandLineFlagInfo& flag : flags) {
    const std::size_t distance = edit_distance(name, flag.name);
    if (distance < nearest_distance) {
      nearest = flag.name;
      nearest_distance = distance;
    }
    if (flag.name.starts_with(name)) completions.push_back("--" + flag.name);
    if (flag.name.size() >= 3 && name.starts_with(flag.name) && flag.name.size() > longest_start.size())
      longest_start = flag.name;
  }
  if (!nearest.empty() && nearest_distance <= 1) return "--" + nearest;
  if (!completions.empty() && completions.size() <= 3) {
    std::string listed = completions.front();
    for (std::size_t k = 1; k < completions.size(); ++k)
      listed += (k + 1 == completions.size() ? " or " : ", ") + completions[k];
    return listed;
  }
  // `--model_out`, `--trace_output`: a file to write, named after what goes in it. The framework's trace
  // and checkpoint have flags of their own; anything else a program writes goes to its --output (its
  // --model, where there is one, is what predict reads).
  for (const std::string_view suffix : {"_out", "_output"}) {
    if (!name.ends_with(suffix)) continue;
    const std::string written = name.substr(0, name.size() - suffix.size());
    if (written == "trace" || written == "checkpoint") return "--" + written;
    const bool has_output =
        std::any_of(flags.begin(), flags.end(), [](const auto& flag) { return flag.name == "output"; });
    if (has_output && written != "output") return "--output";
  }
  if (!nearest.empty()) return "--" + nearest;
  const auto started_by_longest = std::count_if(flags.begin(), flags.end(), [&](const auto& flag) {
    return !longest_start.empty() && flag.name.starts_with(longest_start);
  });
  return started_by_longest == 1 ? "--" + longest_start : "";
}

// "unknown flag --name", with the flags it most likely meant.
std::string unknown_flag(const std::string& name) {
  const std::string meant = meant_flags(name);
  return "unknown flag --" + printable(name) +
         (meant.empty() ? " (see --help)" : ": did you mean " + meant + "?");
}

// The command line with, in place of each --flagfile, the lines of its files and, in place of each
// --fromenv or --tryfromenv, the flags the environment gives (FLAGS_name=value), in order. `ranks`
// processes read the same command line, each for itself. The first mistake met here stops the reading
// of flag files and the environment; the command line's other arguments still follow it.
class Expansion {
 public:
  Expansion(int argc, char** argv, int ranks) : program_(argv[0]), ranks_(ranks) {
    for (int k = 1; k < argc; ++k) {
      const std::string text = argv[k];
      // gflags reads no flag after "--": neither do we.
      if (text == "--") {
        for (++k; k < argc; ++k) arguments_.push_back({argv[k], "", true});
        break;
      }
      const Recursive recursive = recursive_flag(text);
      if (recursive == Recursive::kNone) {
        arguments_.push_back({text, ""});
        continue;
      }
      std::optional<std::string> value = split_flag(text).value;
      if (!value && k + 1 < argc && is_value(argv[k + 1], {})) value = argv[++k];
      if (failed_) continue;
      try {
        expand(recursive, split_flag(text).name, value, "");
      } catch (const std::invalid_argument& mistake) {
        arguments_.push_back({mistake.what(), "", false, false, true});
        failed_ = true;
      }
    }
  }

  std::vector<Argument> take() { return std::move(arguments_); }

 private:
  // An empty value names nothing (a wrapper's `--flagfile="$EXTRA"`), as in gflags.
  void expand(Recursive recursive, const std::string& name, const std::optional<std::string>& value,
              const std::string& origin) {
    if (!value) throw std::invalid_argument(origin + "--" + name + " needs a value: --" + name + "=LIST");
    for (const std::string& item : comma_list(*value)) {
      if (item.empty()) continue;
      if (recursive == Recursive::kFlagfile) {
        read(item, origin);
      } else {
        from_environment(item, name, origin);
      }
    }
  }

  void read(const std::string& file, const std::string& origin) {
    const std::string name = printable(file);  // as messages show it: one line
    std::error_code error;
    if (std::filesystem::is_directory(file, error))
      throw std::invalid_argument(origin + name + ": cannot read the flag file: it is a directory");
    // A pipe, a terminal or a FIFO reaches one rank only (Open MPI gives stdin to the first): the others
    // would read other flags, or wait.
    const bool regular = std::filesystem::is_regular_file(file, error);
    if (!regular && ranks_ > 1 && std::filesystem::exists(file, error)) {
      throw std::invalid_argument(origin + name + ": a flag file read by " + std::to_string(ranks_) +
                                  " ranks must be a regular file (a pipe or stdin reaches one of them): save "
                                  "it to a file");
    }
    // A regular file is known by its canonical path, so that one naming itself through others is found.
    const std::string canonical = regular ? std::filesystem::canonical(file, error).string() : "";
    if (regular && std::find(open_files_.begin(), open_files_.end(), canonical) != open_files_.end()) {
      throw std::invalid_argument(origin + name +
                                  ": --flagfile names itself, directly or through other flag files");
    }
    std::ifstream in(file);
    if (!in)
      throw std::invalid_argument(origin + name + ": cannot read the flag file: " + std::strerror(errno));
    if (regular) open_files_.push_back(canonical);
    bool in_program_names = false;
    bool applies = true;
    std::size_t number = 0;
    for (std::string line; std::getline(in, line);) {
      ++number;
      if (number == 1 && line.starts_with("\xEF\xBB\xBF")) line.erase(0, 3);  // a byte-order mark
      const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; };
      const auto first = std::find_if_not(line.begin(), line.end(), blank);
      const auto last = std::find_if_not(line.rbegin(), line.rend(), blank).base();
      if (first >= last || *first == '#') continue;
      const std::string text(first, last);
      const std::string where = name + ":" + std::to_string(number) + ": ";
      check_characters(text, where);
      if (text.front() != '-') {
        // Program-name patterns: the flags that follow apply only to a program one of them matches.
        check_program_names(text, where);
        if (!in_program_names) applies = false;
        in_program_names = true;
        applies = applies || names_this_program(text);
        continue;
      }
      in_program_names = false;
      if (!applies) continue;
      if (const Recursive recursive = recursive_flag(text); recursive != Recursive::kNone) {
        expand(recursive, split_flag(text).name, split_flag(text).value, where);
      } else {
        arguments_.push_back({text, where});
      }
    }
    if (in.bad())
      throw std::invalid_argument(origin + name + ": cannot read the flag file: " + std::strerror(errno));
    if (regular) open_files_.pop_back();
  }

  // Control characters would reach gflags cut short (a NUL) or split a message; a carriage return
  // inside a line is an old Mac line end, which the data readers refuse too.
  static void check_characters(const std::string& text, const std::string& where) {
    for (const char c : text) {
      if (c == '\r')
        throw std::invalid_argument(where + "a carriage return inside the line: lines end in a newline");
      if (c != '\t' && std::iscntrl(static_cast<unsigned char>(c)))
        throw std::invalid_argument(where + "a control character (" + printable(std::string(1, c)) +
                                    ") in the line");
    }
  }

  // A line that is not a flag starts a section of program names, after which every line up to the next
  // such applies only to the programs they match: a flag without its dashes (`lambda=7`), or a first
  // character gflags does not see as a dash (a pasted en dash), would silently put the rest of the file
  // in a section of no program.
  static void check_program_names(const std::string& text, const std::string& where) {
    const std::string first_word = text.substr(0, text.find_first_of(" \t"));
    const bool not_names = text.find('=') != std::string::npos || names_a_flag(first_word) ||
                           std::any_of(text.begin(), text.end(), [](char c) { return (c & 0x80) != 0; });
    if (not_names) {
      throw std::invalid_argument(where + "'" + printable(text) +
                                  "' is neither a flag (--name=value) nor a line of program names");
    }
  }

  // FLAGS_name from the environment, as --name=value, for `via` (fromenv or tryfromenv); its absence is
  // an error for --fromenv only. A name no flag has is kept as it is, for checked() to refuse unless
  // --undefok, wherever it stands, lets it through.
  void from_environment(const std::string& name, const std::string& via, const std::string& origin) {
    if (!find_flag(name)) {
      arguments_.push_back({name, origin + "--" + via + " names ", false, true});
      return;
    }
    if (recursive_flag("--" + name) != Recursive::kNone)
      throw std::invalid_argument(origin + "--" + via + " cannot take --" + name + " from the environment");
    const std::string variable = "FLAGS_" + name;
    const char* value = std::getenv(variable.c_str());
    if (!value) {
      if (via == "tryfromenv") return;
      throw std::invalid_argument(origin + "--fromenv names " + name + ", but " + variable +
                                  " is not in the environment" +
                                  (ranks_ > 1 && std::getenv("OMPI_COMM_WORLD_RANK")
                                       ? " (if it is set where mpirun starts, mpirun -x " + variable +
                                             " passes it to the other hosts)"
                                       : ""));
    }
    arguments_.push_back({"--" + name + "=" + value, origin + variable + " (environment): "});
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
  int ranks_;
  bool failed_ = false;  // a mistake was met: nothing more is expanded
  std::vector<Argument> arguments_;
  std::vector<std::string> open_files_;
};

std::string expected_value(const std::string& type) {
  if (type == "bool") return "true or false";
  if (type == "int32") return "a whole number that fits 32 bits";
  if (type == "uint32") return "a whole number from 0 that fits 32 bits";
  if (type == "int64") return "a whole number that fits 64 bits";
  if (type == "uint64") return "a whole number from 0 that fits 64 bits";
  if (type == "double") return "a number";
  return "a value this flag takes";
}

// The words gflags reads as true, or as false.
bool is_word_of(std::string text, std::initializer_list<const char*> words) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return std::any_of(words.begin(), words.end(), [&](const char* word) { return text == word; });
}
bool is_true_word(const std::string& text) { return is_word_of(text, {"true", "t", "yes", "y", "1"}); }
bool is_true_false_word(const std::string& text) {
  return is_true_word(text) || is_word_of(text, {"false", "f", "no", "n", "0"});
}

// The names --undefok lets through unknown (each also as noNAME), as gflags does: its last value counts.
std::vector<std::string> allowed_unknown(const std::vector<Argument>& arguments) {
  std::string names;
  for (std::size_t k = 0; k < arguments.size(); ++k) {
    if (!reads_as_flag(arguments[k])) continue;
    const FlagText flag = split_flag(arguments[k].text);
    if (flag.name != "undefok") continue;
    if (flag.value) {
      names = *flag.value;
    } else if (takes_next_as_value(arguments, k, {})) {
      names = arguments[k + 1].text;
    }
  }
  std::vector<std::string> allowed;
  for (const std::string& name : comma_list(names)) {
    if (name.empty()) continue;
    allowed.push_back(name);
    allowed.push_back("no" + name);
  }
  return allowed;
}

// Text within an XML element: the characters XML reserves, as entities.
std::string xml_text(std::string_view text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// Every flag in XML (--helpxml), laid out as gflags lays it out, for the tools that read it.
void show_flags_in_xml(const char* program) {
  std::vector<gflags::CommandLineFlagInfo> flags;
  gflags::GetAllFlags(&flags);
  std::printf("<?xml version=\"1.0\"?>\n<AllFlags>\n<program>%s</program>\n<usage>%s</usage>\n",
              xml_text(std::filesystem::path(program).filename().string()).c_str(),
              xml_text(gflags::ProgramUsage()).c_str());
  for (const gflags::CommandLineFlagInfo& flag : flags) {
    std::printf(
        "<flag><file>%s</file><name>%s</name><meaning>%s</meaning><default>%s</default>"
        "<current>%s</current><type>%s</type></flag>\n",
        xml_text(flag.filename).c_str(), xml_text(flag.name).c_str(), xml_text(flag.description).c_str(),
        xml_text(flag.default_value).c_str(), xml_text(flag.current_value).c_str(),
        xml_text(flag.type).c_str());
  }
  std::printf("</AllFlags>\n");
}

// Shows what the arguments ask for instead of a run, and exits 0: help (--help, --helpshort: the declared
// flags; --helpfull, --helppackage: every flag; --helpon=FILE, --helpmatch=TEXT: those defined in matching
// source files), the declared flags as Markdown (--helpmarkdown, for docs/flags.md), every flag in XML
// (--helpxml) or the version, in that order of precedence. As in gflags, the last
// setting of each counts and help comes before any mistake beside it; unlike gflags, whose help exits 1
// (which mpirun reports as a failed job), help asked for is no failure.
void show_if_asked(const std::vector<Argument>& arguments, const char* program) {
  // The part of the defining files' paths whose flags are shown, or kDeclared: the declared flags alone.
  static constexpr const char* kDeclared = "\n";
  std::optional<std::string> help;
  std::optional<std::string> markdown;  // --helpmarkdown's value: "framework" or ""
  bool xml = false;
  bool version = false;
  for (std::size_t k = 0; k < arguments.size(); ++k) {
    if (!reads_as_flag(arguments[k])) continue;
    FlagText flag = split_flag(arguments[k].text);
    const bool negated = flag.name.starts_with("no") && !flag.value;
    const std::string name = negated ? flag.name.substr(2) : flag.name;
    const bool on = !negated && (!flag.value || is_true_word(*flag.value));
    if (name == "help" || name == "helpshort") {
      help = on ? std::optional<std::string>(kDeclared) : std::nullopt;
    } else if (name == "helpfull" || name == "helppackage") {
      help = on ? std::optional<std::string>("") : std::nullopt;
    } else if (flag.name == "helpmarkdown") {
      if (!flag.value && k + 1 < arguments.size() && arguments[k + 1].text == "framework")
        flag.value = arguments[++k].text;
      markdown = flag.value.value_or("");
    } else if (name == "helpxml") {
      xml = on;
    } else if (name == "version") {
      version = on;
    } else if ((flag.name == "helpon" || flag.name == "helpmatch") && !negated) {
      if (!flag.value && takes_next_as_value(arguments, k, {})) flag.value = arguments[++k].text;
      if (!flag.value || flag.value->empty()) {
        help.reset();
      } else {
        help = flag.name == "helpon" ? "/" + *flag.value + "." : *flag.value;
      }
    }
  }
  if (help) {
    if (*help == kDeclared) {
      print_help(std::filesystem::path(program).filename().c_str());
    } else {
      gflags::ShowUsageWithFlagsRestrict(program, help->c_str());
    }
    std::exit(0);
  }
  if (markdown) {
    if (!markdown->empty() && *markdown != "framework") {
      std::fprintf(stderr, "%s: error: --helpmarkdown takes no value, or framework, not '%s'\n",
                   std::filesystem::path(program).filename().c_str(), printable(*markdown).c_str());
      std::exit(1);
    }
    print_markdown(std::filesystem::path(program).filename().c_str(), *markdown == "framework");
    std::exit(0);
  }
  if (xml) {
    show_flags_in_xml(program);
    std::exit(0);
  }
  if (version) {
    const std::string name = std::filesystem::path(program).filename().string();
    const char* number = gflags::VersionString();
    if (number && *number) {
      std::printf("%s version %s\n", name.c_str(), number);
    } else {
      std::printf("%s\n", name.c_str());
    }
    std::exit(0);
  }
}

// The arguments as gflags will read them (every value joined to its flag by '='), then the plain ones.
std::vector<std::string> checked(const std::vector<Argument>& arguments, int positional) {
  const std::vector<std::string> undefined_ok = allowed_unknown(arguments);
  const auto allowed = [&](const std::string& name) {
    return std::find(undefined_ok.begin(), undefined_ok.end(), name) != undefined_ok.end();
  };
  std::vector<std::string> flags;
  std::vector<std::string> plain;
  std::string bare_true_false;  // the flag just before, when it was a true/false flag without '='
  // Each value is tried on its flag, in gflags' own parser; the saver puts every flag back after.
  const gflags::FlagSaver restore_flags;
  for (std::size_t k = 0; k < arguments.size(); ++k) {
    const Argument& argument = arguments[k];
    const std::string previous_true_false = std::exchange(bare_true_false, "");
    if (argument.expansion_error) throw std::invalid_argument(argument.text);
    if (argument.unknown_in_environment) {
      if (allowed(argument.text)) continue;
      throw std::invalid_argument(argument.origin + unknown_flag(argument.text));
    }
    if (argument.plain || !is_flag(argument.text)) {
      if (static_cast<int>(plain.size()) < positional && argument.origin.empty()) {
        plain.push_back(argument.text);
        continue;
      }
      const bool looks_like_its_value =
          !argument.plain && !previous_true_false.empty() && is_true_false_word(argument.text);
      throw std::invalid_argument(argument.origin + "unexpected argument '" + printable(argument.text) + "'" +
                                  (looks_like_its_value
                                       ? " after --" + previous_true_false +
                                             ": a true/false flag takes its value after '=', "
                                             "as in --" +
                                             previous_true_false + "=" + argument.text
                                       : ": settings are flags, --name=VALUE (see --help)"));
    }
    FlagText flag = split_flag(argument.text);
    if (flag.name.empty())
      throw std::invalid_argument(argument.origin + "'" + printable(argument.text) + "' names no flag");
    // `--data d.svm` or `--data = d.svm` on a flag file's line: gflags took the blank for part of the name.
    if (const std::size_t blank = flag.name.find_first_of(" \t");
        !argument.origin.empty() && blank != std::string::npos && find_flag(flag.name.substr(0, blank))) {
      std::string value = flag.name.substr(blank) + (flag.value ? *flag.value : "");
      value.erase(0, value.find_first_not_of(" \t="));
      throw std::invalid_argument(argument.origin + "a flag file's line is --name=value, with no blank: --" +
                                  flag.name.substr(0, blank) + "=" + value);
    }
    const auto info = find_flag(flag.name);
    if (!info && names_a_flag(flag.name)) {  // --noX, for a true/false flag X
      if (flag.value) {
        throw std::invalid_argument(argument.origin + "--" + flag.name + " takes no value: write --" +
                                    flag.name.substr(2) + "=" + *flag.value + " instead");
      }
      flags.push_back(argument.text);
      continue;
    }
    if (!info) {
      if (allowed(flag.name)) continue;
      throw std::invalid_argument(argument.origin + unknown_flag(flag.name));
    }
    if (!flag.value) {
      if (info->type == "bool") {
        bare_true_false = flag.name;
        flags.push_back(argument.text);
        continue;
      }
      if (!takes_next_as_value(arguments, k, undefined_ok)) {
        throw std::invalid_argument(argument.origin + "--" + flag.name + " needs a value: --" + flag.name +
                                    "=VALUE");
      }
      flag.value = arguments[++k].text;
    }
    if (gflags::SetCommandLineOption(flag.name.c_str(), flag.value->c_str()).empty()) {
      throw std::invalid_argument(argument.origin + "--" + flag.name + "=" + printable(*flag.value) +
                                  ": expected " + expected_value(info->type));
    }
    // --undefok has done its work here: every unknown flag it allows is left out.
    if (flag.name != "undefok") flags.push_back("--" + flag.name + "=" + *flag.value);
  }
  // After "--", gflags takes a plain argument that starts with '-' for no flag.
  if (!plain.empty()) flags.emplace_back("--");
  flags.insert(flags.end(), plain.begin(), plain.end());
  return flags;
}

}  // namespace

CommandLine::CommandLine(int& argc, char**& argv, int positional, int ranks) {
  // Help on the command line comes before its flag files are read, whatever they hold; help in a flag
  // file once they are.
  std::vector<Argument> given;
  bool after_dashes = false;
  for (int k = 1; k < argc; ++k) {
    given.push_back({argv[k], "", after_dashes});
    after_dashes = after_dashes || std::string_view(argv[k]) == "--";
  }
  show_if_asked(given, argv[0]);
  const std::vector<Argument> arguments = Expansion(argc, argv, ranks).take();
  show_if_asked(arguments, argv[0]);
  arguments_.emplace_back(argv[0]);
  for (std::string& argument : checked(arguments, positional)) arguments_.push_back(std::move(argument));
  for (std::string& argument : arguments_) pointers_.push_back(argument.data());
  pointers_.push_back(nullptr);
  int count = static_cast<int>(arguments_.size());
  char** pointers = pointers_.data();
  gflags::ParseCommandLineFlags(&count, &pointers, true);
  // Before argc and argv point into this object, which a throw would leave unmade.
  check_declared_flags();
  argc = count;
  argv = pointers;
}

}  // namespace schmp::detail
