#include "gpu_turn.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace memlabs {

int open_lock_file(const std::string& file) {
  int fd = -1;
  for (int attempt = 0; attempt < 5 && fd < 0; ++attempt) {
    fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd >= 0 || errno != ENOENT) break;
    fd = ::open(file.c_str(), O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0444);
    if (fd >= 0)
      ::fchmod(fd, 0444);  // every user may open it, whatever the umask
    else if (errno != EEXIST)
      break;
  }
  if (fd < 0) {
    const int e = errno;
    std::string why = std::strerror(e);
    if (e == ELOOP) why = "it is a symbolic link (someone else's file; remove it)";
    if (e == ENOENT) why = "its folder does not exist (set GRADER_GPU_LOCK_DIR to a folder every user can reach)";
    throw std::runtime_error("cannot open the GPU lock " + file + ": " + why);
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw std::runtime_error("the GPU lock " + file + " is not a plain file; remove it");
  }
  return fd;
}

namespace {

// flock(fd, op), waiting if it must; `waiting` once before the first wait.
void flock_waiting(int fd, int op, const std::string& file, const std::function<void()>& waiting, bool& said) {
  if (::flock(fd, op | LOCK_NB) == 0) return;
  if (errno == EWOULDBLOCK && waiting && !said) {
    said = true;
    waiting();
  }
  while (::flock(fd, op) != 0)
    if (errno != EINTR) throw std::runtime_error("cannot lock " + file + ": " + std::strerror(errno));
}

}  // namespace

GpuTurnFiles::GpuTurnFiles(const std::string& turn_file) : file_(turn_file) {
  turn_ = open_lock_file(turn_file);
  try {
    gate_ = open_lock_file(turn_file + ".gate");
  } catch (...) {
    ::close(turn_);
    throw;
  }
}

GpuTurnFiles::~GpuTurnFiles() {
  if (gate_ >= 0) ::close(gate_);
  if (turn_ >= 0) ::close(turn_);
}

void GpuTurnFiles::take(GpuUse use, const std::function<void()>& waiting, ExclusiveLength length) {
  bool said = false;
  const int op = use == GpuUse::exclusive ? LOCK_EX : LOCK_SH;
  if (held_ == Held::exclusive) {
    // Never through the gate while holding the turn: a request waiting there
    // for this very turn would wait for ever, and this with it.
    if (use == GpuUse::shared) {
      flock_waiting(turn_, LOCK_SH, file_, waiting, said);
      leave_gate();  // shared work times nothing: the batch of timings may end
    }
    held_ = use == GpuUse::shared ? Held::shared : Held::exclusive;
    return;
  }
  // Nor holding a shared turn: a timing at the turn waits for it.
  if (held_ == Held::shared) {
    if (use == GpuUse::shared) return;
    give_back();
  }
  if (use == GpuUse::exclusive && length == ExclusiveLength::short_turn) {
    // Into the batch of timings: shared work waits at the gate until the last
    // of them is done; the timings take the turn one after another.
    flock_waiting(gate_, LOCK_SH, file_ + ".gate", waiting, said);
    in_gate_ = true;
    try {
      flock_waiting(turn_, LOCK_EX, file_, waiting, said);
    } catch (...) {
      leave_gate();
      throw;
    }
    held_ = Held::exclusive;
    return;
  }
  // Past the gate alone: shared work waits here while any timing waits or runs;
  // a long exclusive turn keeps the gate closed until it holds the turn.
  flock_waiting(gate_, LOCK_EX, file_ + ".gate", waiting, said);
  try {
    flock_waiting(turn_, op, file_, waiting, said);
  } catch (...) {
    ::flock(gate_, LOCK_UN);
    throw;
  }
  ::flock(gate_, LOCK_UN);
  held_ = use == GpuUse::shared ? Held::shared : Held::exclusive;
}

void GpuTurnFiles::leave_gate() {
  if (in_gate_) ::flock(gate_, LOCK_UN);
  in_gate_ = false;
}

void GpuTurnFiles::give_back() {
  ::flock(turn_, LOCK_UN);
  leave_gate();
  held_ = Held::none;
}

}  // namespace memlabs
