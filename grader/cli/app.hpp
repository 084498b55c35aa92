// What every subcommand shares: the global options and exit codes
// (options.hpp), the checks of numeric options (number_checks.hpp), and the
// table of subcommands (one file each: cmd_<name>.cpp).
#pragma once

#include <CLI/CLI.hpp>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "number_checks.hpp"
#include "options.hpp"

namespace grader {

struct Command {
  const char* name;
  const char* summary;
  // Adds the subcommand's options; returns the function that runs it.
  std::function<std::function<int()>(CLI::App& sub, GlobalOptions& global)> setup;
};

const std::vector<Command>& commands();

// One table of subcommands, defined in each cmd_*.cpp.
Command grade_command();
Command list_command();
Command hint_command();
Command bench_command();
Command doctor_command();
Command check_command();
Command calibrate_command();
Command publish_command();
Command package_command();
Command verify_command();
Command batch_command();
Command gradescope_command();
Command collect_command();
Command batch_task_command();
Command watch_command();
Command reset_command();

}  // namespace grader
