#include "lab_list.hpp"

#include <algorithm>

#include "bar_chart.hpp"
#include "terminal.hpp"

namespace grader {
namespace {

constexpr int kBarWidth = 8;

std::string pad(const std::string& s, std::size_t width) {
  return s + std::string(width - std::min(width, display_width(s)), ' ');
}

std::string box(const LabListEntry& l, bool unicode) {
  if (!l.error.empty()) return Style::red(unicode ? "[✗]" : "[!]");
  if (l.steps > 0 && l.passed >= l.steps) return Style::green(unicode ? "[✓]" : "[x]");
  if (l.passed > 0) return Style::yellow("[~]");
  return "[ ]";
}

std::string steps_text(int passed, int steps) {
  return std::to_string(passed) + "/" + std::to_string(steps) + " steps";
}

std::string progress_bar(int passed, int steps, bool unicode) {
  const double fraction = steps > 0 ? static_cast<double>(passed) / steps : 0;
  return render_bar(fraction, kBarWidth, unicode, unicode ? "░" : ".");
}

}  // namespace

std::string render_lab_list(const std::vector<LabListEntry>& labs, bool unicode) {
  int passed = 0, steps = 0, done = 0;
  std::size_t id_w = 0, title_w = std::string("course").size(), steps_w = 0;
  for (const auto& l : labs) {
    id_w = std::max(id_w, display_width(l.id));
    title_w = std::max(title_w, display_width(l.title));
    if (!l.error.empty()) continue;
    passed += l.passed;
    steps += l.steps;
    done += l.steps > 0 && l.passed >= l.steps;
    steps_w = std::max(steps_w, steps_text(l.passed, l.steps).size());
  }
  steps_w = std::max(steps_w, steps_text(passed, steps).size());

  std::string out;
  for (const auto& l : labs) {
    out += box(l, unicode) + " " + pad(l.id, id_w) + "  " + pad(l.title, title_w) + "  ";
    if (!l.error.empty()) {
      out += Style::red("manifest error: run grader grade " + l.id) + "\n";
      continue;
    }
    out += pad(steps_text(l.passed, l.steps), steps_w) + "  " + progress_bar(l.passed, l.steps, unicode) + "  ";
    out += l.next_step ? "next: step " + std::to_string(l.next_step) + " · " + l.next_title : Style::green("done");
    out += "\n";
  }
  const int percent = steps > 0 ? 100 * passed / steps : 0;  // rounded down: 100 % only when all is done
  out += "\n    " + pad("", id_w) + "  " + pad("course", title_w) + "  " + pad(steps_text(passed, steps), steps_w) +
         "  " + progress_bar(passed, steps, unicode) + "  " + std::to_string(percent) + " % · " + std::to_string(done) +
         " of " + std::to_string(labs.size()) + " labs done\n";
  return out;
}

std::string next_commands(const std::vector<LabListEntry>& labs) {
  for (const auto& l : labs)
    if (l.error.empty() && l.next_step > 0) return "next: grader " + l.id + " · a hint: grader hint " + l.id;
  for (const auto& l : labs)
    if (!l.error.empty()) return "see what is wrong with " + l.id + ": grader grade " + l.id;
  return labs.empty() ? "this course has no labs" : "every step passes: grader LAB grades a lab again";
}

}  // namespace grader
