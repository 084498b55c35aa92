// Text that a submission controls (compiler messages about its code, what its
// program printed, a tool's report of it), made safe to show as data: on a
// terminal, in JSON, CSV, JUnit XML and Gradescope's output. A submission that
// can print an escape sequence can rewrite an instructor's terminal row or a
// gradebook cell, and one that can print invalid UTF-8 makes a JSON writer throw.
#pragma once

#include <string>
#include <string_view>

namespace grader {

// `untrusted` with
//   - newlines and tabs kept (they are the text's line structure), CRLF read as a newline;
//   - every other C0 control and DEL shown as \xHH (ESC as \x1b, NUL as \x00, a lone CR as \x0d);
//   - C1 controls (U+0080..U+009F: U+009B is a terminal's CSI), the bidirectional
//     overrides and isolates, and the line and paragraph separators shown as \uHHHH;
//   - every byte that is not part of well-formed UTF-8 (overlong forms, surrogates,
//     sequences cut short, stray continuation bytes) replaced by U+FFFD, one per byte.
// Backslashes are left as they are: "\x1b" typed as text reads the same as an
// escaped ESC, and neither can do anything.
std::string printable(std::string_view untrusted);

}  // namespace grader
