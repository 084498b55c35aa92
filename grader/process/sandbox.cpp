#include "sandbox.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "sealed_run.hpp"

namespace fs = std::filesystem;

namespace grader {
namespace {

std::vector<fs::path> split_paths(const char* value) {
  std::vector<fs::path> out;
  if (!value) return out;
  std::string s = value, item;
  for (std::size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == ':') {
      if (!item.empty()) out.emplace_back(item);
      item.clear();
    } else {
      item += s[i];
    }
  }
  return out;
}

std::string join_paths(const std::vector<fs::path>& v) {
  std::string s;
  for (const auto& p : v) s += (s.empty() ? "" : ":") + p.string();
  return s;
}

fs::path locate_program(const std::string& program) {
  const char* path = std::getenv("PATH");
  for (const auto& dir : split_paths(path ? path : "/usr/bin:/bin")) {
    const fs::path candidate = dir / program;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return {};
}

}  // namespace

IsolationSettings isolation_from_environment() {
  IsolationSettings s;
  // Any value but bwrap still isolates, with the limits alone ("none" too: the
  // variable is set only to isolate).
  if (const char* m = std::getenv(kIsolateVar); m && *m)
    s.mode = std::string(m) == "bwrap" ? memlabs::IsolationMode::bwrap : memlabs::IsolationMode::rlimits;
  s.hide = split_paths(std::getenv(kIsolateHideVar));
  s.writable = split_paths(std::getenv(kIsolateWritableVar));
  return s;
}

std::vector<std::string> isolation_environment(const IsolationSettings& s) {
  std::vector<std::string> env;
  if (s.enabled()) env.push_back(std::string(kIsolateVar) + "=" + memlabs::name_of(s.mode));
  if (!s.hide.empty()) env.push_back(std::string(kIsolateHideVar) + "=" + join_paths(s.hide));
  if (!s.writable.empty()) env.push_back(std::string(kIsolateWritableVar) + "=" + join_paths(s.writable));
  return env;
}

BwrapStatus probe_bwrap() {
  BwrapStatus st;
  st.program = locate_program("bwrap");
  if (st.program.empty()) {
    st.reason = "bwrap is not installed (Debian package bubblewrap)";
    return st;
  }
  char dir_template[] = "/tmp/grader-bwrap-probe-XXXXXX";
  const char* dir = ::mkdtemp(dir_template);
  ChildOptions o;
  o.argv = {st.program.string(),
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "--tmpfs",
            "/tmp",
            "--unshare-net",
            "--unshare-pid",
            "--die-with-parent",
            "true"};
  o.timeout_s = 20;
  if (dir) o.stderr_file = fs::path(dir) / "stderr";
  const ChildResult r = run_child(o);
  if (r.exited && r.exit_code == 0) {
    st.works = true;
  } else {
    std::string err = dir ? read_head(o.stderr_file, 300) : "";
    while (!err.empty() && (err.back() == '\n' || err.back() == ' ')) err.pop_back();
    st.reason = "bwrap does not work on this machine (" + (r.started ? r.describe() : r.start_error) +
                (err.empty() ? "" : ": " + err) + "); containers often forbid the namespaces it needs";
  }
  if (dir) {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  return st;
}

std::uint64_t isolated_cpu_seconds(double timeout_s) {
  // The runner may spin a CPU core while it waits for the GPU, and CUDA adds
  // threads: twice the wall-clock limit lets an honest run finish.
  return static_cast<std::uint64_t>(std::ceil(2 * std::max(timeout_s, 1.0))) + 10;
}

std::uint64_t isolated_process_limit() {
  return tasks_of_user(::getuid()) + 256;  // room for the program, CUDA's threads and bwrap, not for a fork bomb
}

memlabs::Isolation submission_isolation(const IsolationSettings& s, double timeout_s) {
  memlabs::Isolation iso;
  if (!s.enabled()) return iso;
  iso.mode = s.mode;
  if (s.mode == memlabs::IsolationMode::bwrap) {
    const BwrapStatus bw = probe_bwrap();
    iso.bwrap = bw.program.string();
    if (!bw.works) iso.mode = memlabs::IsolationMode::rlimits;
  }
  for (const auto& h : s.hide) iso.hide.push_back(h.string());
  iso.cpu_seconds = static_cast<double>(isolated_cpu_seconds(timeout_s));
  iso.processes = 512;  // CUDA's threads count too; far below what a fork bomb needs
  return iso;
}

}  // namespace grader
