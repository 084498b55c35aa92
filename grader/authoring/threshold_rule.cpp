#include "threshold_rule.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "text.hpp"

namespace grader {
namespace {

using Status = CalibratedCheck::Status;

// Three significant digits, rounded down (`down`) or up.
double to_digits(double v, bool down) {
  if (!(v > 0) || !std::isfinite(v)) return v;
  const double scale = std::pow(10.0, 2 - std::floor(std::log10(v)));
  return (down ? std::floor(v * scale + 1e-9) : std::ceil(v * scale - 1e-9)) / scale;
}

std::string value_text(CheckKind kind, double v) {
  return kind == CheckKind::speedup ? fixed(v, 2) + "×" : fixed(100 * v, 1) + " %";
}

// The lowest of the programs that must pass, the highest of those that must fail.
const std::pair<const std::string, double>* extreme(const std::map<std::string, double>& m, bool lowest) {
  const std::pair<const std::string, double>* out = nullptr;
  for (const auto& p : m)
    if (!out || (lowest ? p.second < out->second : p.second > out->second)) out = &p;
  return out;
}

// Step 1 of the rule: the design value, scaled by this card's reference over the
// design card's where both were measured; `c` gets the status and the words.
double scaled_target(const ThresholdEvidence& e, CalibratedCheck& c) {
  double target = e.design_min;
  if (e.design_card) {
    c.status = Status::design;
    c.why = "the design card: lab.json's value";
  } else if (e.reference && e.design_reference && *e.design_reference > 0) {
    target = e.design_min * *e.reference / *e.design_reference;
    c.status = Status::scaled;
    c.why = "the design value " + value_text(e.kind, e.design_min) +
            " times this card's reference over the design card's (" + value_text(e.kind, *e.reference) + " / " +
            value_text(e.kind, *e.design_reference) + ")";
  } else {
    c.status = Status::scaled;
    c.why = "the design value: no reference on the design card to scale it by (calibrate that card first)";
  }
  return e.kind == CheckKind::speedup ? target : std::min(target, 1.0);
}

}  // namespace

CalibratedCheck derive_threshold(const ThresholdEvidence& e) {
  CalibratedCheck c;
  c.design_min = e.design_min;
  c.reference = e.reference;
  c.honest = e.honest;
  c.failing = e.failing;
  // A speedup the baseline itself reaches (1×) tells nothing apart.
  std::map<std::string, double> failing = e.failing;
  if (e.kind == CheckKind::speedup) failing.emplace("the baseline itself", 1.0);
  const double target = scaled_target(e, c);

  const auto* low = extreme(e.honest, true);
  const auto* high = extreme(failing, false);
  const double hi = low ? low->second / kHonestRoom : std::numeric_limits<double>::infinity();
  const double lo = high ? high->second * kHonestRoom : 0;
  const std::string room = fixed(100 * (kHonestRoom - 1), 0) + " %";
  const auto honest_words = [&] { return low->first + " reaches " + value_text(e.kind, low->second); };
  const auto failing_words = [&] { return high->first + " reaches " + value_text(e.kind, high->second); };

  if (lo > hi) {
    c.status = Status::conflict;
    c.min = to_digits(target, false);
    c.why = "no threshold keeps every honest program " + room + " above it and every wrong one " + room +
            " below it: " + honest_words() + ", " + failing_words() + "; " + c.why + " stays";
    return c;
  }
  if (target > hi || target < lo) {
    const bool too_high = target > hi;
    const std::string broken = too_high ? honest_words() + ", which must pass with " + room + " room"
                                        : failing_words() + ", which must fail by " + room;
    if (e.design_card) {
      c.status = Status::conflict;
      c.min = e.design_min;
      c.why = "lab.json's value " + value_text(e.kind, e.design_min) + " on its own design card: " + broken;
      return c;
    }
    c.status = Status::moved;
    c.min = too_high ? to_digits(hi, true) : to_digits(lo, false);
    c.why = "moved from " + value_text(e.kind, target) + " (" + c.why + "): " + broken;
    return c;
  }
  // Rounded to three digits, still inside what the programs allow.
  c.min = e.design_card ? e.design_min : to_digits(target, true);
  if (c.min < lo) c.min = to_digits(target, false);
  return c;
}

}  // namespace grader
