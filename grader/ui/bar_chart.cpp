#include "bar_chart.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "terminal.hpp"
#include "text.hpp"

namespace grader {
namespace {

// A bar as `width` cells of one column each, so a marker can go between any two.
std::vector<std::string> bar_cells(double fraction, int width, bool unicode, const std::string& track) {
  static const char* const kEighths[] = {"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"};
  const std::size_t w = static_cast<std::size_t>(std::max(width, 0));
  const double f = std::isfinite(fraction) ? std::clamp(fraction, 0.0, 1.0) : 0.0;
  std::vector<std::string> cells;
  if (unicode) {
    const long eighths = std::lround(f * static_cast<double>(w) * 8);
    cells.assign(static_cast<std::size_t>(eighths / 8), "█");
    if (eighths % 8) cells.push_back(kEighths[eighths % 8]);
  } else {
    cells.assign(static_cast<std::size_t>(std::lround(f * static_cast<double>(w))), "#");
  }
  cells.resize(w, track);
  return cells;
}

// Whole units are precise enough for thousands of GB/s; a slow kernel's 4.2 GB/s keeps a decimal.
std::string value_text(double v, const std::string& unit) {
  if (!std::isfinite(v)) return "-";
  return fixed(v, std::fabs(v) < 10 ? 1 : 0) + (unit.empty() ? "" : " " + unit);
}

std::string percent_text(double v, double of) { return std::isfinite(v) ? fixed(100 * v / of, 1) + " %" : "-"; }

std::string pad_right(const std::string& s, std::size_t width) {
  return s + std::string(width - std::min(width, display_width(s)), ' ');
}

std::string pad_left(const std::string& s, std::size_t width) {
  return std::string(width - std::min(width, display_width(s)), ' ') + s;
}

struct Line {
  std::string label, bar, value, percent;
};

}  // namespace

std::string render_bar(double fraction, int width, bool unicode, const std::string& track) {
  std::string out;
  for (const auto& c : bar_cells(fraction, width, unicode, track)) out += c;
  return out;
}

std::string render_bar_chart(const std::vector<BarRow>& rows, const std::optional<Roofline>& roofline,
                             const BarChartOptions& options) {
  const bool roof = roofline && std::isfinite(roofline->value) && roofline->value > 0;
  double scale = roof ? roofline->value : 0;
  for (const auto& r : rows)
    if (std::isfinite(r.value)) scale = std::max(scale, r.value);
  const int width = std::max(options.width, 1);
  const std::size_t marker =
      roof ? static_cast<std::size_t>(std::lround(roofline->value / scale * width)) : std::string::npos;

  const auto bar = [&](double fraction) {
    std::vector<std::string> cells = bar_cells(fraction, width, options.unicode, " ");
    if (marker != std::string::npos)
      cells.insert(cells.begin() + static_cast<long>(marker), options.unicode ? "│" : "|");
    std::string out;
    for (const auto& c : cells) out += c;
    return out;
  };
  std::vector<Line> lines;
  for (const auto& r : rows)
    lines.push_back({r.label, bar(scale > 0 ? r.value / scale : 0), value_text(r.value, r.unit),
                     roof ? percent_text(r.value, roofline->value) : ""});
  // The roofline's own bar ends exactly at the marker, whatever the rounding.
  if (roof)
    lines.push_back({roofline->label, bar(static_cast<double>(marker) / width),
                     value_text(roofline->value, rows.empty() ? "" : rows.front().unit), "100.0 %"});

  std::size_t label_w = 0, value_w = 0, percent_w = 0;
  for (const auto& l : lines) {
    label_w = std::max(label_w, display_width(l.label));
    value_w = std::max(value_w, display_width(l.value));
    percent_w = std::max(percent_w, display_width(l.percent));
  }
  std::string out;
  for (const auto& l : lines) {
    out += options.indent + pad_right(l.label, label_w) + "  " + l.bar + "  " + pad_left(l.value, value_w);
    if (roof) out += "  " + pad_left(l.percent, percent_w);
    out += "\n";
  }
  return out;
}

}  // namespace grader
