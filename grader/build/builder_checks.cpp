// What a kernel.cu may bring into its build: the files nvcc -M says it
// includes (only the staged copies of the lab's and common/'s headers, the
// toolkit's and the system's) and the host assembly it compiles to (no
// directive that reads a file or makes up directives). Builder runs these
// checks in builder_kernel.cpp.
#include <regex>
#include <sstream>

#include "builder.hpp"

namespace fs = std::filesystem;

namespace grader {
namespace {

// By the paths' text (they come canonical): "/a/bc" is not under "/a/b".
bool path_is_under(const fs::path& p, const fs::path& root) {
  const std::string s = p.string(), r = root.string();
  return s == r || (s.size() > r.size() && s.compare(0, r.size(), r) == 0 && (r.back() == '/' || s[r.size()] == '/'));
}

}  // namespace

std::vector<std::string> parse_dependency_rule(const std::string& text) {
  std::vector<std::string> files;
  std::string word;
  bool target_done = false;
  const auto flush = [&] {
    if (word.empty()) return;
    if (!target_done && word.back() == ':') {
      target_done = true;  // "kernel.o:" names the target, not a dependency
    } else if (target_done && word != "\\" && word != ":") {
      files.push_back(word);
    } else if (!target_done && word == ":") {
      target_done = true;
    }
    word.clear();
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\\' && i + 1 < text.size() && text[i + 1] == ' ') {  // an escaped space is part of a name
      word += ' ';
      ++i;
    } else if (c == '\\' && i + 1 < text.size() && text[i + 1] == '\n') {
      flush();
      ++i;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      flush();
    } else {
      word += c;
    }
  }
  flush();
  return files;
}

std::string foreign_includes(const std::vector<std::string>& dependencies, const std::vector<fs::path>& allowed_roots) {
  std::vector<std::string> foreign;
  for (const auto& d : dependencies) {
    std::error_code ec;
    const fs::path p = fs::weakly_canonical(fs::path(d), ec);
    bool ok = false;
    for (const auto& root : allowed_roots) ok = ok || path_is_under(ec ? fs::path(d) : p, root);
    if (!ok) foreign.push_back(fs::path(d).filename().string());
  }
  if (foreign.empty()) return "";
  std::string list;
  for (std::size_t i = 0; i < foreign.size() && i < 5; ++i) list += (i ? ", " : "") + foreign[i];
  return "kernel.cu includes a file that is neither the lab's nor common/'s header nor the toolkit's (" + list +
         "): a submission is built from kernel.cu and the lab's public headers only";
}

std::string forbidden_assembly(const std::string& assembly) {
  // Directives that read a file into the program or make up other directives.
  static const std::regex directive(R"((^|[\s;:])\.(incbin|include|macro|irp|irpc|rept|altmacro|purgem)\b)");
  std::istringstream in(assembly);
  std::string line;
  while (std::getline(in, line)) {
    // Without the text of string literals: a message that mentions ".include" is not one.
    std::string code;
    bool in_string = false, escaped = false;
    for (const char c : line) {
      if (in_string) {
        if (escaped)
          escaped = false;
        else if (c == '\\')
          escaped = true;
        else if (c == '"')
          in_string = false;
        continue;
      }
      if (c == '"') {
        in_string = true;
        code += "\"\"";
        continue;
      }
      if (c == '#') break;  // a comment to the end of the line
      code += c;
    }
    std::smatch m;
    if (std::regex_search(code, m, directive))
      return "kernel.cu's host code holds assembly with ." + m[2].str() +
             ", which reads other files into the program or builds directives; a submission may not";
  }
  return "";
}

}  // namespace grader
