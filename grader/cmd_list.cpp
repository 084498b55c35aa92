// grader list (also: grader alone) — every lab, how far the student is, what is next.
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>

#include "app.hpp"
#include "course.hpp"
#include "manifest.hpp"
#include "progress.hpp"
#include "terminal.hpp"

namespace grader {
namespace {

int run_list(const GlobalOptions& g) {
  // No toolkit, no GPU, no build: list must stay instant.
  const Course course = Course::discover(g.root);
  ProgressStore store(course.state_dir() / "progress.json");
  const auto warnings = store.load();
  nlohmann::json labs = nlohmann::json::array();
  std::vector<std::vector<std::string>> rows;
  for (const auto& lab : course.labs()) {
    nlohmann::json row = {{"lab", lab.folder}, {"id", lab.id}};
    try {
      const Manifest m = load_manifest(lab.dir / "lab.json");
      const LabProgress* p = store.find(lab.id);
      int passed = 0;
      const Step* next = nullptr;
      nlohmann::json steps = nlohmann::json::array();
      for (const auto& s : m.steps) {
        const bool done = p && p->steps_passed.count(s.id);
        passed += done;
        if (!done && !next) next = &s;
        steps.push_back({{"id", s.id}, {"title", s.title}, {"passed", done}});
      }
      row["title"] = m.title;
      row["steps"] = steps;
      row["passed"] = passed;
      row["next_step"] = next ? nlohmann::json(next->id) : nlohmann::json(nullptr);
      std::string status = next ? "next: step " + std::to_string(next->id) + " · " + next->title : "done";
      rows.push_back({lab.id, m.title, std::to_string(passed) + "/" + std::to_string(m.steps.size()),
                      next ? status : Style::green(status)});
    } catch (const std::exception& e) {
      row["error"] = e.what();
      rows.push_back({lab.id, lab.topic, "-", Style::red("manifest error: run grader grade " + lab.id)});
    }
    labs.push_back(row);
  }
  if (g.json) {
    std::cout << nlohmann::json{{"schema", "cuda-memory-labs/list/1"}, {"labs", labs}, {"warnings", warnings}}.dump(2) << "\n";
    return kExitPass;
  }
  for (const auto& w : warnings) std::cout << Style::yellow("note: ") << w << "\n";
  std::size_t title_width = 5;
  for (const auto& r : rows) title_width = std::max(title_width, r[1].size());
  std::cout << Style::bold("lab    " + std::string("title") + std::string(title_width - 5 + 2, ' ') + "steps  status") << "\n";
  for (const auto& r : rows)
    std::cout << std::left << std::setw(7) << r[0] << std::setw(static_cast<int>(title_width + 2)) << r[1]
              << std::setw(7) << r[2] << r[3] << "\n";
  std::cout << Style::dim("\ngrade a lab: grader lab07 · a hint: grader hint lab07") << "\n";
  return kExitPass;
}

}  // namespace

Command list_command() {
  return {"list", "Every lab with its steps and the next one to do",
          [](CLI::App&, GlobalOptions& g) -> std::function<int()> { return [&g] { return run_list(g); }; }};
}

}  // namespace grader
