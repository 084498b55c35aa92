// A command line the parser refused, said in the grader's own words: which
// command, what was wrong, the option or argument that was probably meant, and
// where the help is. CLI11's own text ("The following arguments were not
// expected: 5 --sed") names neither the command nor a fix.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace grader {

// e: the parser's error; app: the whole command line's parser (its
// subcommands are the commands); args: the arguments as parsed.
std::string parse_error_message(const CLI::ParseError& e, CLI::App& app, const std::vector<std::string>& args);

}  // namespace grader
