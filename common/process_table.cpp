// The process table read from /proc (process_table.hpp): a process's parent
// and state from its stat line, every process, the descendants of some, and
// whether all of a process's threads are stopped.
#include "process_table.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "server_process.hpp"

namespace fs = std::filesystem;

namespace memlabs {
namespace server_detail {

// /proc/<pid>/stat: "pid (comm) state ppid ..."; comm may hold spaces and ')'.
bool read_stat(const fs::path& file, ProcStat& out) {
  std::ifstream in(file);
  std::string line;
  if (!std::getline(in, line)) return false;
  const auto close = line.rfind(')');
  if (close == std::string::npos || close + 4 > line.size()) return false;
  std::istringstream rest(line.substr(close + 2));
  long ppid = 0;
  rest >> out.state >> ppid;
  out.ppid = static_cast<pid_t>(ppid);
  out.pid = static_cast<pid_t>(std::atol(line.c_str()));
  return true;
}

std::vector<ProcStat> all_processes() {
  std::vector<ProcStat> out;
  std::error_code ec;
  for (fs::directory_iterator it("/proc", ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    ProcStat s;
    if (read_stat(it->path() / "stat", s)) out.push_back(s);
  }
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
