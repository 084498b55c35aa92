#include "printable.hpp"

#include <cstdio>

#include "text.hpp"

namespace grader {
namespace {

// The code point of the well-formed sequence of `len` bytes at s[i].
char32_t code_point_at(const std::string& s, std::size_t i, std::size_t len) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  if (len == 1) return byte(0);
  char32_t cp = byte(0) & (len == 2 ? 0x1F : len == 3 ? 0x0F : 0x07);
  for (std::size_t k = 1; k < len; ++k) cp = (cp << 6) | (byte(k) & 0x3F);
  return cp;
}

// Code points that change how the text around them is laid out: C1 controls,
// and those that reorder or break a line (so a row can read as something else).
bool rearranges_text(char32_t cp) {
  return (cp >= 0x80 && cp <= 0x9F) || cp == 0x061C || cp == 0x200E || cp == 0x200F || cp == 0x2028 || cp == 0x2029 ||
         (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

std::string escaped(const char* format, unsigned value) {
  char buf[8];
  std::snprintf(buf, sizeof buf, format, value);
  return buf;
}

}  // namespace

std::string printable(std::string_view untrusted) {
  const std::string s(untrusted);
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '\r' && i + 1 < s.size() && s[i + 1] == '\n') {
      ++i;  // CRLF is a newline; the LF is kept next
    } else if (c == '\n' || c == '\t' || (c >= 0x20 && c < 0x7F)) {
      out += s[i++];
    } else if (c < 0x80) {
      out += escaped("\\x%02x", c);  // the other C0 controls and DEL
      ++i;
    } else if (const std::size_t len = utf8_sequence_length(s, i)) {
      const char32_t cp = code_point_at(s, i, len);
      if (rearranges_text(cp))
        out += escaped("\\u%04x", static_cast<unsigned>(cp));
      else
        out.append(s, i, len);
      i += len;
    } else {
      out += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
      ++i;
    }
  }
  return out;
}

}  // namespace grader
