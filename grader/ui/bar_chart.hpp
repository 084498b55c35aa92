// Horizontal bar charts for the terminal: how fast each kernel ran next to the
// roofline (what cudaMemcpy of the same bytes reaches, or a library's speed),
// so "62 % of memcpy" can be seen at a glance. Plain text without colour, and
// the same input always gives the same text: the width is a parameter, never
// the terminal's.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace grader {

struct BarRow {
  std::string label;
  double value = 0;
  std::string unit;  // "GB/s"
};

struct Roofline {
  std::string label;  // "memcpy"
  double value = 0;   // in the rows' unit
};

struct BarChartOptions {
  int width = 40;       // cells in a full bar
  bool unicode = true;  // eighth blocks (Style::unicode()); else '#', whole cells
  std::string indent;   // put before every line
};

// One line per row: label, bar, value with its unit and, with a roofline, the
// value as a % of it; then a last row for the roofline itself. Bars are scaled
// so the roofline fills `width` cells (without one, the largest value does),
// and a vertical marker stands at the roofline on every line. A value above
// the roofline (a kernel faster than a copy) widens the scale and its bar runs
// past the marker. Values that are negative or not finite draw no bar.
std::string render_bar_chart(const std::vector<BarRow>& rows, const std::optional<Roofline>& roofline,
                             const BarChartOptions& options);

// `fraction` (clamped to [0, 1]) of `width` cells filled, then `track` up to
// exactly `width` cells: "███▌░░░░" for 0.44 of 8 with track "░".
std::string render_bar(double fraction, int width, bool unicode, const std::string& track = " ");

}  // namespace grader
