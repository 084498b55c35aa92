#include "terminal.hpp"

#include <unistd.h>

#include <cstdlib>

namespace grader {
namespace {
bool g_color = false;

std::string wrap(const char* code, const std::string& s) {
  return g_color ? std::string("\033[") + code + "m" + s + "\033[0m" : s;
}
}  // namespace

void Style::configure(bool allow_color) {
  const char* no_color = std::getenv("NO_COLOR");
  g_color = allow_color && !(no_color && *no_color) && isatty(STDOUT_FILENO);
}

bool Style::color() { return g_color; }
std::string Style::green(const std::string& s) { return wrap("32", s); }
std::string Style::red(const std::string& s) { return wrap("31", s); }
std::string Style::yellow(const std::string& s) { return wrap("33", s); }
std::string Style::bold(const std::string& s) { return wrap("1", s); }
std::string Style::dim(const std::string& s) { return wrap("2", s); }
std::string Style::pass_mark() { return green("✓"); }
std::string Style::fail_mark() { return red("✗"); }
std::string Style::skip_mark() { return yellow("–"); }

}  // namespace grader
