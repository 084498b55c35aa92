// The processes of this machine as /proc shows them, for the referee's hold
// on a server and everything it started (server_process.cpp), and for the
// grader's sweep of the orphans it adopted (child_process.cpp): who is whose
// child, and whether a process has stopped. Host-only.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <vector>

namespace memlabs::server_detail {

struct ProcStat {
  pid_t pid = 0, ppid = 0;
  char state = '?';
};

// /proc/<pid>/stat or /proc/<pid>/task/<tid>/stat; false when it is gone or unreadable.
bool read_stat(const std::filesystem::path& file, ProcStat& out);
std::vector<ProcStat> all_processes();
// Every descendant of `roots` in `table` (roots excluded), by parent links.
std::vector<pid_t> descendants(const std::vector<ProcStat>& table, const std::vector<pid_t>& roots);
// Whether every thread of `pid` is stopped or gone.
bool is_stopped(pid_t pid);

}  // namespace memlabs::server_detail
