// Where a kernel.cu says its lines come from (line_directives.hpp): its own
// #line directives, read as the preprocessor reads them, and the line markers
// of its preprocessed code.
#include "line_directives.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <regex>
#include <set>

#include "text.hpp"

namespace fs = std::filesystem;

namespace grader {
namespace {

// By the paths' text (both canonical): "/a/bc" is not within "/a/b".
bool is_within(const fs::path& p, const fs::path& root) {
  const std::string s = p.string(), r = root.string();
  return s == r || (s.size() > r.size() && s.compare(0, r.size(), r) == 0 && (r.back() == '/' || s[r.size()] == '/'));
}

// Bytes of UTF-8 count as letters: GCC takes them into identifiers.
bool identifier_char(char c) {
  const auto u = static_cast<unsigned char>(c);
  return std::isalnum(u) || c == '_' || c == '$' || u >= 0x80;
}

// GCC ignores a NUL as it does a blank (with a warning).
bool blank(char c) { return c == ' ' || c == '\t' || c == '\f' || c == '\v' || c == '\0'; }

// The source after the preprocessor's first phases: one '\n' for each CR, LF
// or CRLF, no backslash-newlines and no byte order mark; for each character,
// where it was in the source and on which line.
struct Spliced {
  std::string text;
  std::vector<std::size_t> at, line;
};

std::size_t newline_length(const std::string& s, std::size_t k) {
  if (k >= s.size()) return 0;
  if (s[k] == '\r') return k + 1 < s.size() && s[k + 1] == '\n' ? 2 : 1;
  return s[k] == '\n' ? 1 : 0;
}

Spliced splice(const std::string& s) {
  Spliced out;
  std::size_t line = 1;
  // GCC skips a UTF-8 byte order mark: a "#" after it is first on its line.
  for (std::size_t i = s.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0; i < s.size();) {
    if (s[i] == '\\') {
      std::size_t k = i + 1;
      while (k < s.size() && blank(s[k])) ++k;  // GCC splices "\ " + newline too
      if (const std::size_t nl = newline_length(s, k)) {
        i = k + nl;
        ++line;
        continue;
      }
    }
    const std::size_t nl = newline_length(s, i);
    out.text += nl ? '\n' : s[i];
    out.at.push_back(i);
    out.line.push_back(line);
    i += nl ? nl : 1;
    line += nl ? 1 : 0;
  }
  return out;
}

// Skips comments, literals and numbers as the preprocessor's tokens do, and
// collects the directives on the way.
class DirectiveScanner {
 public:
  DirectiveScanner(const std::string& source, const Spliced& s) : source_(source), s_(s), t_(s.text) {}

  std::vector<Directive> run() {
    std::vector<Directive> out;
    bool line_start = true;  // nothing but blanks and comments since the last newline
    for (std::size_t i = 0; i < t_.size();) {
      const char c = t_[i];
      if (c == '\n' || blank(c)) {
        line_start = line_start || c == '\n';
        ++i;
      } else if (at(i, "//") || at(i, "/*")) {
        // A comment over several lines leaves the next token first on a line, for
        // all this can tell: a "#" after it may be a directive.
        const std::size_t end = skip_comment(i);
        line_start = line_start || t_.find('\n', i) < end;
        i = end;
      } else if (line_start && (c == '#' || at(i, "%:"))) {
        i = read_directive(i, out);
      } else {
        line_start = false;
        i = skip_token(i);
      }
    }
    return out;
  }

 private:
  bool at(std::size_t k, const char* what) const { return t_.compare(k, std::strlen(what), what) == 0; }

  // After a comment at i; a line comment ends before its newline.
  std::size_t skip_comment(std::size_t i) const {
    const std::size_t end = at(i, "//") ? t_.find('\n', i) : t_.find("*/", i + 2);
    if (end == std::string::npos) return t_.size();
    return at(i, "//") ? end : end + 2;
  }

