#include "diagnostics.hpp"

#include <cxxabi.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <memory>
#include <regex>
#include <sstream>

namespace grader {
namespace {

constexpr std::size_t kMaxWarnings = 3;
constexpr std::size_t kMaxNotesPerMessage = 2;
constexpr std::size_t kMaxContextLines = 8;
constexpr std::size_t kMaxUnrecognisedLines = 40;
// std::regex backtracks recursively: a huge line (a template error can be
// megabytes) would overflow the stack, and no one reads past this anyway.
constexpr std::size_t kMaxLineLength = 2000;

std::string rtrim(std::string s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.pop_back();
  return s;
}

std::string severity_of(const std::string& word) {
  if (word == "warning") return "warning";
  if (word == "note" || word == "remark") return "note";
  return "error";  // error, fatal error, catastrophic error, internal error, fatal
}

std::string demangle(const std::string& name) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> raw(abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status), std::free);
  return status == 0 && raw ? std::string(raw.get()) : name;
}

// ptxas and nvlink name kernels by their mangled names: '_Z1kPf' -> 'k(float*)'.
std::string demangle_quoted(const std::string& text) {
  static const std::regex kMangled(R"('(_Z[A-Za-z0-9_]+)')");
  std::string out;
  auto last = text.cbegin();
  for (std::sregex_iterator it(text.begin(), text.end(), kMangled), end; it != end; ++it) {
    out.append(last, (*it)[0].first);
    out += "'" + demangle((*it)[1]) + "'";
    last = (*it)[0].second;
  }
  out.append(last, text.cend());
  return out;
}

}  // namespace

