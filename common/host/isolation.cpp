#include "isolation.hpp"

#include <sys/stat.h>
#include <unistd.h>  // environ

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include "hardware_queues.hpp"
#include "protocol/named_enum.hpp"
#include "seal.hpp"

namespace fs = std::filesystem;

namespace memlabs {
namespace {

bool is_dir(const std::string& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

std::string canonical(const std::string& p) {
  std::error_code ec;
  const fs::path c = fs::weakly_canonical(p, ec);
  return ec ? p : c.string();
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// A system folder as it is here: a link (/lib -> usr/lib on a merged /usr) as
// the same link, a folder bound read-only, nothing when it does not exist.
// True when it bound a folder (a link mounts nothing of its own).
bool mount_system_folder(const std::string& dir, std::vector<std::string>& a) {
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) return false;
  if (S_ISLNK(st.st_mode)) {
    std::error_code ec;
    const fs::path target = fs::read_symlink(dir, ec);
    if (!ec) a.insert(a.end(), {"--symlink", target.string(), dir});
    return false;
  }
  if (!S_ISDIR(st.st_mode)) return false;
  a.insert(a.end(), {"--ro-bind", dir, dir});
  return true;
}

// path is one of folders or lies inside one.
bool inside_any(const std::string& path, const std::vector<std::string>& folders) {
  for (const auto& f : folders)
    if (path == f || (path.size() > f.size() && path.compare(0, f.size(), f) == 0 && path[f.size()] == '/'))
      return true;
  return false;
}

}  // namespace

std::vector<std::string> default_hidden_folders() {
  std::vector<std::string> out = {"/home", "/root", "/tmp", "/var/tmp", "/srv", "/mnt", "/media", "/run/user"};
  if (const char* home = std::getenv("HOME")) out.emplace_back(home);
  return out;
}

std::vector<std::string> bwrap_command(const Isolation& iso, const std::vector<std::string>& visible,
                                       const std::vector<std::string>& writable,
                                       const std::vector<std::string>& program_argv, bool under_tool) {
  if (iso.bwrap.empty()) throw std::runtime_error("bwrap mode without a bwrap program");
  // An allow-list, as the seal's (seal.hpp): the system's folders, the libraries
  // the environment names and the folders the caller names, on an empty root;
  // nothing else of the disk (another checkout of the course included) exists.
  std::vector<std::string> a = {iso.bwrap, "--dev", "/dev", "--proc", "/proc"};
  std::vector<std::string> mounted;
  for (const auto& d : system_read_folders())
    if (mount_system_folder(d, a)) mounted.push_back(d);
  const std::vector<std::string> system = mounted;
  for (const auto& d : library_folders_of_this_environment())
    if (is_dir(d)) {
      a.insert(a.end(), {"--ro-bind", canonical(d), canonical(d)});
      mounted.push_back(canonical(d));
    }
  for (const auto& v : visible)
    if (is_dir(v)) mounted.push_back(canonical(v));
  for (const auto& w : writable)
    if (is_dir(w)) mounted.push_back(canonical(w));
  std::vector<std::string> devices;
  std::error_code ec;
  for (fs::directory_iterator it("/dev", ec), end; !ec && it != end; it.increment(ec))
    if (it->path().filename().string().rfind("nvidia", 0) == 0) devices.push_back(it->path().string());
  std::sort(devices.begin(), devices.end());
  for (const auto& d : devices) a.insert(a.end(), {"--dev-bind", d, d});
  // Parents before children, so a folder inside another hidden one still mounts.
  std::vector<std::string> hide;
  for (const auto& h : default_hidden_folders()) hide.push_back(h);
  for (const auto& h : iso.hide) hide.push_back(h);
  for (auto& h : hide) h = canonical(h);
  std::sort(hide.begin(), hide.end(), [](const std::string& x, const std::string& y) {
    return x.size() != y.size() ? x.size() < y.size() : x < y;
  });
  hide.erase(std::unique(hide.begin(), hide.end()), hide.end());
  // A hidden folder needs hiding only inside one that is mounted (a course in
  // /usr/local, say); elsewhere it is not there at all, and an empty tmpfs in its
  // place would only take writes a program could mistake for the real folder's.
  // /tmp is always a fresh one: scratch space of the program's own.
  for (const auto& h : hide)
    if (is_dir(h) && h != "/" && (h == "/tmp" || inside_any(h, mounted))) a.insert(a.end(), {"--tmpfs", h});
  for (const auto& v : visible)  // a system folder named again (the toolkit in /usr) is bound once
    if (is_dir(v) && std::find(system.begin(), system.end(), canonical(v)) == system.end())
      a.insert(a.end(), {"--ro-bind", canonical(v), canonical(v)});
  for (const auto& w : writable)
    if (is_dir(w)) a.insert(a.end(), {"--bind", canonical(w), canonical(w)});
  // The user namespace keeps the submission from every privilege of the
  // grading user outside it, root included; the pid namespace ends every
  // process it started when the sandbox ends.
  a.insert(a.end(), {"--unshare-user", "--uid", "65534", "--gid", "65534", "--unshare-pid"});
  if (!under_tool) a.insert(a.end(), {"--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"});
  a.insert(a.end(), {"--die-with-parent", "--new-session", "--chdir",
                     writable.empty() ? "/tmp" : canonical(writable.front()), "--"});
  a.insert(a.end(), program_argv.begin(), program_argv.end());
  return a;
}

std::vector<std::string> this_process_environment() {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) env.emplace_back(*e);
  return env;
}

std::vector<std::string> submission_environment(const std::vector<std::string>& parent) {
  std::vector<std::string> env = {"LANG=C", "LC_ALL=C", "HOME=/tmp", "TMPDIR=/tmp"};
  bool have_path = false;
  for (const auto& kv : parent) {
    if (starts_with(kv, "PATH=")) {
      env.push_back(kv);
      have_path = true;
    } else if (starts_with(kv, std::string(kHardwareQueuesVariable) + "=")) {
      continue;  // the driver's default for the program's own streams (hardware_queues.hpp)
    } else if (starts_with(kv, "LD_LIBRARY_PATH=") || starts_with(kv, "CUDA_") || starts_with(kv, "NVIDIA_")) {
      env.push_back(kv);
    }
  }
  if (!have_path) env.push_back("PATH=/usr/local/bin:/usr/bin:/bin");
  return env;
}

const char* name_of(IsolationMode mode) {
  switch (mode) {
    case IsolationMode::none:
      return "none";
    case IsolationMode::rlimits:
      return "rlimits";
    case IsolationMode::bwrap:
      return "bwrap";
  }
  return "none";  // not reached: every mode is named above
}

std::optional<IsolationMode> isolation_mode_named(const std::string& name) {
  return enum_named(name, kEveryIsolationMode);
}

Isolation take_isolation_args(std::vector<std::string>& args) {
  Isolation iso;
  std::vector<std::string> rest;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& k = args[i];
    const bool ours = k == "--isolate" || k == "--bwrap" || k == "--hide" || k == "--cpu-seconds" ||
                      k == "--file-bytes" || k == "--processes" || k == "--seal-arg";
    if (!ours) {
      rest.push_back(k);
      continue;
    }
    if (i + 1 >= args.size()) throw std::invalid_argument("missing value after " + k);
    const std::string& v = args[++i];
    if (k == "--isolate") {
      const std::optional<IsolationMode> mode = isolation_mode_named(v);
      if (!mode) throw std::invalid_argument("--isolate is none, rlimits or bwrap");
      iso.mode = *mode;
    } else if (k == "--bwrap")
      iso.bwrap = v;
    else if (k == "--hide")
      iso.hide.push_back(v);
    else if (k == "--cpu-seconds")
      iso.cpu_seconds = std::stod(v);
    else if (k == "--file-bytes")
      iso.file_bytes = std::stoull(v);
    else if (k == "--seal-arg")
      iso.seal.push_back(v);
    else
      iso.processes = std::stoull(v);
  }
  if (iso.mode == IsolationMode::bwrap && iso.bwrap.empty())
    throw std::invalid_argument("--isolate bwrap needs --bwrap PROGRAM");
  args = rest;
  return iso;
}

std::vector<std::string> isolation_args(const Isolation& iso) {
  std::vector<std::string> a = {"--isolate", name_of(iso.mode)};
  if (!iso.bwrap.empty()) a.insert(a.end(), {"--bwrap", iso.bwrap});
  for (const auto& h : iso.hide) a.insert(a.end(), {"--hide", h});
  if (iso.cpu_seconds > 0) a.insert(a.end(), {"--cpu-seconds", std::to_string(iso.cpu_seconds)});
  a.insert(a.end(), {"--file-bytes", std::to_string(iso.file_bytes)});
  if (iso.processes > 0) a.insert(a.end(), {"--processes", std::to_string(iso.processes)});
  for (const auto& s : iso.seal) a.insert(a.end(), {"--seal-arg", s});
  return a;
}

}  // namespace memlabs
