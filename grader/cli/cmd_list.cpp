// grader list (also: grader alone) — every lab, how far the student is, what is next.
#include <iostream>
#include <nlohmann/json.hpp>

#include "app.hpp"
#include "course.hpp"
#include "json_text.hpp"
#include "lab_list.hpp"
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
  std::vector<LabListEntry> entries;
  for (const auto& lab : course.labs()) {
    nlohmann::json row = {{"lab", lab.folder}, {"id", lab.id}};
    LabListEntry entry;
    entry.id = lab.id;
    entry.title = lab.topic;  // until the manifest says
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
      entry.title = m.title;
      entry.passed = passed;
      entry.steps = static_cast<int>(m.steps.size());
      if (next) {
        entry.next_step = next->id;
        entry.next_title = next->title;
      }
    } catch (const std::exception& e) {
      row["error"] = e.what();
      entry.error = e.what();
    }
    labs.push_back(row);
    entries.push_back(entry);
  }
  if (g.json) {
    std::cout << json_text(
                     nlohmann::json{{"schema", "cuda-memory-labs/list/1"}, {"labs", labs}, {"warnings", warnings}})
              << "\n";
    return kExitPass;
  }
  for (const auto& w : warnings) std::cout << Style::yellow("note: ") << w << "\n";
  std::cout << render_lab_list(entries, Style::unicode());
  std::cout << Style::dim("\n" + next_commands(entries)) << "\n";
  return kExitPass;
}

}  // namespace

Command list_command() {
  return {"list", "Every lab with its steps and the next one to do",
          [](CLI::App&, GlobalOptions& g) -> std::function<int()> { return [&g] { return run_list(g); }; }};
}

}  // namespace grader