  // After a string or character literal at i, or at the newline that cuts it short.
  std::size_t skip_quoted(std::size_t i) const {
    std::size_t k = i + 1;
    while (k < t_.size() && t_[k] != '\n') {
      if (t_[k] == '\\') {
        k += 2;
      } else if (t_[k++] == t_[i]) {
        return k;
      }
    }
    return std::min(k, t_.size());
  }

  // After the raw string literal whose '"' is at i, or npos where none starts.
  // Between its quotes the splices are undone, so it is read in the source.
  std::size_t skip_raw_string(std::size_t i) const {
    const std::size_t open = s_.at[i];
    const std::size_t paren = source_.find('(', open + 1);
    if (paren == std::string::npos || paren - open - 1 > 16) return std::string::npos;
    const std::string delimiter = source_.substr(open + 1, paren - open - 1);
    if (delimiter.find_first_of(" ()\\\t\v\f\r\n") != std::string::npos) return std::string::npos;
    const std::size_t close = source_.find(")" + delimiter + "\"", paren + 1);
    if (close == std::string::npos) return std::string::npos;
    const std::size_t after = close + delimiter.size() + 2;
    std::size_t k = i;
    while (k < t_.size() && s_.at[k] < after) ++k;
    return k;
  }

  // After a preprocessing number at i: digits, letters, '.', "e+" and the
  // like, and the ' that separates digits (not a character literal's).
  std::size_t skip_number(std::size_t i) const {
    std::size_t k = i + 1;
    while (k < t_.size()) {
      const char c = t_[k];
      if ((c == 'e' || c == 'E' || c == 'p' || c == 'P') && k + 1 < t_.size() && (t_[k + 1] == '+' || t_[k + 1] == '-'))
        k += 2;
      else if (identifier_char(c) || c == '.')
        ++k;
      else if (c == '\'' && k + 1 < t_.size() && identifier_char(t_[k + 1]))
        k += 2;
      else
        break;
    }
    return k;
  }

  std::size_t skip_token(std::size_t i) const {
    const char c = t_[i];
    if (std::isdigit(static_cast<unsigned char>(c)) ||
        (c == '.' && i + 1 < t_.size() && std::isdigit(static_cast<unsigned char>(t_[i + 1]))))
      return skip_number(i);
    if (identifier_char(c)) {
      std::size_t k = i;
      while (k < t_.size() && identifier_char(t_[k])) ++k;
      const std::string word = t_.substr(i, k - i);
      const bool raw_prefix = word == "R" || word == "u8R" || word == "uR" || word == "UR" || word == "LR";
      if (raw_prefix && k < t_.size() && t_[k] == '"') {
        const std::size_t end = skip_raw_string(k);
        if (end != std::string::npos) return end;
      }
      return k;  // a prefix of an ordinary literal ends here; the literal is read next
    }
    if (c == '"' || c == '\'') return skip_quoted(i);
    return i + 1;
  }

  // The directive at i, to its newline: comments become spaces, literals are kept.
  std::size_t read_directive(std::size_t i, std::vector<Directive>& out) const {
    Directive d;
    d.line = s_.line[i];
    std::size_t k = i + (t_[i] == '#' ? 1 : 2);
    while (k < t_.size() && t_[k] != '\n') {
      if (at(k, "//") || at(k, "/*")) {
        k = skip_comment(k);
        d.text += ' ';
      } else if (t_[k] == '"' || t_[k] == '\'') {
        const std::size_t end = skip_quoted(k);
        d.text += t_.substr(k, end - k);
        k = end;
      } else {
        d.text += t_[k++];
      }
    }
    out.push_back(d);
    return k;
  }