std::vector<std::string> undefined_symbols(const std::string& raw) {
  static const std::regex kLd(R"(undefined reference to [`‘'"](.*)['’"]\s*$)");
  static const std::regex kDevice(R"((?:Undefined reference to|Unresolved extern function) '([^']+)')");
  std::vector<std::string> symbols;
  std::istringstream lines(raw);
  for (std::string line; std::getline(lines, line);) {
    if (line.size() > kMaxLineLength) continue;  // no symbol a student declared is this long
    line = rtrim(line);
    std::smatch m;
    std::string symbol;
    if (std::regex_search(line, m, kLd))
      symbol = m[1];
    else if (std::regex_search(line, m, kDevice))
      symbol = demangle(m[1]);
    else
      continue;
    if (std::find(symbols.begin(), symbols.end(), symbol) == symbols.end()) symbols.push_back(symbol);
  }
  return symbols;
}

namespace {

bool is_path_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.'; }

class PathRewriter {
 public:
  explicit PathRewriter(std::vector<std::pair<std::string, std::string>> rewrites) : rewrites_(std::move(rewrites)) {
    rewrites_.erase(std::remove_if(rewrites_.begin(), rewrites_.end(), [](const auto& r) { return r.first.empty(); }),
                    rewrites_.end());
    std::stable_sort(rewrites_.begin(), rewrites_.end(),
                     [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  }

  // One pass, so a replacement is never itself rewritten. A prefix must end at
  // a path boundary: "/tmp/lab" does not rewrite "/tmp/lab05".
  std::string operator()(const std::string& s) const {
    std::string out;
    for (std::size_t i = 0; i < s.size();) {
      bool replaced = false;
      for (const auto& [prefix, replacement] : rewrites_) {
        const std::size_t end = i + prefix.size();
        if (s.compare(i, prefix.size(), prefix) != 0) continue;
        if (prefix.back() != '/' && end < s.size() && is_path_char(s[end])) continue;
        out += replacement;
        i = end;
        if (replacement.empty() && i < s.size() && s[i] == '/') ++i;
        replaced = true;
        break;
      }
      if (!replaced) out += s[i++];
    }
    return out;
  }

 private:
  std::vector<std::pair<std::string, std::string>> rewrites_;
};

// The file a message's first line names: "file(12): error: ..." (nvcc, cudafe++)
// or "file:12:5: error: ..." (g++).
std::optional<std::string> message_file(const std::string& line) {
  static const std::regex kNvcc(
      R"(^(.+?)\((\d+)\): (catastrophic error|internal error|error|warning|remark|note)(?: #\d+(?:-D)?)?: )");
  static const std::regex kGcc(R"(^(.+?):(\d+):(?:\d+:)? (fatal error|error|warning|note): )");
  std::smatch m;
  if (std::regex_search(line, m, kNvcc) || std::regex_search(line, m, kGcc)) return m[1].str();
  return std::nullopt;
}

struct Group {
  CompilerMessage message;
  std::vector<CompilerMessage> notes;
};

void render(const CompilerMessage& m, std::size_t max_context, std::string& out) {
  if (!m.file.empty()) out += m.file + (m.line > 0 ? ":" + std::to_string(m.line) : "") + ": ";
  out += m.severity + ": " + m.text + "\n";
  for (std::size_t i = 0; i < m.context.size() && i < max_context; ++i) out += m.context[i] + "\n";
}

std::string more(std::size_t n, const char* what) {
  return "... and " + std::to_string(n) + " more " + what + (n == 1 ? "" : "s") + "\n";
}

}  // namespace

std::vector<CompilerMessage> parse_compiler_output(const std::string& raw) {
  static const std::regex kNvcc(
      R"(^(.+?)\((\d+)\): (catastrophic error|internal error|error|warning|remark|note)(?: #\d+(?:-D)?)?: (.*)$)");
  static const std::regex kGcc(R"(^(.+?):(\d+):(?:\d+:)? (fatal error|error|warning|note): (.*)$)");
  static const std::regex kTool(R"(^(ptxas|nvlink|nvcc|fatbinary|cicc|cudafe\+\+)\s+(error|warning|fatal)\s*: (.*)$)");
  static const std::regex kUndefined(R"((undefined reference to .*)$)");
  static const std::regex kLinker(R"(^(?:\S*/)?ld(?:\.\w+)?: (?:(warning): )?(.*)$)");
  // Progress and summaries: they end the message before them and show nothing.
  static const std::regex kNoise(
      "^(ptxas info|nvlink info"
      "|Remark: The warnings can be suppressed|\\d+ errors? detected in the compilation"
      "|compilation terminated|In file included from|\\s+from \\S+[:,]$"
      "|\\S+: In (member )?function|\\S+: At global scope|\\S+: In instantiation of"
      "|.*: in function [`‘])");
  static const std::regex kCollect2(R"(^collect2: error: ld returned)");

  std::vector<CompilerMessage> messages;
  bool in_message = false;  // unrecognised lines continue the message before them
  bool link_failed = false;
  std::istringstream lines(raw);
  for (std::string line; std::getline(lines, line);) {
    if (line.size() > kMaxLineLength) line = line.substr(0, kMaxLineLength) + " ...";
    line = rtrim(line);
    std::smatch m;
    CompilerMessage msg;
    if (std::regex_search(line, m, kUndefined)) {
      msg = {"ld", 0, "error", m[1], {}};
    } else if (std::regex_search(line, m, kNvcc) || std::regex_search(line, m, kGcc)) {
      msg = {m[1], std::stoi(m[2]), severity_of(m[3]), m[4], {}};
    } else if (std::regex_search(line, m, kTool)) {
      msg = {m[1], 0, severity_of(m[2]), demangle_quoted(m[3]), {}};
    } else if (std::regex_search(line, kCollect2)) {
      link_failed = true;
      in_message = false;
      continue;
    } else if (std::regex_search(line, kNoise)) {
      in_message = false;
      continue;
    } else if (std::regex_search(line, m, kLinker)) {
      msg = {"ld", 0, m[1].matched ? "warning" : "error", m[2], {}};
    } else {
      if (line.empty() || line.find_first_not_of(" \t") == std::string::npos)
        in_message = false;
      else if (in_message)
        messages.back().context.push_back(line);
      continue;
    }
    messages.push_back(std::move(msg));
    in_message = true;
  }
  const bool has_error =
      std::any_of(messages.begin(), messages.end(), [](const CompilerMessage& m) { return m.severity == "error"; });
  if (link_failed && !has_error) messages.push_back({"ld", 0, "error", "the link failed", {}});
  return messages;
}

std::string format_compiler_output(const std::string& raw,
                                   const std::vector<std::pair<std::string, std::string>>& path_rewrites,
                                   std::size_t max_errors) {
  const PathRewriter rewrite(path_rewrites);
  auto messages = parse_compiler_output(raw);

  if (messages.empty()) {  // a format we do not know: show it rather than nothing
    std::istringstream lines(raw);
    std::string out;
    std::size_t shown = 0, total = 0;
    for (std::string line; std::getline(lines, line); ++total)
      if (shown < kMaxUnrecognisedLines) out += rewrite(rtrim(line)) + "\n", ++shown;
    if (total > shown) out += more(total - shown, "line");
    return out;
  }

  std::vector<Group> errors, warnings;
  std::vector<Group>* last = nullptr;
  for (auto& m : messages) {
    m.file = rewrite(m.file);
    m.text = rewrite(m.text);
    for (auto& c : m.context) c = rewrite(c);
    if (m.severity == "note") {
      if (last && last->back().notes.size() < kMaxNotesPerMessage) last->back().notes.push_back(m);
      continue;
    }
    auto& list = m.severity == "error" ? errors : warnings;
    // Several architectures or passes can report the same thing twice.
    const bool repeated = std::any_of(list.begin(), list.end(), [&](const Group& g) {
      return g.message.file == m.file && g.message.line == m.line && g.message.text == m.text;
    });
    if (repeated) {
      last = nullptr;
      continue;
    }
    list.push_back({m, {}});
    last = &list;
  }

  std::vector<std::string> blocks;
  const auto add = [&](const Group& g) {
    std::string block;
    render(g.message, kMaxContextLines, block);
    for (const auto& note : g.notes) render(note, 2, block);
    blocks.push_back(block);
  };
  const std::size_t shown_errors = std::min(errors.size(), std::max<std::size_t>(max_errors, 1));
  for (std::size_t i = 0; i < shown_errors; ++i) add(errors[i]);
  if (errors.size() > shown_errors) blocks.push_back(more(errors.size() - shown_errors, "error"));
  const std::size_t shown_warnings = std::min(warnings.size(), kMaxWarnings);
  for (std::size_t i = 0; i < shown_warnings; ++i) add(warnings[i]);
  if (warnings.size() > shown_warnings) blocks.push_back(more(warnings.size() - shown_warnings, "warning"));

  std::string out;
  for (std::size_t i = 0; i < blocks.size(); ++i) out += (i > 0 ? "\n" : "") + blocks[i];
  return out;
}

std::string without_messages_about(const std::string& raw, const std::function<bool(const std::string& file)>& shown) {
  // Lines that name a file without being a message of their own.
  static const std::regex kWhere(
      R"(^(?:In file included from |\s+from )(.+?):\d+[:,]?$|^(.+?): (?:In (?:member )?function|At global scope|In instantiation of))");
  static const std::regex kTool(R"(^(ptxas|nvlink|nvcc|fatbinary|cicc|cudafe\+\+)\s)");
  std::string out;
  bool keep = true;  // whether the lines that follow belong to a message that is shown
  std::istringstream lines(raw);
  for (std::string line; std::getline(lines, line);) {
    const std::string head = line.size() > kMaxLineLength ? line.substr(0, kMaxLineLength) : line;
    std::smatch m;
    if (const auto file = message_file(head)) {
      keep = shown(*file);
      if (keep) out += line + "\n";
    } else if (std::regex_search(head, m, kWhere)) {
      if (shown(m[1].matched ? m[1].str() : m[2].str())) out += line + "\n";
    } else if (std::regex_search(head, kTool)) {
      keep = true;
      out += line + "\n";
    } else if (keep) {
      out += line + "\n";
    }
  }
  return out;
}

std::optional<std::string> missing_symbol(const std::string& raw) {
  auto symbols = undefined_symbols(raw);
  if (symbols.empty()) return std::nullopt;
  for (auto& s : symbols) {
    // The runtime's stream type, as lab.cuh spells it.
    for (std::size_t at; (at = s.find("CUstream_st*")) != std::string::npos;) s.replace(at, 12, "cudaStream_t");
  }
  std::string names = symbols[0];
  for (std::size_t i = 1; i < symbols.size(); ++i) names += (i + 1 == symbols.size() ? " and " : ", ") + symbols[i];
  return names + (symbols.size() == 1 ? " is" : " are") + " called but never defined.";
}

}  // namespace grader
