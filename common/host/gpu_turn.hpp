// Taking turns on a GPU, machine-wide, between every grade of every user.
// Work that times nothing (a correctness run, compute-sanitizer, ncu) may share
// the GPU; a timing must have it alone, or another grade's kernels would land
// in its measured batches. So a turn is shared or exclusive: a flock on one
// file per GPU (the turn), shared or exclusive as the work needs.
//
// flock lets a stream of shared holders keep an exclusive request waiting for
// ever. A second file, the gate, keeps the order fair: a shared request passes
// it alone and at once (LOCK_EX, given back as soon as it holds the turn); a
// timing holds it shared from the moment it asks until it is done. So a timing
// waits only for the shared work already running, never for work that came
// after it; and timings that ask while another waits or runs take the GPU one
// after another before any shared work gets in. Draining the shared work, the
// seconds a timing waits for the sanitizer and ncu runs already going, then
// happens once for every timing of the batch, not once each (on an H100 it cut
// a two-lab `grader check`'s summed waits for the GPU from 342 s to 194 s).
//
// A long exclusive turn (a sandboxed grade's, held for its whole grade) does
// not join timings' batches: it closes the gate (LOCK_EX) only until it holds
// the turn, so other users' shared work gets its turns between such grades.
//
// The files are opened read-only (flock needs no write access), without
// following links, and never written: a file planted by another user can make
// a grade wait, but can change nothing. The grader and the referee (which
// holds the GPU alone only for a timing's measured part) both use this.
// Host-only.
#pragma once

#include <functional>
#include <string>

namespace memlabs {

enum class GpuUse { shared, exclusive };

// Opens a lock file whoever made it, never through a link; makes it if nobody
// has (mode 0444: read-only is enough for flock). Throws std::runtime_error
// saying why not.
int open_lock_file(const std::string& file);

// How an exclusive turn waits beside others (see above): short (a timing, a
// run that reads the GPU's state) or long (a whole grade).
enum class ExclusiveLength { short_turn, long_turn };

class GpuTurnFiles {
 public:
  // Opens <turn_file> and <turn_file>.gate, making either if nobody has (mode
  // 0444, so every user may open it). Throws std::runtime_error saying why not.
  explicit GpuTurnFiles(const std::string& turn_file);
  ~GpuTurnFiles();  // closing gives the turn back
  GpuTurnFiles(const GpuTurnFiles&) = delete;
  GpuTurnFiles& operator=(const GpuTurnFiles&) = delete;

  // Takes the turn as `use` says, from whatever this object holds (an
  // exclusive turn becomes shared at once; a shared one becomes exclusive when
  // every other holder is done). `waiting` is called once, before the first
  // wait, while another holds the turn or the gate. Throws std::runtime_error.
  void take(GpuUse use, const std::function<void()>& waiting = {},
            ExclusiveLength length = ExclusiveLength::short_turn);
  void give_back();

  int turn_fd() const { return turn_; }  // for saying who holds it (/proc/locks)

 private:
  enum class Held { none, shared, exclusive };
  void leave_gate();

  int turn_ = -1, gate_ = -1;
  Held held_ = Held::none;
  bool in_gate_ = false;  // a short exclusive turn holds the gate shared until it is done
  std::string file_;
};

}  // namespace memlabs
