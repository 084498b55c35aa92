// What a finished child is said to have done (ChildResult::describe), and the
// head of what it wrote, made safe to quote back (read_head): the words a
// grade's messages use, apart from the starting and waiting in child_process.cpp.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>

#include "child_process.hpp"
#include "printable.hpp"

namespace grader {
namespace {

const char* signal_name(int sig) {
  switch (sig) {
    case SIGHUP:
      return "SIGHUP";
    case SIGINT:
      return "SIGINT";
    case SIGQUIT:
      return "SIGQUIT";
    case SIGILL:
      return "SIGILL";
    case SIGTRAP:
      return "SIGTRAP";
    case SIGABRT:
      return "SIGABRT";
    case SIGBUS:
      return "SIGBUS";
    case SIGFPE:
      return "SIGFPE";
    case SIGKILL:
      return "SIGKILL";
    case SIGSEGV:
      return "SIGSEGV";
    case SIGPIPE:
      return "SIGPIPE";
    case SIGALRM:
      return "SIGALRM";
    case SIGTERM:
      return "SIGTERM";
    case SIGXCPU:
      return "SIGXCPU";
    case SIGXFSZ:
      return "SIGXFSZ";
    case SIGSYS:
      return "SIGSYS";
    default:
      return nullptr;
  }
}

const char* signal_meaning(int sig) {
  switch (sig) {
    case SIGSEGV:
      return "segmentation fault";
    case SIGBUS:
      return "bus error";
    case SIGFPE:
      return "arithmetic exception";
    case SIGILL:
      return "illegal instruction";
    case SIGABRT:
      return "aborted, e.g. by a failed assert";
    case SIGKILL:
      return "killed, e.g. for using too much memory";
    case SIGXFSZ:
      return "output file size limit exceeded";
    case SIGXCPU:
      return "CPU time limit exceeded";
    case SIGPIPE:
      return "broken pipe";
    case SIGTERM:
      return "terminated";
    case SIGINT:
      return "interrupted";
    default:
      return nullptr;
  }
}

std::string human_bytes(std::uint64_t n) {
  if (n < 1000) return std::to_string(n) + (n == 1 ? " byte" : " bytes");
  const char* unit = n < 1000000 ? "kB" : n < 1000000000 ? "MB" : "GB";
  const double scaled = n < 1000000 ? n / 1e3 : n < 1000000000 ? n / 1e6 : n / 1e9;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %s", scaled, unit);
  return buf;
}

}  // namespace

std::string ChildResult::describe() const {
  char buf[64];
  if (!started) return "could not start: " + start_error;
  if (interrupted) {
    const char* name = signal_name(interrupt_signal);
    return std::string("stopped because the grader got ") + (name ? name : "a signal");
  }
  if (timed_out) {
    std::snprintf(buf, sizeof buf, "timed out after %.1f s", wall_s);
    return buf;
  }
  if (cancelled) return "stopped: its result was no longer needed";
  if (signaled) {
    const char* name = signal_name(signal);
    const char* meaning = signal_meaning(signal);
    std::string s = "killed by " + (name ? std::string(name) : "signal " + std::to_string(signal));
    return meaning ? s + " (" + meaning + ")" : s;
  }
  if (exited) return "exited with code " + std::to_string(exit_code);
  return "ended without an exit status";
}

namespace {
// Up to `count` bytes of the file from `from` on (from < 0: the last -from bytes), and
// the file's size. Never through a link, and only a regular file: a submission may
// have replaced the file with a link to something it wants quoted back.
std::optional<std::pair<std::string, std::uint64_t>> read_plain_file(const std::filesystem::path& file, long long from,
                                                                     std::size_t count) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return std::nullopt;
  }
  const auto size = static_cast<std::uint64_t>(st.st_size);
  const std::uint64_t start = from >= 0 ? static_cast<std::uint64_t>(from)
                                        : size - std::min<std::uint64_t>(size, static_cast<std::uint64_t>(-from));
  std::string raw(count, '\0');
  std::size_t got = 0;
  while (got < count) {
    const ssize_t n = ::pread(fd, raw.data() + got, count - got, static_cast<off_t>(start + got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  raw.resize(got);
  return std::make_pair(raw, size);
}
}  // namespace

std::string read_tail(const std::filesystem::path& file, std::size_t max_bytes) {
  const auto read = read_plain_file(file, -static_cast<long long>(max_bytes), max_bytes);
  if (!read) return "";
  std::string raw = read->first;
  if (const std::uint64_t before = read->second - raw.size(); before > 0) {  // start at a whole line
    const auto nl = raw.find('\n');
    raw = "[" + human_bytes(before) + " before] ..." + (nl == std::string::npos ? raw : "\n" + raw.substr(nl + 1));
  }
  return printable(raw);
}

std::string read_head(const std::filesystem::path& file, std::size_t max_bytes) {
  const auto read = read_plain_file(file, 0, max_bytes);
  if (!read) return "";
  const std::string& raw = read->first;
  const std::uint64_t size = read->second;
  const std::uint64_t cut = size > raw.size() ? size - raw.size() : 0;

  // What the program wrote is its own: shown as data, never as terminal input.
  std::string text = printable(raw);
  if (cut > 0) {
    if (!text.empty() && text.back() != '\n') text += '\n';
    text += "... [truncated: " + human_bytes(cut) + " more]";
  }
  return text;
}

}  // namespace grader
