#include "activity.hpp"

#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#include "phase_log.hpp"
#include "terminal.hpp"

namespace grader {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

bool g_enabled = false;
thread_local int t_depth = 0;  // Activities alive on this thread, for the phase log

void write_all(const std::string& s) {
  std::size_t done = 0;
  while (done < s.size()) {
    const ssize_t n = ::write(STDERR_FILENO, s.data() + done, s.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // a closed terminal: nothing to show it on
    done += static_cast<std::size_t>(n);
  }
}

std::size_t terminal_columns() {
  winsize ws{};
  if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 80;
}

// The first `columns` code points of `text`, with an ellipsis if it was longer.
std::string fit(const std::string& text, std::size_t columns) {
  if (display_width(text) <= columns) return text;
  const std::string ellipsis = Style::unicode() ? "…" : "...";
  const std::size_t keep = columns > display_width(ellipsis) ? columns - display_width(ellipsis) : 0;
  std::size_t seen = 0, end = 0;
  for (; end < text.size(); ++end) {
    if ((static_cast<unsigned char>(text[end]) & 0xC0) != 0x80 && seen++ == keep) break;
  }
  return text.substr(0, end) + (keep ? ellipsis : "");
}

}  // namespace

// The one line every live Activity shares, and the thread that redraws it.
struct ActivityLine {
  std::mutex mutex;
  std::condition_variable wake;
  std::vector<const Activity*> live;  // in the order they began: outermost first
  std::thread spinner;
  unsigned generation = 0;  // bumped when the last Activity ends, to stop that spinner

  static ActivityLine& get() {
    // Never destroyed: an exit() while an Activity lives must not destroy a
    // running std::thread (that calls std::terminate).
    static ActivityLine* line = new ActivityLine;
    return *line;
  }

  // Called with `mutex` held.
  std::string text(std::size_t frame) const {
    static const char* const kBraille[] = {"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"};
    static const char* const kAscii[] = {"|", "/", "-", "\\"};
    const std::string head = std::string(Style::unicode() ? kBraille[frame % 10] : kAscii[frame % 4]) + " ";
    std::string what;
    for (const Activity* a : live) what += (what.empty() ? "" : Style::unicode() ? " · " : " - ") + a->what_;
    const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - live.back()->since_);
    const std::string tail = "  " + std::to_string(seconds.count()) + " s";
    // A line wider than the terminal wraps, and "\r" returns only to the start
    // of its last row: the rest would stay on screen.
    const std::size_t fixed = display_width(head) + display_width(tail) + 1;
    const std::size_t columns = terminal_columns();
    return "\r" + head + fit(what, columns > fixed ? columns - fixed : 0) + Style::dim(tail) + "\033[K";
  }

  void spin(unsigned mine) {
    // Ctrl-C is for the thread doing the work (child_process.cpp waits for it):
    // the spinner takes no signal.
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, nullptr);
    std::unique_lock<std::mutex> lock(mutex);
    const auto stopped = [&] { return generation != mine; };
    bool drawn = false;
    // Quick work (a cached build) ends before the first frame and shows nothing.
    auto next = Clock::now() + 250ms;
    for (std::size_t frame = 0; !wake.wait_until(lock, next, stopped); ++frame) {
      const std::string line = text(frame);
      // Written unlocked: a terminal paused with Ctrl-S must not block update().
      lock.unlock();
      write_all(line);
      lock.lock();
      drawn = true;
      next = Clock::now() + 100ms;
    }
    lock.unlock();
    if (drawn) write_all("\r\033[K");
  }
};

void Activity::configure(bool allow) {
  const char* term = std::getenv("TERM");
  g_enabled = allow && ::isatty(STDERR_FILENO) && !(term && std::strcmp(term, "dumb") == 0);
}

bool Activity::enabled() { return g_enabled; }

Activity::Activity(std::string what) : what_(std::move(what)), since_(Clock::now()), depth_(t_depth++) {
  if (!g_enabled) return;
  ActivityLine& line = ActivityLine::get();
  std::lock_guard<std::mutex> lock(line.mutex);
  line.live.push_back(this);
  shown_ = true;
  if (line.spinner.joinable()) return;  // the spinner of an outer Activity draws this one too
  try {
    line.spinner = std::thread([&line, mine = line.generation] { line.spin(mine); });
  } catch (const std::system_error&) {
    // No thread, no spinner: the work itself goes on.
  }
}

Activity::~Activity() {
  --t_depth;
  note_phase(what_, since_, Clock::now(), depth_);
  if (!shown_) return;
  ActivityLine& line = ActivityLine::get();
  std::thread finished;
  {
    std::lock_guard<std::mutex> lock(line.mutex);
    line.live.erase(std::find(line.live.begin(), line.live.end(), this));
    if (line.live.empty()) {
      ++line.generation;
      finished = std::move(line.spinner);
    }
  }
  line.wake.notify_all();
  // The spinner erases the line before it returns: once joined, the caller may print.
  if (!finished.joinable()) return;
  try {
    finished.join();
  } catch (const std::system_error&) {
    finished.detach();  // a destructor must not throw, least of all while unwinding
  }
}

void Activity::update(std::string what) {
  note_phase(what_, since_, Clock::now(), depth_);
  if (!shown_) {
    what_ = std::move(what);
    since_ = Clock::now();
    return;
  }
  ActivityLine& line = ActivityLine::get();
  std::lock_guard<std::mutex> lock(line.mutex);
  what_ = std::move(what);
  since_ = Clock::now();
}

}  // namespace grader
