#include "file_watcher.hpp"

#include <poll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>

#include "content_hash.hpp"

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace grader {
namespace {

// How long one sleep lasts at most, so stop() is asked often enough for Ctrl-C
// to feel immediate even when the signal lands just before a sleep begins.
constexpr int kTickMs = 100;

// Every way a save can show up in the folder, by the file's name: written in
// place (MODIFY, CLOSE_WRITE), created anew (CREATE), renamed over (MOVED_TO),
// or moved away or deleted first, as vim does with its backup (MOVED_FROM,
// DELETE). The *_SELF events say the folder itself went away.
constexpr std::uint32_t kEvents = IN_CLOSE_WRITE | IN_MODIFY | IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE |
                                  IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR;

int ms_until(Clock::time_point t) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t - Clock::now()).count();
  return static_cast<int>(std::clamp<long long>(ms, 0, kTickMs));
}

}  // namespace

FileWatcher::FileWatcher(fs::path file, Options options)
    : file_(std::move(file)), dir_(file_.parent_path()), name_(file_.filename().string()), options_(options) {
  if (dir_.empty()) dir_ = ".";
  last_ = signature();
  if (options_.poll) return;
  fd_ = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd_ < 0) {
    start_polling(std::string("inotify_init1: ") + std::strerror(errno));
    return;
  }
  if (!add_watch()) start_polling("cannot watch " + dir_.string() + " with inotify: " + std::strerror(errno));
}

FileWatcher::~FileWatcher() {
  if (fd_ >= 0) ::close(fd_);
}

bool FileWatcher::add_watch() {
  wd_ = inotify_add_watch(fd_, dir_.c_str(), kEvents);
  return wd_ >= 0;
}

void FileWatcher::start_polling(const std::string& why) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = wd_ = -1;
  fallback_reason_ = why;
  last_ = signature();
}

FileWatcher::Signature FileWatcher::signature() const {
  Signature s;
  struct stat st {};
  if (::stat(file_.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return s;
  std::ifstream in(file_, std::ios::binary);
  if (!in) return s;
  s.exists = true;
  s.mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  s.size = static_cast<std::uintmax_t>(st.st_size);
  s.hash = ContentHash().add(std::string(std::istreambuf_iterator<char>(in), {})).hex();
  return s;
}

bool FileWatcher::read_events(int timeout_ms) {
  pollfd p{fd_, POLLIN, 0};
  if (::poll(&p, 1, timeout_ms) <= 0) return false;  // timeout, or a signal: the caller asks stop()
  bool named = false, folder_gone = false;
  alignas(inotify_event) char buf[64 * 1024];
  for (;;) {
    const ssize_t n = ::read(fd_, buf, sizeof buf);
    if (n <= 0) break;  // EAGAIN: drained
    for (char* at = buf; at < buf + n;) {
      const auto* e = reinterpret_cast<const inotify_event*>(at);
      at += sizeof(inotify_event) + e->len;
      // A full queue lost events, maybe the file's: treat it as a save.
      if (e->mask & IN_Q_OVERFLOW) named = true;
      if (e->wd != wd_) continue;  // left over from a folder watched before
      if (e->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED)) folder_gone = true;
      if (e->len > 0 && name_ == e->name) named = true;
    }
  }
  if (folder_gone) {
    // The folder was moved or replaced: watch whatever is at its path now, or
    // poll until something is (the next save there counts as a change).
    inotify_rm_watch(fd_, wd_);
    if (!add_watch()) start_polling(dir_.string() + " went away; polling until it is back");
    named = true;
  }
  return named;
}

bool FileWatcher::wait(const std::function<bool()>& stop) {
  std::optional<Clock::time_point> settle;  // when the quiet time after the last event ends
  auto next_poll = Clock::now() + options_.poll_interval;
  for (;;) {
    if (stop()) return false;
    if (settle && Clock::now() >= *settle) {
      settle.reset();
      const Signature now = signature();
      if (polling() && !(now == last_)) {
        last_ = now;  // still changing: wait for it to settle
        settle = Clock::now() + options_.debounce;
      } else if (now.exists) {
        last_ = now;
        return true;
      }
    }
    const int timeout_ms = settle ? ms_until(*settle) : kTickMs;
    if (!polling()) {
      if (read_events(timeout_ms)) settle = Clock::now() + options_.debounce;
      continue;
    }
    ::poll(nullptr, 0, std::min(timeout_ms, ms_until(next_poll)));  // returns early on a signal
    if (Clock::now() < next_poll) continue;
    next_poll = Clock::now() + options_.poll_interval;
    const Signature now = signature();
    if (!(now == last_)) {
      last_ = now;
      settle = Clock::now() + options_.debounce;
    }
  }
}

}  // namespace grader
