#include "step_fixes.hpp"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "text.hpp"
#include "todo_regions.hpp"

namespace grader {
namespace {

bool is_marker(const std::string& line) { return line.find("// TODO(step ") != std::string::npos; }

int marker_step(const std::string& line) {
  static const std::regex step(R"(TODO\(step (\d+)\))");
  std::smatch m;
  return std::regex_search(line, m, step) ? std::stoi(m[1]) : 0;
}

std::size_t indentation(const std::string& line) {
  const auto first = line.find_first_not_of(" \t");
  return first == std::string::npos ? line.size() : first;
}

bool is_blank(const std::string& line) { return line.find_first_not_of(" \t\r") == std::string::npos; }

struct Region {
  int first = 0, last = 0;  // 0-based skeleton lines
  std::vector<int> steps;
};

// TODO regions as todo_regions.hpp defines them, a marker on the line right
// after a region joining it.
std::vector<Region> marked_regions(const std::vector<std::string>& lines) {
  std::vector<Region> out;
  for (int m = 0; m < static_cast<int>(lines.size()); ++m) {
    if (!is_marker(lines[m])) continue;
    Region r{m, m, {marker_step(lines[m])}};
    std::size_t indent = indentation(lines[m]);
    for (int k = m + 1; k < static_cast<int>(lines.size()); ++k) {
      if (is_marker(lines[k])) {
        r.steps.push_back(marker_step(lines[k]));
        indent = indentation(lines[k]);
      } else if (is_blank(lines[k]) || indentation(lines[k]) < indent) {
        break;
      }
      r.last = k;
    }
    out.push_back(r);
    m = r.last;
  }
  return out;
}

// Whether a hunk changes the region: as the lint credits hunks to markers
// (course_lint.cpp), a pure insertion counts right after a region's line or
// right before one.
bool touches(const Hunk& h, const Region& r) {
  const int first = h.skeleton_line - 1;
  const int last = first + static_cast<int>(h.removed.size()) - 1;
  if (h.removed.empty()) return (first - 1 >= r.first && first - 1 <= r.last) || (first >= r.first && first <= r.last);
  return first <= r.last && last >= r.first;
}

// The text without // and /* */ comments, its line breaks kept; string and
// character literals are left alone ("http://..." is not a comment).
std::string strip_comments(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      while (i < text.size() && text[i] != '\n') ++i;
      if (i < text.size()) out += '\n';
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '*') {
      const auto end = text.find("*/", i + 2);
      const std::size_t stop = end == std::string::npos ? text.size() : end + 2;
      out += ' ';
      for (; i < stop; ++i)
        if (text[i] == '\n') out += '\n';
      --i;
    } else if (c == '"' || c == '\'') {
      out += c;
      for (++i; i < text.size() && text[i] != c && text[i] != '\n'; ++i) {
        out += text[i];
        if (text[i] == '\\' && i + 1 < text.size()) out += text[++i];
      }
      if (i < text.size()) out += text[i];
    } else {
      out += c;
    }
  }
  return out;
}

