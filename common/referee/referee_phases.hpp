// Where one referee run's time goes, for `grader grade --timings`: each phase
// (the CUDA start, the worker's start, each case, the timing protocol's parts)
// with its start since main() began and its length. The grader shows them
// under the referee's own line; nothing is judged from them.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "protocol/referee_protocol.hpp"

namespace memlabs {

class RefereePhases {
 public:
  using Clock = std::chrono::steady_clock;

  // The phase that began at `begin` ends now.
  void note(const std::string& what, Clock::time_point begin) {
    const auto since = [&](Clock::time_point t) { return std::chrono::duration<double>(t - origin_).count(); };
    phases_.push_back({what, since(begin), since(Clock::now()) - since(begin)});
  }
  nlohmann::json json() const { return phases_; }

 private:
  Clock::time_point origin_ = Clock::now();
  std::vector<RefereePhase> phases_;
};

// The one log of this referee process, begun when main() first asks for it.
inline RefereePhases& referee_phases() {
  static RefereePhases phases;
  return phases;
}

}  // namespace memlabs
