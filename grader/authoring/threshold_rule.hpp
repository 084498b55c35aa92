// How `grader calibrate` chooses one timed check's threshold on one GPU model,
// from what it measured there. A threshold keeps its meaning when:
//   - it stands as far below this card's reference as the design value stands
//     below the design card's (the design value scaled by the two references);
//   - every honest program (the solution and each `alt_*` fixture) clears it
//     with room for noise (kHonestRoom);
//   - every program that must fail it (a fixture whose expected failure is this
//     check; for a speedup, the baseline itself at 1×) misses it with the same room.
// Where the scaled value breaks the second or third rule it moves just far enough
// ("moved", saying why); where no value keeps both, the scaled value stays and
// the check is a "conflict" that `grader calibrate` reports with the numbers:
// a threshold is never loosened past a wrong program without a word. On the
// design card itself the design value stays, and a rule it breaks is a conflict.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "calibration.hpp"
#include "manifest.hpp"

namespace grader {

// An honest program's median must clear the threshold by this factor, and a
// wrong program's median must miss it by the same: one grade's median moves by
// a few percent between runs (A/A intervals on the H100: within ±2 %).
inline constexpr double kHonestRoom = 1.03;

struct ThresholdEvidence {
  CheckKind kind = CheckKind::speedup;
  double design_min = 0;
  bool design_card = false;                // this card is the one lab.json's values were chosen on
  std::optional<double> design_reference;  // the solution's median on the design card
  std::optional<double> reference;         // the solution's median on this card
  std::map<std::string, double> honest;    // every program that must pass: the solution among them
  std::map<std::string, double> failing;   // every program that must fail this check
};

// Thresholds are written with three significant digits, rounded the way that keeps the rules.
CalibratedCheck derive_threshold(const ThresholdEvidence& e);

}  // namespace grader