  const std::string& source_;
  const Spliced& s_;
  const std::string& t_;
};

// A C string literal's text as GCC writes a file name in a line marker: \\, \"
// and octal escapes.
std::string unescaped(const std::string& quoted) {
  std::string out;
  for (std::size_t i = 0; i < quoted.size(); ++i) {
    if (quoted[i] != '\\' || i + 1 == quoted.size()) {
      out += quoted[i];
      continue;
    }
    std::size_t k = i + 1, value = 0, digits = 0;
    while (k < quoted.size() && digits < 3 && quoted[k] >= '0' && quoted[k] <= '7')
      value = value * 8 + static_cast<std::size_t>(quoted[k++] - '0'), ++digits;
    if (digits > 0) {
      out += static_cast<char>(value);
      i = k - 1;
    } else {
      out += quoted[++i];
    }
  }
  return out;
}

const char* const kWhy =
    ": the compiler would quote that file's lines in its messages, so a submission's #line may name only kernel.cu "
    "or the lab's headers";

}  // namespace

PublicFiles::PublicFiles(fs::path stage, fs::path cwd, std::vector<fs::path> roots) : roots_(std::move(roots)) {
  std::error_code ec;
  stage_ = fs::weakly_canonical(stage, ec);
  cwd_ = fs::weakly_canonical(cwd, ec);
}

bool PublicFiles::contains(const std::string& name) const {
  if (name == "<built-in>" || name == "<command-line>" || name == "kernel.cu") return true;
  std::error_code ec;
  // The names messages show the staged headers by ("lab.cuh", "common/lab/x.cuh").
  if (!name.empty() && name.find('/') == std::string::npos && fs::is_regular_file(stage_ / "lab" / name, ec))
    return true;
  const std::string lab_api = "common/lab/";
  if (starts_with(name, lab_api) && name.find('/', lab_api.size()) == std::string::npos &&
      fs::is_regular_file(stage_ / name, ec))
    return true;
  const fs::path n(name);
  const fs::path p = fs::weakly_canonical(n.is_absolute() ? n : cwd_ / n, ec);
  if (ec || name.empty()) return false;
  // The build's own folder: the staged copies and what the compiler made of them.
  if (is_within(p, cwd_) || is_within(p, stage_)) return true;
  for (const auto& root : roots_)
    if (is_within(p, root)) return true;
  return false;
}

std::vector<Directive> preprocessing_directives(const std::string& source) {
  const Spliced s = splice(source);
  return DirectiveScanner(source, s).run();
}

std::string foreign_line_directive(const std::string& source, const PublicFiles& files) {
  // A line number and at most a plain file name: no macro, no escape.
  static const std::regex kPlain(R"re(^\s*[0-9]+\s*(?:"([^"\\]*)"\s*)?$)re");
  for (const auto& d : preprocessing_directives(source)) {
    // "#line ..." or a line marker, "# 12 ...".
    const std::size_t k = d.text.find_first_not_of(" \t\f\v");
    if (k == std::string::npos) continue;
    std::string operands;
    if (d.text.compare(k, 4, "line") == 0 && (k + 4 == d.text.size() || !identifier_char(d.text[k + 4])))
      operands = d.text.substr(k + 4);
    else if (std::isdigit(static_cast<unsigned char>(d.text[k])))
      operands = d.text.substr(k);
    else
      continue;
    std::smatch m;
    if (std::regex_match(operands, m, kPlain) && (!m[1].matched || files.contains(m[1].str()))) continue;
    return "kernel.cu's #line directive on line " + std::to_string(d.line) +
           " names a file that is neither kernel.cu nor a header it may include, or makes the name with a macro" + kWhy;
  }
  return "";
}

std::string foreign_line_marker(const std::string& preprocessed, const PublicFiles& files) {
  static const std::regex kMarker(R"re(^#\s*(?:line\s+)?[0-9]+\s+"((?:[^"\\]|\\.)*)")re");
  std::set<std::string> seen;
  std::size_t start = 0;
  while (start < preprocessed.size()) {
    std::size_t end = preprocessed.find('\n', start);
    if (end == std::string::npos) end = preprocessed.size();
    if (preprocessed[start] == '#') {
      const std::string line = preprocessed.substr(start, std::min<std::size_t>(end - start, 4096));
      std::smatch m;
      if (std::regex_search(line, m, kMarker) && seen.insert(m[1]).second && !files.contains(unescaped(m[1])))
        return std::string(
                   "kernel.cu's preprocessed code says it comes from a file that is neither kernel.cu nor a "
                   "header it may include (a #line directive or line marker, perhaps made by a macro)") +
               kWhy;
    }
    start = end + 1;
  }
  return "";
}

}  // namespace grader
