// grader: the command-line entry point. Parses the global options, runs one
// subcommand from the table, and turns every expected failure into a clear
// message and a defined exit code (app.hpp).
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "activity.hpp"
#include "app.hpp"
#include "calibration.hpp"
#include "child_process.hpp"
#include "course.hpp"
#include "edit_distance.hpp"
#include "json_text.hpp"
#include "manifest.hpp"
#include "parse_errors.hpp"
#include "terminal.hpp"
#include "toolchain.hpp"

namespace grader {

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      grade_command(),      list_command(),      hint_command(),       bench_command(),
      check_command(),      calibrate_command(), publish_command(),    package_command(),
      verify_command(),     batch_command(),     gradescope_command(), collect_command(),
      batch_task_command(), watch_command(),     reset_command(),      doctor_command()};
  return table;
}

namespace {

bool is_command(const std::string& word) {
  for (const auto& c : commands())
    if (word == c.name) return true;
  return false;
}

// The command a mistyped word most likely meant: within two edits (a swapped
// pair counts as one) or the start of exactly one command; empty if none.
std::string close_command(const std::string& word) {
  if (word.size() < 3) return {};
  std::string best, prefix_of;
  std::size_t best_distance = 3;
  int prefixes = 0;
  for (const auto& c : commands()) {
    const std::string name = c.name;
    const std::size_t d = edit_distance(word, name);
    if (d < best_distance) best_distance = d, best = name;
    if (name.rfind(word, 0) == 0) ++prefixes, prefix_of = name;
  }
  if (!best.empty()) return best;
  return prefixes == 1 ? prefix_of : std::string();
}

// Whether `word` names a lab of the course the command line points at; false
// when there is no course to ask.
bool names_a_lab(const std::string& word, const std::filesystem::path& root) {
  try {
    Course::discover(root).resolve(word);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

struct Arguments {
  std::vector<std::string> args;
  bool implicit_grade = false;  // "grade" was put in front of a lab name
  std::string unknown_command;  // set: a mistyped command, with what was meant
  bool json = false;            // --json anywhere: errors must be JSON too
};

// `grader lab07 ...` means `grader grade lab07 ...`, and `grader` alone means
// `grader list`: the two things a student types most. `grader help [CMD]` is
// --help. A word close to a command that is not a lab is a typo, not a lab.
Arguments normalise_arguments(int argc, char** argv) {
  Arguments out;
  std::vector<std::string>& args = out.args;
  args.assign(argv + 1, argv + argc);
  std::filesystem::path root;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--json") out.json = true;
    if (args[i] == "--root" && i + 1 < args.size()) root = args[i + 1];
    if (args[i].rfind("--root=", 0) == 0) root = args[i].substr(7);
  }
  static const std::vector<std::string> takes_value = {"--arch", "--root"};
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-h" || a == "--help") return out;
    if (std::find(takes_value.begin(), takes_value.end(), a) != takes_value.end()) {
      ++i;
      continue;
    }
    if (!a.empty() && a[0] == '-') continue;
    if (a == "help") {
      // `grader help CMD`: that command's help; a word that is no command is an
      // error (it printed the general help, exit 0).
      if (i + 1 < args.size() && !args[i + 1].empty() && args[i + 1][0] != '-' && !is_command(args[i + 1])) {
        const std::string meant = close_command(args[i + 1]);
        out.unknown_command = "no command \"" + args[i + 1] + "\"" +
                              (meant.empty() ? std::string() : "; did you mean `grader help " + meant + "`?") +
                              " (grader --help lists the commands)";
        return out;
      }
      args.erase(args.begin() + static_cast<long>(i));
      args.push_back("--help");
      return out;
    }
    if (is_command(a)) return out;
    const std::string meant = close_command(a);
    if (!meant.empty() && !names_a_lab(a, root)) {
      out.unknown_command = "no command \"" + a + "\"; did you mean `grader " + meant +
                            "`? (grader --help lists the commands; grader LAB grades a lab)";
      return out;
    }
    args.insert(args.begin() + static_cast<long>(i), "grade");
    out.implicit_grade = true;
    return out;
  }
  args.insert(args.begin(), "list");
  return out;
}

int report_error(const GlobalOptions& g, const std::string& message, int code) {
  if (g.json) {
    nlohmann::json j = {{"schema", "cuda-memory-labs/error/1"}, {"error", message}, {"exit_code", code}};
    std::cout << json_text(j) << "\n";
  } else {
    std::cerr << Style::red("error: ") << message << "\n";
  }
  return code;
}

}  // namespace
}  // namespace grader

