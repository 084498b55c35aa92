// The process table read from /proc (process_table.hpp): a process's parent
// and state from its stat line, every process, the descendants of some, and
// whether all of a process's threads are stopped.
#include "process_table.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>

#include "server_process.hpp"

namespace fs = std::filesystem;

namespace memlabs {
namespace server_detail {

// /proc/<pid>/stat: "pid (comm) state ppid ...". comm may hold spaces and ')',
// but is at most 15 bytes, so the line's first 256 bytes hold its last ')'.
// Read with plain system calls: a pause scans every process of the machine.
bool read_stat(const fs::path& file, ProcStat& out) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[256];
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return false;
  buf[n] = '\0';
  const char* close = std::strrchr(buf, ')');
  if (!close || close + 4 > buf + n) return false;
  char* end = nullptr;
  const long ppid = std::strtol(close + 4, &end, 10);
  if (end == close + 4) return false;
  out.state = close[2];
  out.ppid = static_cast<pid_t>(ppid);
  out.pid = static_cast<pid_t>(std::atol(buf));
  return true;
}

std::vector<ProcStat> all_processes() {
  std::vector<ProcStat> out;
  DIR* proc = ::opendir("/proc");
  if (!proc) return out;
  std::string file;
  while (const dirent* e = ::readdir(proc)) {
    if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
    if (!std::all_of(e->d_name, e->d_name + std::strlen(e->d_name), ::isdigit)) continue;
    file.assign("/proc/").append(e->d_name).append("/stat");
    ProcStat s;
    if (read_stat(file, s)) out.push_back(s);
  }
  ::closedir(proc);
  return out;
}

std::vector<pid_t> descendants(const std::vector<ProcStat>& table, const std::vector<pid_t>& roots) {
  std::multimap<pid_t, pid_t> children;
  for (const auto& p : table) children.emplace(p.ppid, p.pid);
  std::vector<pid_t> out, todo = roots;
  std::set<pid_t> seen(roots.begin(), roots.end());
  while (!todo.empty()) {
    const pid_t p = todo.back();
    todo.pop_back();
    const auto range = children.equal_range(p);
    for (auto it = range.first; it != range.second; ++it)
      if (seen.insert(it->second).second) {
        out.push_back(it->second);
        todo.push_back(it->second);
      }
  }
  return out;
}

bool is_stopped(pid_t pid) {
  std::error_code ec;
  const fs::path tasks = fs::path("/proc") / std::to_string(pid) / "task";
  bool any = false;
  for (fs::directory_iterator it(tasks, ec), end; !ec && it != end; it.increment(ec)) {
    ProcStat s;
    if (!read_stat(it->path() / "stat", s)) continue;
    any = true;
    if (s.state != 'T' && s.state != 't' && s.state != 'Z' && s.state != 'X') return false;
  }
  return any || ec;  // a process without tasks is gone
}

}  // namespace server_detail

std::vector<pid_t> descendants_of(pid_t root) {
  return server_detail::descendants(server_detail::all_processes(), {root});
}

}  // namespace memlabs
