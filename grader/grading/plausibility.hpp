// Whether a timed result is more than the hardware allows: faster than a plain
// copy of the bytes the kernel must move, far faster than the library (cuBLAS,
// CUB) on the same problem, or more floating-point work per second than the
// GPU's peak. Such a result means work was skipped or done elsewhere; it fails
// however the other numbers look.
#pragma once

#include <optional>
#include <string>

#include "protocol/referee_protocol.hpp"

namespace grader {

inline constexpr double kCopyMargin = 1.15;    // timing noise allows a little above a plain copy
inline constexpr double kLibraryMargin = 1.5;  // a hand-written kernel may beat the library, not by this much
inline constexpr double kPeakMargin = 1.05;    // the peak counts every lane busy every cycle

// The sentence saying why, for a timing session's report; nullopt when plausible.
std::optional<std::string> implausible(const memlabs::TimingReport& timing);

}  // namespace grader
