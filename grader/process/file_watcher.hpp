// Waits for saves of one file, for `grader watch`.
//
// Editors save in two ways: in place (open, write, close), or by writing a
// temporary file and renaming it over the original (vim, VS Code, JetBrains),
// which gives the name a new inode. A watch on the file itself would go deaf
// after the first atomic save, so inotify watches the file's folder and keeps
// only events that name the file. A save is several events (create, write,
// close, rename); a change counts once no further event came for `debounce`,
// so one save, or a burst of them, is one change.
//
// Where inotify cannot be used (not available, out of watches, a file system
// that does not report changes such as some network mounts) it polls instead:
// mtime, size and a hash of the content every `poll_interval` (the hash
// catches a same-size save within the file system's mtime granularity).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

namespace grader {

class FileWatcher {
 public:
  struct Options {
    std::chrono::milliseconds debounce{300};       // quiet time after the last event
    std::chrono::milliseconds poll_interval{500};  // polling: how often the file is looked at
    bool poll = false;                             // poll even where inotify works
  };

  // Starts watching at once: a save after the constructor returns is reported
  // by the next wait(), even one made before wait() is called.
  FileWatcher(std::filesystem::path file, Options options);
  ~FileWatcher();
  FileWatcher(const FileWatcher&) = delete;
  FileWatcher& operator=(const FileWatcher&) = delete;

  bool polling() const { return fd_ < 0; }
  // Why it polls although inotify was wanted ("inotify_init1: Too many open
  // files"); empty when it uses inotify or polling was asked for.
  const std::string& fallback_reason() const { return fallback_reason_; }

  // Blocks until the file was saved and then left alone for `debounce`, and
  // returns true; a file that was removed counts only once it is back.
  // Returns false as soon as stop() is true: stop() is called at least every
  // 100 ms, and at once after a signal (e.g. SIGINT) interrupts the wait.
  bool wait(const std::function<bool()>& stop);

 private:
  struct Signature {
    bool exists = false;
    std::int64_t mtime_ns = 0;
    std::uintmax_t size = 0;
    std::string hash;  // of the content
    bool operator==(const Signature& o) const {
      return exists == o.exists && mtime_ns == o.mtime_ns && size == o.size && hash == o.hash;
    }
  };
  Signature signature() const;
  void start_polling(const std::string& why);
  bool add_watch();
  // Reads what inotify has, waiting up to timeout_ms; true when an event names the file.
  bool read_events(int timeout_ms);

  std::filesystem::path file_, dir_;
  std::string name_;
  Options options_;
  int fd_ = -1, wd_ = -1;
  std::string fallback_reason_;
  Signature last_;  // polling: the file as last reported (or as first seen)
};

}  // namespace grader
