// grader hint LAB [--step N] — the next hint for the current step. Hints come
// one at a time, from the concept to the code, and the grader remembers how
// many were shown (the instructor may count them).
#include <iostream>
#include <nlohmann/json.hpp>
#include <memory>

#include "app.hpp"
#include "course.hpp"
#include "manifest.hpp"
#include "progress.hpp"
#include "terminal.hpp"

namespace grader {
namespace {

struct HintOptions {
  std::string lab;
  int step = 0;
};

int run_hint(const HintOptions& o, const GlobalOptions& g) {
  const Course course = Course::discover(g.root);
  const LabInfo& lab = course.resolve(o.lab);
  const Manifest m = load_manifest(lab.dir / "lab.json");
  ProgressStore store(course.state_dir() / "progress.json");
  const auto warnings = store.load();
  LabProgress& p = store.lab(lab.id);

  const Step* step = nullptr;
  if (o.step) {
    step = m.find_step(o.step);
    if (!step) throw CourseError(lab.id + " has no step " + std::to_string(o.step) + " (it has 1.." + std::to_string(m.steps.size()) + ")");
  } else {
    for (const auto& s : m.steps)
      if (!p.steps_passed.count(s.id)) { step = &s; break; }
  }
  nlohmann::json out = {{"schema", "cuda-memory-labs/hint/1"}, {"lab", lab.folder}, {"warnings", warnings}};
  if (!step) {
    out["step"] = nullptr;
    out["hints"] = nlohmann::json::array();
    if (g.json) std::cout << out.dump(2) << "\n";
    else std::cout << "Every step of " << lab.folder << " passes: no hint needed. (grader hint " << lab.id << " --step N shows a step's hints.)\n";
    return kExitPass;
  }
  int& shown = p.hints_shown[step->id];
  const bool fresh = shown < static_cast<int>(step->hints.size());
  if (fresh) ++shown;
  store.save();

  out["step"] = step->id;
  out["total"] = step->hints.size();
  out["shown"] = shown;
  out["hints"] = std::vector<std::string>(step->hints.begin(), step->hints.begin() + shown);
  if (g.json) {
    std::cout << out.dump(2) << "\n";
    return kExitPass;
  }
  for (const auto& w : warnings) std::cout << Style::yellow("note: ") << w << "\n";
  std::cout << Style::bold(lab.id + " step " + std::to_string(step->id)) << "  " << step->title << "\n\n";
  if (step->hints.empty()) {
    std::cout << "  This step has no hints: the lesson (" << lab.folder << "/README.md) has what it needs.\n";
    return kExitPass;
  }
  for (int i = 0; i < shown; ++i) {
    const std::string label = "hint " + std::to_string(i + 1) + "/" + std::to_string(step->hints.size()) + ": ";
    const bool newest = i == shown - 1 && fresh;
    std::cout << "  " << (newest ? Style::bold(label) : Style::dim(label)) << step->hints[i] << "\n";
  }
  if (!fresh) std::cout << "\n  " << Style::dim("That is every hint for this step.") << "\n";
  return kExitPass;
}

}  // namespace

Command hint_command() {
  return {"hint", "The next hint for the step you are on",
          [](CLI::App& sub, GlobalOptions& g) -> std::function<int()> {
            auto o = std::make_shared<HintOptions>();
            sub.add_option("lab", o->lab, "the lab")->required();
            sub.add_option("--step", o->step, "a particular step instead of the current one");
            return [o, &g] { return run_hint(*o, g); };
          }};
}

}  // namespace grader
