// Colour and symbols for the terminal. Colour only on a TTY, never with
// --no-color or NO_COLOR (https://no-color.org), never in --json mode.
#pragma once

#include <string>

namespace grader {

class Style {
 public:
  static void configure(bool allow_color);  // decides once, from the flag, NO_COLOR and isatty
  static bool color();
  static std::string green(const std::string& s);
  static std::string red(const std::string& s);
  static std::string yellow(const std::string& s);
  static std::string bold(const std::string& s);
  static std::string dim(const std::string& s);
  static std::string pass_mark();  // "✓" / "PASS"
  static std::string fail_mark();
  static std::string skip_mark();
};

}  // namespace grader
