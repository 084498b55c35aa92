#include "terminal.hpp"

#include <unistd.h>

#include <cctype>
#include <cstdlib>

namespace grader {
namespace {
bool g_color = false;
bool g_unicode = true;

std::string wrap(const char* code, const std::string& s) {
  return g_color ? std::string("\033[") + code + "m" + s + "\033[0m" : s;
}

// The grader's text already uses ✓, × and ≥, so UTF-8 is assumed unless the
// locale (the first of LC_ALL, LC_CTYPE, LANG that is set, as setlocale reads
// them) names another character set, e.g. LANG=C or en_US.ISO-8859-1.
bool locale_is_utf8() {
  for (const char* name : {"LC_ALL", "LC_CTYPE", "LANG"}) {
    const char* v = std::getenv(name);
    if (!v || !*v) continue;
    std::string s;
    for (const char* p = v; *p; ++p)
      if (*p != '-') s += static_cast<char>(std::tolower(static_cast<unsigned char>(*p)));
    return s.find("utf8") != std::string::npos;
  }
  return true;
}
}  // namespace

void Style::configure(bool allow_color) {
  const char* no_color = std::getenv("NO_COLOR");
  g_color = allow_color && !(no_color && *no_color) && isatty(STDOUT_FILENO);
  g_unicode = locale_is_utf8();
}

bool Style::color() { return g_color; }
bool Style::unicode() { return g_unicode; }
std::string Style::green(const std::string& s) { return wrap("32", s); }
std::string Style::red(const std::string& s) { return wrap("31", s); }
std::string Style::yellow(const std::string& s) { return wrap("33", s); }
std::string Style::bold(const std::string& s) { return wrap("1", s); }
std::string Style::dim(const std::string& s) { return wrap("2", s); }
std::string Style::pass_mark() { return green("✓"); }
std::string Style::fail_mark() { return red("✗"); }
std::string Style::skip_mark() { return yellow("–"); }

std::size_t display_width(const std::string& text) {
  std::size_t n = 0;
  for (unsigned char c : text) n += (c & 0xC0) != 0x80;  // count lead bytes, not continuation bytes
  return n;
}

}  // namespace grader
