// grader hint LAB [--step N] — the next hint for the current step. Hints come
// one at a time, from the concept to the code, and the grader remembers how
// many were shown (the instructor may count them).
#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "app.hpp"
#include "course.hpp"
#include "gradebook.hpp"
#include "hint_policy.hpp"
#include "json_text.hpp"
#include "manifest.hpp"
#include "progress.hpp"
#include "terminal.hpp"

namespace grader {
namespace {

struct HintOptions {
  std::string lab;
  std::optional<int> step;  // --step 0 is a step that does not exist, not "the current one"
  bool yes = false;
};

// Asks on a terminal; anywhere else, only --yes agrees to a hint that costs points.
bool agrees_to_pay(const HintOptions& o, const std::string& question) {
  if (o.yes) return true;
  if (!::isatty(STDIN_FILENO)) return false;
  std::cerr << question << " [y/N] " << std::flush;
  std::string answer;
  if (!std::getline(std::cin, answer)) return false;
  return !answer.empty() && (answer[0] == 'y' || answer[0] == 'Y');
}

// Said before a hint the student has not seen (`seen` of them so far): what
// hints cost, and where they cost points, the student's agreement. False when
// the student declines, after the hints already seen (free) are shown again.
bool cleared_to_show(const HintOptions& o, const GlobalOptions& g, const LabInfo& lab, const Step& step,
                     const HintPolicy& policy, int seen) {
  const int total = static_cast<int>(step.hints.size());
  if (seen >= total) return true;
  if (!policy.costs_points()) {
    if (!g.json) std::cout << Style::dim(policy.sentence()) << "\n\n";
    return true;
  }
  const std::string cost = "hint " + std::to_string(seen + 1) + "/" + std::to_string(total) + " of " + lab.id +
                           " step " + std::to_string(step.id) + " costs " + format_number(*policy.penalty, 3) +
                           " points in this class";
  if (agrees_to_pay(o, "The next " + cost + ". Show it?")) return true;
  if (!g.json && seen > 0) {
    std::cout << Style::bold(lab.id + " step " + std::to_string(step.id)) << "  " << step.title << "\n\n";
    for (int i = 0; i < seen; ++i)
      std::cout << "  " << Style::dim("hint " + std::to_string(i + 1) + "/" + std::to_string(total) + ": ")
                << step.hints[i] << "\n";
    std::cout << "\n";
  }
  if (g.json || !::isatty(STDIN_FILENO))
    throw CourseError("the next " + cost + ", so it was not shown without your agreement: run grader hint " + lab.id +
                      " --yes to see it");
  std::cout << "Not shown; nothing was counted.\n";
  return false;
}

// The step's hints up to the `shown`th, the newest in bold when it is new.
void print_hints(const LabInfo& lab, const Step& step, const std::vector<std::string>& warnings, int shown,
                 bool fresh) {
  const int total = static_cast<int>(step.hints.size());
  for (const auto& w : warnings) std::cout << Style::yellow("note: ") << w << "\n";
  std::cout << Style::bold(lab.id + " step " + std::to_string(step.id)) << "  " << step.title << "\n\n";
  if (step.hints.empty()) {
    std::cout << "  This step has no hints: the lesson (" << lab.folder << "/README.md) has what it needs.\n";
    return;
  }
  for (int i = 0; i < shown; ++i) {
    const std::string label = "hint " + std::to_string(i + 1) + "/" + std::to_string(total) + ": ";
    const bool newest = i == shown - 1 && fresh;
    std::cout << "  " << (newest ? Style::bold(label) : Style::dim(label)) << step.hints[i] << "\n";
  }
  if (!fresh) std::cout << "\n  " << Style::dim("That is every hint for this step.") << "\n";
}

// The step asked for with --step, else the first the student has not passed
// (nullptr when every step passes).
const Step* step_for_hint(const HintOptions& o, const Manifest& m, const LabInfo& lab, const ProgressStore& store) {
  if (o.step) {
    if (const Step* s = m.find_step(*o.step)) return s;
    throw CourseError(lab.id + " has no step " + std::to_string(*o.step) + " (it has 1.." +
                      std::to_string(m.steps.size()) + ")");
  }
  const LabProgress* p = store.find(lab.id);
  for (const auto& s : m.steps)
    if (!p || !p->steps_passed.count(s.id)) return &s;
  return nullptr;
}

int hints_seen(const ProgressStore& store, const LabInfo& lab, const Step& step) {
  const LabProgress* p = store.find(lab.id);
  if (!p) return 0;
  const auto it = p->hints_shown.find(step.id);
  return it == p->hints_shown.end() ? 0 : it->second;
}

// One more hint shown, counted under the progress lock against the file as
// it is now (two grader processes cannot lose a count). Returns how many of
// the step's hints are now shown; `fresh` says whether this one is new.
int count_hint(ProgressStore& store, const LabInfo& lab, const Step& step, bool& fresh,
               std::vector<std::string>& warnings) {
  const int total = static_cast<int>(step.hints.size());
  int shown = 0;
  const auto more = store.update([&](ProgressStore& st) {
    int& n = st.lab(lab.id).hints_shown[step.id];
    fresh = n < total;
    if (fresh) ++n;
    shown = n;
  });
  for (const auto& w : more)
    if (std::find(warnings.begin(), warnings.end(), w) == warnings.end()) warnings.push_back(w);
  return shown;
}

int run_hint(const HintOptions& o, const GlobalOptions& g) {
  const Course course = Course::discover(g.root);
  const LabInfo& lab = course.resolve(o.lab);
  const Manifest m = load_manifest(lab.dir / "lab.json");
  const HintPolicy policy = read_hint_policy(course.root());
  ProgressStore store(course.state_dir() / "progress.json");
  auto warnings = store.load();
  nlohmann::json out = {{"schema", "cuda-memory-labs/hint/1"},
                        {"lab", lab.folder},
                        {"hint_penalty", policy.penalty ? nlohmann::json(*policy.penalty) : nlohmann::json(nullptr)},
                        {"policy", policy.sentence()}};
  const Step* step = step_for_hint(o, m, lab, store);
  if (!step) {
    out["warnings"] = warnings;
    out["step"] = nullptr;
    out["hints"] = nlohmann::json::array();
    if (g.json)
      std::cout << json_text(out) << "\n";
    else
      std::cout << "Every step of " << lab.folder << " passes: no hint needed. (grader hint " << lab.id
                << " --step N shows a step's hints.)\n";
    return kExitPass;
  }
  // What it costs is said before a hint the student has not seen.
  if (!cleared_to_show(o, g, lab, *step, policy, hints_seen(store, lab, *step))) return kExitPass;
  bool fresh = false;
  const int shown = count_hint(store, lab, *step, fresh, warnings);
  out["warnings"] = warnings;
  out["step"] = step->id;
  out["total"] = step->hints.size();
  out["shown"] = shown;
  out["hints"] = std::vector<std::string>(step->hints.begin(), step->hints.begin() + shown);
  if (g.json) {
    std::cout << json_text(out) << "\n";
    return kExitPass;
  }
  print_hints(lab, *step, warnings, shown, fresh);
  return kExitPass;
}

}  // namespace

Command hint_command() {
  return {"hint", "The next hint for the step you are on", [](CLI::App& sub, GlobalOptions& g) -> std::function<int()> {
            auto o = std::make_shared<HintOptions>();
            sub.add_option("lab", o->lab, "the lab")->required();
            sub.add_option("--step", o->step, "a particular step instead of the current one");
            sub.add_flag("-y,--yes", o->yes, "agree to a hint that costs points without being asked");
            return [o, &g] { return run_hint(*o, g); };
          }};
}

}  // namespace grader
