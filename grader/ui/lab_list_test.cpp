#include "lab_list.hpp"

#include <gtest/gtest.h>

using namespace grader;

namespace {

LabListEntry lab(const std::string& id, const std::string& title, int passed, int steps, int next_step = 0,
                 const std::string& next_title = "") {
  LabListEntry e;
  e.id = id;
  e.title = title;
  e.passed = passed;
  e.steps = steps;
  e.next_step = next_step;
  e.next_title = next_title;
  return e;
}

std::vector<LabListEntry> course() {
  LabListEntry broken;
  broken.id = "lab09";
  broken.title = "broken";
  broken.error = "lab.json: expected an object";
  return {lab("lab00", "Know your GPU", 3, 3), lab("lab01", "Registers", 1, 2, 2, "Keep it in registers"),
          lab("lab02", "Global memory", 0, 3, 1, "Coalesce"), lab("lab03", "Unified", 1, 3, 2, "Prefetch"), broken};
}

}  // namespace

TEST(LabList, AChecklistWithProgressBarsAndACourseTotal) {
  // 5 of 11 steps is 45.45 %: the total rounds down, so 100 % means done.
  EXPECT_EQ(render_lab_list(course(), true),
            "[✓] lab00  Know your GPU  3/3 steps   ████████  done\n"
            "[~] lab01  Registers      1/2 steps   ████░░░░  next: step 2 · Keep it in registers\n"
            "[ ] lab02  Global memory  0/3 steps   ░░░░░░░░  next: step 1 · Coalesce\n"
            "[~] lab03  Unified        1/3 steps   ██▋░░░░░  next: step 2 · Prefetch\n"
            "[✗] lab09  broken         manifest error: run grader grade lab09\n"
            "\n"
            "           course         5/11 steps  ███▋░░░░  45 % · 1 of 5 labs done\n");
}

TEST(LabList, AsciiMarksAndBarsWhenTheTerminalIsNotUtf8) {
  EXPECT_EQ(render_lab_list(course(), false),
            "[x] lab00  Know your GPU  3/3 steps   ########  done\n"
            "[~] lab01  Registers      1/2 steps   ####....  next: step 2 · Keep it in registers\n"
            "[ ] lab02  Global memory  0/3 steps   ........  next: step 1 · Coalesce\n"
            "[~] lab03  Unified        1/3 steps   ###.....  next: step 2 · Prefetch\n"
            "[!] lab09  broken         manifest error: run grader grade lab09\n"
            "\n"
            "           course         5/11 steps  ####....  45 % · 1 of 5 labs done\n");
}

TEST(LabList, EveryStepPassedIsAHundredPercent) {
  EXPECT_EQ(render_lab_list({lab("lab00", "Know your GPU", 3, 3), lab("lab01", "Registers", 2, 2)}, true),
            "[✓] lab00  Know your GPU  3/3 steps  ████████  done\n"
            "[✓] lab01  Registers      2/2 steps  ████████  done\n"
            "\n"
            "           course         5/5 steps  ████████  100 % · 2 of 2 labs done\n");
}

TEST(LabList, AnEmptyCourseStillHasATotal) {
  EXPECT_EQ(render_lab_list({}, true), "\n      course  0/0 steps  ░░░░░░░░  0 % · 0 of 0 labs done\n");
}

TEST(LabList, TheNextCommandsNameTheFirstLabNotDone) {
  EXPECT_EQ(next_commands(course()), "next: grader lab01 · a hint: grader hint lab01");
  // A class copy of lab02 alone names lab02, not a lab it does not have.
  EXPECT_EQ(next_commands({lab("lab02", "Global memory", 0, 3, 1, "Coalesce")}),
            "next: grader lab02 · a hint: grader hint lab02");
  LabListEntry broken;
  broken.id = "lab09";
  broken.error = "lab.json: expected an object";
  EXPECT_EQ(next_commands({lab("lab00", "Know your GPU", 3, 3), broken}),
            "see what is wrong with lab09: grader grade lab09");
  EXPECT_EQ(next_commands({lab("lab00", "Know your GPU", 3, 3)}), "every step passes: grader LAB grades a lab again");
  EXPECT_EQ(next_commands({}), "this course has no labs");
}
