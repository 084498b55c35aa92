#include "parse_errors.hpp"

#include <algorithm>

#include "edit_distance.hpp"

namespace grader {
namespace {

// The command the arguments name (the first word that is one), or nullptr.
CLI::App* chosen_command(CLI::App& app, const std::vector<std::string>& args) {
  for (const auto& a : args)
    if (!a.empty() && a[0] != '-')
      for (CLI::App* sub : app.get_subcommands({}))
        if (sub->get_name() == a) return sub;
  return nullptr;
}

// The long option of `command` (or a global one) closest to `word`, or "".
std::string close_option(CLI::App& app, CLI::App* command, const std::string& word) {
  const std::string bare = word.substr(0, word.find('='));
  std::string best;
  std::size_t best_distance = bare.size() <= 4 ? 2 : 3;
  for (CLI::App* scope : {command, &app}) {
    if (!scope) continue;
    for (const CLI::Option* o : scope->get_options())
      for (const auto& name : o->get_lnames()) {
        const std::size_t d = edit_distance(bare, "--" + name);
        if (d < best_distance) best_distance = d, best = "--" + name;
      }
  }
  return best;
}

}  // namespace

std::string parse_error_message(const CLI::ParseError& e, CLI::App& app, const std::vector<std::string>& args) {
  CLI::App* command = chosen_command(app, args);
  const std::string name = command ? "grader " + command->get_name() : std::string("grader");
  const std::string help = "(" + name + " --help lists its " + (command ? "arguments and options" : "commands") + ")";
  const std::string what = e.what();
  if (dynamic_cast<const CLI::ExtrasError*>(&e)) {
    // The unexpected words, in the order typed: an option is likelier a typo.
    std::vector<std::string> extras;
    for (std::size_t i = 0; i < args.size(); ++i)
      if (what.find(args[i]) != std::string::npos && (!command || args[i] != command->get_name()))
        extras.push_back(args[i]);
    for (const auto& word : extras)
      if (word.size() > 1 && word[0] == '-') {
        const std::string meant = close_option(app, command, word);
        return name + ": no option " + word + (meant.empty() ? "" : "; did you mean " + meant + "?") + " " + help;
      }
    return name + ": unexpected " + (extras.empty() ? what : "\"" + extras.front() + "\"") + " " + help;
  }
  if (dynamic_cast<const CLI::RequiredError*>(&e) && command) {
    // "lab is required": say how the command is written.
    const std::string missing = what.substr(0, what.find(' '));
    std::string usage = name;
    for (const CLI::Option* o : command->get_options())
      if (o->get_positional() && o->get_required()) usage += " " + o->get_name();
    std::transform(usage.begin() + static_cast<long>(name.size()), usage.end(),
                   usage.begin() + static_cast<long>(name.size()), ::toupper);
    return name + " needs " + (missing.empty() ? "an argument" : "its " + missing) + ": " + usage +
           (missing == "lab" ? " (e.g. " + name + " lab07; grader list shows the labs)" : " " + help);
  }
  return name + ": " + what + " " + help;
}

}  // namespace grader
