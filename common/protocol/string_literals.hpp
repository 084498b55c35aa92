// Text with the contents of its "..." string literals taken out (the quotes
// kept, backslash escapes honoured): what is left is the text's own structure.
// The referee's channel counts a JSON message's nesting on it (a bracket in a
// string is not one), and the build looks for assembler directives on it (a
// message that mentions ".include" is not one).
#pragma once

#include <string>

namespace memlabs {

inline std::string without_string_contents(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false, escaped = false;
  for (const char c : text) {
    if (!in_string) {
      out += c;
      in_string = c == '"';
    } else if (escaped) {
      escaped = false;
    } else if (c == '\\') {
      escaped = true;
    } else if (c == '"') {
      out += c;
      in_string = false;
    }
  }
  return out;
}

}  // namespace memlabs
