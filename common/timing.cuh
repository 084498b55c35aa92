// The timing protocol (design.md): warm up, flush L2 before every timed
// launch, interleave baseline (A), candidate (B), a memcpy moving the same
// bytes (C) and the library version if the lab has one (L) as A B C L L C B A
// in one process, turn each round into ratios, and
// stop when the median's interval is within ±2 % or the time cap is reached,
// sampling longer while a threshold still falls inside the interval.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "lab_api.cuh"
#include "stats.hpp"

namespace memlabs {

struct TimingOptions {
  double warmup_ms = 100;   // of GPU time, before anything is recorded
  std::size_t min_rounds = 10;
  double target_relative_half_width = 0.02;
  double cap_s = 3.0;       // wall time for the main phase; the undecided phase may use as much again
  // Thresholds the caller will judge ("speedup", "fraction" or "library"): sampling goes
  // on while one of them still lies inside its interval.
  std::vector<std::pair<std::string, double>> decide;
};

struct TimingReport {
  std::size_t rounds = 0;
  double warmup_ms = 0, wall_s = 0;
  bool converged = false;         // every tracked interval within the target
  bool extended = false;          // sampled past the cap because a threshold was undecided
  bool memcpy_available = false;  // scratch for the memcpy-equivalent fitted in memory
  std::string library;            // the library timed alongside, or empty
  double copy_bytes = 0;          // bytes the memcpy copies (it moves twice that)
  // Per round:
  std::vector<double> baseline_ms, candidate_ms, memcpy_ms, library_ms;  // mean of the round's two launches
  std::vector<double> speedup;   // baseline time / candidate time
  std::vector<double> fraction;  // memcpy time / candidate time: candidate's share of copy bandwidth
  std::vector<double> aa;        // first baseline / second baseline: the noise floor (ideally 1)
  std::vector<double> library_fraction;  // library time / candidate time: candidate's share of the library's speed
};

TimingReport time_interleaved(Problem& problem, const TimingOptions& options, cudaStream_t stream);

}  // namespace memlabs