// Long (about 60 lines) on purpose: the global options, the parse, and the
// one place where every kind of error becomes its message and exit code.
int main(int argc, char** argv) {
  using namespace grader;
  become_subreaper();
  GlobalOptions global;
  CLI::App app{"grader: builds, checks and times your CUDA Memory Labs kernels, step by step", "grader"};
  app.fallthrough();  // global options may come after the subcommand: grader lab07 --json
  app.require_subcommand(1);
  app.add_flag("--json", global.json, "machine-readable output (schema: docs/json-output.md)");
  app.add_flag("--no-color", global.no_color, "no colours (also: NO_COLOR=1)");
  app.add_flag("-v,--verbose", global.verbose, "show compiler commands and keep run folders");
  app.add_option("--arch", global.arch, "GPU architecture to build for, e.g. sm_80 (default: the GPU's, else sm_90)");
  app.add_option("--root", global.root, "the course folder (default: found from the current folder)");

  std::function<int()> chosen;
  for (const auto& c : commands()) {
    CLI::App* sub = app.add_subcommand(c.name, c.summary);
    auto run = c.setup(*sub, global);
    sub->callback([&chosen, run] { chosen = run; });
  }

  const Arguments normalised = normalise_arguments(argc, argv);
  // Errors before parsing know only whether --json was typed.
  GlobalOptions early;
  early.json = normalised.json;
  if (normalised.json) Style::configure(false);
  if (!normalised.unknown_command.empty()) return report_error(early, normalised.unknown_command, kExitUsage);
  std::vector<const char*> cargv = {argv[0]};
  for (const auto& a : normalised.args) cargv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(cargv.size()), const_cast<char**>(cargv.data()));
  } catch (const CLI::ParseError& e) {
    // --help prints as CLI11 does; an error is said in the grader's words (JSON under --json).
    if (e.get_exit_code() == 0) return app.exit(e) == 0 ? kExitPass : kExitUsage;
    return report_error(early, parse_error_message(e, app, normalised.args), kExitUsage);
  }
  Style::configure(!global.no_color && !global.json);
  // --verbose prints compiler commands to stderr as it goes: a spinner would garble them.
  Activity::configure(!global.json && !global.verbose);
  try {
    return chosen ? chosen() : kExitUsage;
  } catch (const Interrupted&) {
    std::cerr << "\ninterrupted: the program under test was stopped; progress is unchanged\n";
    return 130;
  } catch (const UnknownLab& e) {
    // `grader xyzzy` was read as a lab: say that it is not a command either.
    return report_error(
        global,
        std::string(e.what()) + (normalised.implicit_grade ? "; nor is it a command (grader --help lists them)" : ""),
        kExitUsage);
  } catch (const UsageError& e) {
    return report_error(global, e.what(), kExitUsage);
  } catch (const ManifestError& e) {
    return report_error(global, std::string("malformed manifest: ") + e.what(), kExitUsage);
  } catch (const CourseError& e) {
    return report_error(global, e.what(), kExitUsage);
  } catch (const CalibrationError& e) {
    return report_error(global, std::string("malformed calibration: ") + e.what(), kExitUsage);
  } catch (const EnvironmentError& e) {
    return report_error(global, e.what(), kExitEnvironment);
  } catch (const std::exception& e) {
    return report_error(global, std::string("unexpected: ") + e.what(), kExitUsage);
  }
}
