#include "phase_log.hpp"

#include <algorithm>
#include <cstdio>
#include <mutex>

namespace grader {
namespace {

struct Log {
  std::mutex mutex;
  std::chrono::steady_clock::time_point origin = std::chrono::steady_clock::now();
  std::vector<Phase> phases;
};

Log& log() {
  static Log* l = new Log;  // never destroyed: a thread may note a phase during exit
  return *l;
}

// Made while statics are initialised: the process's start, near enough.
const bool g_origin_set = (log(), true);

}  // namespace

double seconds_since_start() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - log().origin).count();
}

void note_phase(const std::string& what, std::chrono::steady_clock::time_point begin,
                std::chrono::steady_clock::time_point end, int depth) {
  Log& l = log();
  const std::lock_guard<std::mutex> hold(l.mutex);
  l.phases.push_back({what, std::chrono::duration<double>(begin - l.origin).count(),
                      std::chrono::duration<double>(end - begin).count(), depth});
}

std::vector<Phase> noted_phases() {
  Log& l = log();
  const std::lock_guard<std::mutex> hold(l.mutex);
  std::vector<Phase> out = l.phases;
  std::stable_sort(out.begin(), out.end(), [](const Phase& a, const Phase& b) { return a.start_s < b.start_s; });
  return out;
}

std::string format_phases(const std::vector<Phase>& phases, double total_s) {
  std::string out;
  double covered = 0;
  char line[64];
  for (const auto& p : phases) {
    if (p.depth == 0) covered += p.seconds;
    std::snprintf(line, sizeof line, "%7.2f s  ", p.seconds);
    out += line + std::string(2 * static_cast<std::size_t>(std::max(0, p.depth)), ' ') + p.what + "\n";
  }
  std::snprintf(line, sizeof line, "%7.2f s  ", std::max(0.0, total_s - covered));
  out += line + std::string("other (starting, reading the course, writing the report)\n");
  std::snprintf(line, sizeof line, "%7.2f s  ", total_s);
  out += line + std::string("in all\n");
  return out;
}

}  // namespace grader
