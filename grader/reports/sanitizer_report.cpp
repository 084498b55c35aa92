#include "sanitizer_report.hpp"

#include <filesystem>
#include <map>
#include <mutex>
#include <regex>
#include <sstream>

#include "child_process.hpp"
#include "text.hpp"

namespace grader {
namespace {

const std::string kPrefix = "========= ";

// " ... in kernel.cu:23" (with -lineinfo) and the kernel's name from "at name(".
void locate(const std::string& line, std::string& file_line, std::string& kernel) {
  static const std::regex where(R"( in ([^ :]+\.(?:cu|cuh|h|hpp|cpp)):(\d+))");
  static const std::regex name(R"(at ([A-Za-z_][A-Za-z0-9_:]*)(?:<[^(]*>)?\()");
  std::smatch m;
  if (file_line.empty() && std::regex_search(line, m, where))
    file_line = std::filesystem::path(m[1].str()).filename().string() + ":" + m[2].str();
  if (kernel.empty() && std::regex_search(line, m, name)) kernel = m[1];
}

Symptom symptom_of(const std::string& tool, const std::string& headline) {
  if (starts_with(headline, "Program hit")) return Symptom::api_error;
  if (tool == "racecheck") return Symptom::race;
  if (tool == "synccheck") return Symptom::divergent_barrier;
  if (tool == "initcheck") return Symptom::uninitialized;
  if (headline.find("Leaked") != std::string::npos) return Symptom::leak;
  if (headline.find("Invalid") != std::string::npos || headline.find("out of bounds") != std::string::npos ||
      headline.find("Misaligned") != std::string::npos)
    return Symptom::out_of_bounds;
  return Symptom::sanitizer;
}

// The sentence shown on the check's line.
std::string headline_of(const std::string& tool, const SanitizerReport& r) {
  const std::string where = r.location.empty() ? "" : " at " + r.location;
  const std::string in = r.kernel.empty() ? "" : " in " + r.kernel;
  if (tool == "racecheck" && !r.lines.empty()) {
    // "Error: Race reported between Write access at K(...)+0x1 in f.cu:12" / "and Read access at ... in f.cu:15"
    static const std::regex access(R"((Read|Write) access at .* in ([^ ]+:\d+))");
    std::smatch a, b;
    if (std::regex_search(r.lines[0], a, access) && r.lines.size() > 1 && std::regex_search(r.lines[1], b, access)) {
      std::string first = a[1], second = b[1];
      for (auto* s : {&first, &second}) (*s)[0] = static_cast<char>(std::tolower((*s)[0]));
      const auto file = [](const std::string& p) {
        const auto colon = p.rfind(':');
        return std::filesystem::path(p.substr(0, colon)).filename().string() + p.substr(colon);
      };
      return std::string(r.warning ? "a possible race" : "a race") + " on shared memory between a " + first + " at " +
             file(a[2]) + " and a " + second + " at " + file(b[2]) + in + " (no __syncthreads() between them)";
    }
  }
  std::string what = r.lines.empty() ? "a report" : r.lines[0];
  if (!what.empty()) what[0] = static_cast<char>(std::tolower(what[0]));
  return what + where + in;
}

// This compute-sanitizer's --help, asked once per path: options it lacks are not passed.
bool sanitizer_has_option(const std::filesystem::path& sanitizer, const std::string& option) {
  static std::mutex mutex;
  static std::map<std::filesystem::path, std::string> help;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = help.find(sanitizer);
  if (it == help.end()) {
    // Whichever stream the help goes to, both reach the captured pipe.
    ChildOptions o;
    o.argv = {"sh", "-c", "exec \"$0\" --help 2>&1", sanitizer.string()};
    o.timeout_s = 30;
    o.capture_stdout_bytes = 1 << 20;
    const ChildResult r = run_child(o);
    it = help.emplace(sanitizer, r.exited ? r.stdout_text : "").first;
  }
  return it->second.find(option + " ") != std::string::npos;
}

}  // namespace

const std::vector<std::string>& sanitizer_tools() {
  static const std::vector<std::string> t = {"memcheck", "racecheck", "synccheck", "initcheck"};
  return t;
}

std::vector<std::string> sanitizer_arguments(const std::filesystem::path& sanitizer, const std::string& tool,
                                             const std::filesystem::path& log_file, double timeout_s) {
  std::vector<std::string> a = {sanitizer.string(), "--tool", tool,         "--print-limit",  "20",
                                "--show-backtrace", "device", "--log-file", log_file.string()};
  // The tool waits 10 s by default for the program to connect, and then says
  // "No attachable process found": under a loaded batch an honest program took
  // longer to start. It waits as long as the run may last, so a program that
  // stalls before it connects ends as the run's timeout, the program's own.
  if (sanitizer_has_option(sanitizer, "--launch-timeout"))
    a.insert(a.begin() + 3, {"--launch-timeout", std::to_string(static_cast<int>(timeout_s) + 60)});
  if (tool != "memcheck") return a;
  // A leak is a report too; memcheck looks for them only when asked.
  a.insert(a.begin() + 3, {"--leak-check", "full"});
  // memcheck reports an access only where it lands outside every allocation: a
  // read past the end of one buffer that lands in the next one goes unseen.
  // Padding after every allocation puts such reads outside all of them, and
  // NVTX pools (common/lab/shared_memory.cpp) mark the bytes between a buffer's end
  // and its 256-byte boundary. An access is judged by its first byte, so a
  // vector load that starts inside a buffer and runs past its end is not seen.
  if (sanitizer_has_option(sanitizer, "--padding")) a.insert(a.begin() + 3, {"--padding", "1048576"});
  if (sanitizer_has_option(sanitizer, "--nvtx")) a.insert(a.begin() + 3, {"--nvtx", "yes"});
  return a;
}

SanitizerLog parse_sanitizer_log(const std::string& tool, const std::string& log) {
  static const std::regex errors(R"(ERROR SUMMARY: (\d+) error)");
  static const std::regex hazards(R"(RACECHECK SUMMARY: \d+ hazards? displayed \((\d+) errors?, (\d+) warnings?\))");
  SanitizerLog out;
  SanitizerReport* open = nullptr;
  std::istringstream in(log);
  for (std::string raw; std::getline(in, raw);) {
    if (!starts_with(raw, kPrefix.substr(0, 9))) continue;  // the program's own output
    const std::string body = raw.size() > kPrefix.size() ? raw.substr(kPrefix.size()) : "";
    const std::string text = trim(body);
    std::smatch m;
    if (std::regex_search(text, m, errors)) {
      // "ERROR SUMMARY: 2184 errors were not printed" follows the real summary.
      if (!out.summary_seen) out.errors = std::stoll(m[1]);
      out.summary_seen = true;
      open = nullptr;
      continue;
    }
    if (std::regex_search(text, m, hazards)) {
      out.errors = std::stoll(m[1]) + std::stoll(m[2]);
      out.summary_seen = true;
      open = nullptr;
      continue;
    }
    if (text.empty()) {
      open = nullptr;
      continue;
    }
    const bool continuation = !body.empty() && body[0] == ' ';
    if (!continuation) {
      if (text == "COMPUTE-SANITIZER" || text.find("SUMMARY") != std::string::npos ||
          starts_with(text, "Target application returned"))
        continue;
      out.reports.push_back({});
      open = &out.reports.back();
      open->warning = starts_with(text, "Warning");
      open->lines.push_back(text);
      locate(text, open->location, open->kernel);
      continue;
    }
    if (!open) continue;
    // Host frames say where the driver launched the kernel: noise for a student.
    if (starts_with(text, "Saved host backtrace") || starts_with(text, "Host Frame")) continue;
    open->lines.push_back(text);
    locate(text, open->location, open->kernel);
  }
  for (auto& r : out.reports) {
    r.symptom = symptom_of(tool, r.lines.empty() ? "" : r.lines[0]);
    r.headline = headline_of(tool, r);
  }
  if (!out.summary_seen) out.errors = static_cast<long long>(out.reports.size());
  return out;
}

}  // namespace grader
