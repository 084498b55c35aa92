// grader: the command-line entry point. Parses the global options, runs one
// subcommand from the table, and turns every expected failure into a clear
// message and a defined exit code (app.hpp).
#include <cstring>
#include <iostream>
#include <nlohmann/json.hpp>

#include "activity.hpp"
#include "app.hpp"
#include "child_process.hpp"
#include "course.hpp"
#include "manifest.hpp"
#include "terminal.hpp"
#include "toolchain.hpp"

namespace grader {

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {grade_command(), list_command(), hint_command(), bench_command(),
                                             check_command(),
                                             publish_command(), verify_command(),
                                             batch_command(), gradescope_command(),
                                             collect_command(), batch_task_command(),
                                             watch_command(), reset_command(),
                                             doctor_command()};
  return table;
}

namespace {

bool is_command(const std::string& word) {
  for (const auto& c : commands())
    if (word == c.name) return true;
  return false;
}

// `grader lab07 ...` means `grader grade lab07 ...`, and `grader` alone means
// `grader list`: the two things a student types most.
std::vector<std::string> normalise_arguments(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  static const std::vector<std::string> takes_value = {"--arch", "--root"};
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-h" || a == "--help") return args;
    if (std::find(takes_value.begin(), takes_value.end(), a) != takes_value.end()) {
      ++i;
      continue;
    }
    if (!a.empty() && a[0] == '-') continue;
    if (!is_command(a)) args.insert(args.begin() + static_cast<long>(i), "grade");
    return args;
  }
  args.insert(args.begin(), "list");
  return args;
}

int report_error(const GlobalOptions& g, const std::string& message, int code) {
  if (g.json) {
    nlohmann::json j = {{"schema", "cuda-memory-labs/error/1"}, {"error", message}, {"exit_code", code}};
    std::cout << j.dump(2) << "\n";
  } else {
    std::cerr << Style::red("error: ") << message << "\n";
  }
  return code;
}

}  // namespace
}  // namespace grader

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

  std::vector<std::string> args = normalise_arguments(argc, argv);
  std::vector<const char*> cargv = {argv[0]};
  for (const auto& a : args) cargv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(cargv.size()), const_cast<char**>(cargv.data()));
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? kExitPass : kExitUsage;
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
    return report_error(global, e.what(), kExitUsage);
  } catch (const ManifestError& e) {
    return report_error(global, std::string("malformed manifest: ") + e.what(), kExitUsage);
  } catch (const CourseError& e) {
    return report_error(global, e.what(), kExitUsage);
  } catch (const EnvironmentError& e) {
    return report_error(global, e.what(), kExitEnvironment);
  } catch (const std::exception& e) {
    return report_error(global, std::string("unexpected: ") + e.what(), kExitUsage);
  }
}