bool starts_identifier(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool in_word(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Words a renamed copy keeps: C++'s and CUDA's own, the preprocessor's, and
// the members of CUDA's vector types (threadIdx.x).
bool is_keyword(const std::string& t) {
  static const std::set<std::string> words = [] {
    std::istringstream in(
        "alignas alignof auto bool break case char const constexpr continue default delete do double else enum "
        "extern false float for if inline int long new nullptr return short signed sizeof static static_assert "
        "static_cast reinterpret_cast const_cast struct switch template true typename unsigned using void volatile "
        "while size_t __global__ __device__ __host__ __shared__ __constant__ __restrict__ __syncthreads "
        "__launch_bounds__ threadIdx blockIdx blockDim gridDim warpSize pragma unroll include define x y z w");
    return std::set<std::string>(std::istream_iterator<std::string>(in), {});
  }();
  return words.count(t) > 0;
}

bool renamable(const std::string& t) { return starts_identifier(t[0]) && !is_keyword(t); }

// Where `fix` starts in `text`, token for token or with its identifiers renamed
// one to one; npos when nowhere.
std::size_t find_fix(const std::vector<std::string>& text, const std::vector<std::string>& fix, bool rename) {
  if (fix.empty() || fix.size() > text.size()) return std::string::npos;
  if (!rename) {
    const auto it = std::search(text.begin(), text.end(), fix.begin(), fix.end());
    return it == text.end() ? std::string::npos : static_cast<std::size_t>(it - text.begin());
  }
  for (std::size_t s = 0; s + fix.size() <= text.size(); ++s) {
    std::map<std::string, std::string> to, from;
    bool same = true;
    for (std::size_t i = 0; i < fix.size() && same; ++i) {
      const std::string &f = fix[i], &t = text[s + i];
      if (renamable(f) != renamable(t))
        same = false;
      else if (!renamable(f))
        same = f == t;
      else
        same = to.emplace(f, t).first->second == t && from.emplace(t, f).first->second == f;
    }
    if (same) return s;
  }
  return std::string::npos;
}

}  // namespace

std::vector<std::string> code_tokens(const std::string& text, bool is_code) {
  const std::string t = is_code ? strip_comments(text) : text;
  std::vector<std::string> out;
  for (std::size_t i = 0; i < t.size();) {
    const char c = t[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (in_word(c)) {
      // An identifier, or a number with its suffix and fraction (0.0f, 1e5).
      const bool number = !starts_identifier(c);
      std::size_t j = i + 1;
      while (j < t.size() && (in_word(t[j]) || (number && t[j] == '.'))) ++j;
      out.push_back(t.substr(i, j - i));
      i = j;
    } else {
      out.emplace_back(1, c);
      ++i;
    }
  }
  return out;
}

bool is_code_file(const std::string& path) {
  const auto dot = path.rfind('.');
  if (dot == std::string::npos) return false;
  static const std::set<std::string> code = {".cu", ".cuh", ".cpp", ".hpp", ".h", ".c", ".cc"};
  return code.count(path.substr(dot)) > 0;
}

std::vector<StepFix> step_fixes(const std::string& skeleton, const std::string& solution) {
  const auto lines = split_lines(skeleton);
  const auto solved = split_lines(solution);
  const auto hunks = diff_lines(lines, solved);
  // Where each hunk's added lines start in the solution.
  std::vector<int> starts;
  int offset = 0;
  for (const auto& h : hunks) {
    starts.push_back(h.skeleton_line - 1 + offset);
    offset += static_cast<int>(h.added.size()) - static_cast<int>(h.removed.size());
  }
  std::set<std::vector<std::string>> skeleton_lines;
  for (const auto& l : split_lines(strip_comments(skeleton))) skeleton_lines.insert(code_tokens(l, false));

  std::vector<StepFix> out;
  for (const auto& r : marked_regions(lines)) {
    int lo = static_cast<int>(solved.size()), hi = -1;
    for (std::size_t i = 0; i < hunks.size(); ++i)
      if (!hunks[i].added.empty() && touches(hunks[i], r)) {
        lo = std::min(lo, starts[i]);
        hi = std::max(hi, starts[i] + static_cast<int>(hunks[i].added.size()));
      }
    StepFix fix;
    fix.steps = r.steps;
    fix.skeleton_line = r.first + 1;
    std::string code;
    for (int k = lo; k < hi; ++k) code += solved[k] + "\n";
    code = strip_comments(code);
    fix.tokens = code_tokens(code, false);
    for (const auto& l : split_lines(code)) {
      auto t = code_tokens(l, false);
      if (!t.empty() && !skeleton_lines.count(t)) fix.new_lines.push_back(std::move(t));
    }
    if (!fix.tokens.empty()) out.push_back(std::move(fix));
  }
  return out;
}

std::string describe(const StepFix& fix) {
  std::vector<std::string> steps;
  for (int s : fix.steps) steps.push_back(std::to_string(s));
  std::string who =
      steps.size() == 1
          ? "step " + steps[0]
          : "steps " + join(std::vector<std::string>(steps.begin(), steps.end() - 1), ", ") + " and " + steps.back();
  return who + "'s fix (the solution's code for the TODO region at line " + std::to_string(fix.skeleton_line) +
         " of the skeleton)";
}

bool holds_fix(const std::vector<std::string>& text, const StepFix& fix) {
  if (find_fix(text, fix.tokens, false) != std::string::npos) return true;
  return fix.tokens.size() >= kRenamedFixMinTokens && find_fix(text, fix.tokens, true) != std::string::npos;
}

bool hint_states_fix(const std::string& hint, const StepFix& fix) {
  const auto text = code_tokens(hint, false);
  if (find_fix(text, fix.tokens, false) != std::string::npos) return true;
  return std::any_of(fix.new_lines.begin(), fix.new_lines.end(), [&](const std::vector<std::string>& line) {
    return line.size() >= kHintLineMinTokens && find_fix(text, line, false) != std::string::npos;
  });
}

std::vector<FreeHint> free_hints(const Manifest& manifest) {
  std::vector<FreeHint> out;
  for (const auto& [symptom, text] : manifest.symptom_hints)
    out.push_back({"the free symptom hint \"" + symptom + "\" of every step", text});
  for (const auto& st : manifest.steps)
    for (const auto& [symptom, text] : st.symptom_hints)
      out.push_back({"the free symptom hint \"" + symptom + "\" of step " + std::to_string(st.id), text});
  return out;
}

namespace {

// Every string in `j`, one a line, but the paid hints (steps[].hints) and the
// symptom hints, which find_given_fixes checks one by one, by name.
void free_strings(const nlohmann::json& j, bool in_steps, std::string& out) {
  if (j.is_string()) {
    out += j.get<std::string>() + "\n";
  } else if (j.is_array()) {
    for (const auto& v : j) free_strings(v, in_steps, out);
  } else if (j.is_object()) {
    for (const auto& [key, v] : j.items())
      if (!(in_steps && key == "hints") && key != "symptom_hints") free_strings(v, key == "steps", out);
  }
}

}  // namespace

std::vector<std::string> free_text_tokens(const std::string& path, const std::string& content) {
  const auto slash = path.rfind('/');
  const std::string name = path.substr(slash == std::string::npos ? 0 : slash + 1);
  if (name == "lab.json" || name == kCourseSymptomHints) {
    const auto j = nlohmann::json::parse(content, nullptr, false);
    // A lab.json that does not parse is read whole: nothing in it is known to be paid.
    if (!j.is_discarded()) {
      std::string text;
      free_strings(j, false, text);
      return code_tokens(text, false);
    }
  }
  return code_tokens(content, is_code_file(path));
}

std::vector<std::string> find_given_fixes(const std::vector<std::pair<std::string, std::string>>& files,
                                          const std::vector<FixSource>& sources) {
  std::vector<std::string> found;
  for (const auto& [path, content] : files) {
    const auto tokens = free_text_tokens(path, content);
    for (const auto& s : sources)
      for (const auto& f : s.fixes)
        if (holds_fix(tokens, f)) found.push_back(path + " holds " + describe(f) + " of " + s.solution_name);
  }
  for (const auto& s : sources)
    for (const auto& h : s.hints)
      for (const auto& f : s.fixes)
        if (hint_states_fix(h.text, f)) found.push_back(h.where + " states " + describe(f) + " of " + s.solution_name);
  return found;
}

}  // namespace grader
