// Statistics of the timing protocol: the median of per-round ratios, a
// distribution-free confidence interval for it (order statistics of the
// binomial), and the pass / fail / undecided rule. Host-only, so the grader's
// unit tests can check it on synthetic samples.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace memlabs {

struct Interval {
  double median = 0, lo = 0, hi = 0;
  std::size_t n = 0;
  // Half-width relative to the median: 0.02 means "within ±2 %".
  double relative_half_width() const {
    if (median == 0) return INFINITY;
    return std::max(median - lo, hi - median) / std::fabs(median);
  }
};

// 95 % interval for the median: ranks n/2 ± 1.96·sqrt(n)/2 (normal
// approximation to the binomial), which needs no assumption about the
// distribution of the samples. Fewer than 6 samples give the full range.
inline Interval median_interval(std::vector<double> samples, double z = 1.96) {
  Interval r;
  r.n = samples.size();
  if (samples.empty()) return r;
  std::sort(samples.begin(), samples.end());
  const std::size_t n = samples.size();
  r.median = (n % 2) ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
  if (n < 6) {
    r.lo = samples.front();
    r.hi = samples.back();
    return r;
  }
  const double half = z * std::sqrt(static_cast<double>(n)) / 2.0;
  const double lo_rank = std::floor(n / 2.0 - half);  // 1-based ranks
  const double hi_rank = std::ceil(n / 2.0 + half) + 1;
  const auto at = [&](double rank) {
    const long k = std::clamp(static_cast<long>(rank) - 1, 0L, static_cast<long>(n) - 1);
    return samples[static_cast<std::size_t>(k)];
  };
  r.lo = at(lo_rank);
  r.hi = at(hi_rank);
  return r;
}

enum class Decision { pass, fail, undecided };

// Pass only when the whole interval clears the threshold; fail only when the
// whole interval is below it.
inline Decision decide(const Interval& i, double threshold) {
  if (i.n == 0) return Decision::undecided;
  if (i.lo >= threshold) return Decision::pass;
  if (i.hi < threshold) return Decision::fail;
  return Decision::undecided;
}

// After sampling more, an interval that still straddles the threshold is
// decided on its median, and the verdict says the machine was noisy.
struct FinalDecision {
  bool pass = false;
  bool noisy = false;
};

inline FinalDecision decide_final(const Interval& i, double threshold) {
  switch (decide(i, threshold)) {
    case Decision::pass:
      return {true, false};
    case Decision::fail:
      return {false, false};
    case Decision::undecided:
      break;
  }
  return {i.median >= threshold, true};
}

}  // namespace memlabs
