// Colour and symbols for the terminal. Colour only on a TTY, never with
// --no-color or NO_COLOR (https://no-color.org), never in --json mode.
#pragma once

#include <cstddef>
#include <string>

namespace grader {

class Style {
 public:
  static void configure(bool allow_color);  // decides once, from the flag, NO_COLOR, isatty and the locale
  static bool color();
  // Whether drawings (bars, spinners) may use Unicode blocks rather than ASCII.
  static bool unicode();
  static std::string green(const std::string& s);
  static std::string red(const std::string& s);
  static std::string yellow(const std::string& s);
  static std::string bold(const std::string& s);
  static std::string dim(const std::string& s);
  static std::string pass_mark();  // "✓" / "PASS"
  static std::string fail_mark();
  static std::string skip_mark();
};

// Terminal columns `text` takes: one per UTF-8 code point (the course's text has
// no double-width characters), for lining up columns that hold ✓, × or █.
std::size_t display_width(const std::string& text);

}  // namespace grader
