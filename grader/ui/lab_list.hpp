// `grader list` as a checklist: a box per lab ([✓] every step passed, [~] some,
// [ ] none), "3/4 steps", a small progress bar and the next step, then the
// course's total. Rendering only: cmd_list.cpp gathers the data.
#pragma once

#include <string>
#include <vector>

namespace grader {

struct LabListEntry {
  std::string id, title;
  int passed = 0, steps = 0;
  int next_step = 0;  // the first step not passed; 0 when every step passed
  std::string next_title;
  std::string error;  // lab.json does not load: said instead of the progress
};

// One line per lab and a total line; `unicode` as Style::unicode() (✓ and
// blocks, else x and '#'); colour as Style says.
std::string render_lab_list(const std::vector<LabListEntry>& labs, bool unicode);

// What to type next, for the first lab not done: "grader lab02" and its hint.
// It names a lab this course has (a class copy may hold only some).
std::string next_commands(const std::vector<LabListEntry>& labs);

}  // namespace grader
