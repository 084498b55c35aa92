#include "lesson_checks.hpp"

#include <gtest/gtest.h>

namespace grader {
namespace {

using nlohmann::json;

Manifest manifest() {
  return parse_manifest(json::parse(R"({
  "format_version": 1, "id": "lab01", "title": "Tiles",
  "steps": [
    { "id": 1, "title": "Stage a tile", "points": 3,
      "checks": [ { "kind": "ptx", "kernel": "k", "must_contain": ["ld.shared", "bar.sync"], "must_not_contain": ["ld.local"] },
                  { "kind": "correct", "cases": ["1x1", "33x7"] },
                  { "kind": "sanitizer", "cases": ["33x7"], "tools": ["memcheck"] },
                  { "kind": "ncu", "kernel": "k", "case": "64x64", "metric": "shared_loads_per_block", "min": 1 } ],
      "hints": ["Threads share a tile.", "In k, stage out in shared memory.", "Then `grader lab01` shows bar.sync."] },
    { "id": 2, "title": "Fast",
      "checks": [ { "kind": "speedup", "case": "64x64", "min": 2.5 },
                  { "kind": "ncu", "kernel": "k", "case": "64x64", "metric": "shared_bank_conflicts_per_request", "max": 0.05,
                    "fallback": { "kind": "speedup", "case": "128x128", "min": 5 } } ],
      "hints": ["Idea.", "Where.", "`grader bench lab01` shows the speed."] },
    { "id": 3, "title": "Near peak",
      "checks": [ { "kind": "fraction_of_peak", "case": "64x64", "min": 0.7 },
                  { "kind": "ptxas", "kernel": "k", "max_stack_frame": 0, "max_spill_bytes": 0, "max_registers": 64 } ],
      "hints": ["Idea.", "Where.", "`grader bench lab01` shows the bandwidth."] }
  ]})"),
                        "lab.json");
}

const char* kLesson =
    "# Lab 01\n\n## Steps\n\n### Step 1: Stage a tile\n\nHow to stage it.\n\n### Step 2: Fast\n\nWhy it is fast.\n\n"
    "### Step 3: Near peak\n\nHow near.\n\n## Going further\n";

TEST(LessonChecks, EachKindReadsWithItsThresholdInWords) {
  const Manifest m = manifest();
  EXPECT_EQ(check_in_words(m.steps[0].checks[0]),
            "`ptx`: the PTX of `k` contains `ld.shared` and `bar.sync`, and contains no `ld.local`");
  EXPECT_EQ(check_in_words(m.steps[0].checks[1]),
            "`correct`: the output matches the float64 reference on cases `1x1` and `33x7`, with fresh random inputs "
            "each grade");
  EXPECT_EQ(check_in_words(m.steps[0].checks[2]),
            "`sanitizer`: compute-sanitizer's memcheck reports no error on case `33x7`");
  EXPECT_EQ(check_in_words(m.steps[0].checks[3]),
            "`ncu`: every launch of `k` at case `64x64` has at least 1 shared-memory loads executed per block");
  EXPECT_EQ(check_in_words(m.steps[1].checks[0]), "`speedup`: at least 2.5× the baseline's speed at case `64x64`");
  EXPECT_EQ(check_in_words(m.steps[1].checks[1]),
            "`ncu`: every launch of `k` at case `64x64` has at most 0.05 bank conflicts per shared-memory request; "
            "where ncu cannot read the GPU's counters, instead `speedup`: at least 5× the baseline's speed at case "
            "`128x128`");
  EXPECT_EQ(check_in_words(m.steps[2].checks[0]),
            "`fraction_of_peak`: at least 70 % of the bandwidth of a device-to-device copy of the same bytes at case "
            "`64x64`");
  EXPECT_EQ(check_in_words(m.steps[2].checks[1]),
            "`ptxas`: for `k`, no stack frame, no spills, at most 64 registers per thread");
  Check none = m.steps[1].checks[1];
  none.metric = "shared_memory_instructions";
  none.max = 0;
  none.fallback.clear();
  EXPECT_EQ(check_in_words(none),
            "`ncu`: every launch of `k` at case `64x64` has no shared-memory loads and stores executed");
}

// A step for newer GPUs (lab11's bulk copies) says which, above its checks.
TEST(LessonChecks, AStepForNewerGpusSaysWhichAboveItsChecks) {
  Manifest m = manifest();
  m.steps[2].min_compute_capability = 90;
  const std::string block = step_checks_block(m.steps[2], {});
  const auto said = block.find("Graded on GPUs of compute capability 9.0 and later");
  ASSERT_NE(said, std::string::npos) << block;
  EXPECT_LT(said, block.find("- `fraction_of_peak`")) << block;
  EXPECT_EQ(step_checks_block(m.steps[1], {}).find("compute capability"), std::string::npos);
}

TEST(LessonChecks, WritingPutsEachListUnderItsHeadingAndTheLintThenPasses) {
  const Manifest m = manifest();
  EXPECT_EQ(lint_lesson_checks(kLesson, m).status, LintStatus::fail);
  const std::string written = with_current_checks(kLesson, m);
  EXPECT_EQ(lint_lesson_checks(written, m).status, LintStatus::pass) << written;
  EXPECT_EQ(with_current_checks(written, m), written);  // a second write changes nothing
  const std::size_t heading = written.find("### Step 2: Fast\n\n");
  ASSERT_NE(heading, std::string::npos);
  EXPECT_EQ(written.compare(heading + 18, step_checks_block(m.steps[1]).size(), step_checks_block(m.steps[1])), 0);
  EXPECT_NE(written.find("How to stage it."), std::string::npos);  // the prose stays
}

TEST(LessonChecks, AStaleListFailsUntilItIsWrittenAgain) {
  const Manifest m = manifest();
  std::string written = with_current_checks(kLesson, m);
  const std::size_t at = written.find("at least 2.5×");
  ASSERT_NE(at, std::string::npos);
  written.replace(at, 13, "at least 2×");
  const LintItem stale = lint_lesson_checks(written, m);
  EXPECT_EQ(stale.status, LintStatus::fail);
  EXPECT_NE(stale.summary.find("step 2's list of checks differs from lab.json"), std::string::npos) << stale.summary;
  EXPECT_EQ(lint_lesson_checks(with_current_checks(written, m), m).status, LintStatus::pass);
}

TEST(LessonChecks, AMissingHeadingOrATwiceListedStepFails) {
  const Manifest m = manifest();
  std::string no_heading = kLesson;
  no_heading.erase(no_heading.find("### Step 3"), 21);
  const LintItem missing = lint_lesson_checks(with_current_checks(no_heading, m), m);
  EXPECT_EQ(missing.status, LintStatus::fail);
  EXPECT_NE(missing.summary.find("step 3 has no list of checks and no \"### Step 3\" heading"), std::string::npos)
      << missing.summary;
  std::string twice = with_current_checks(kLesson, m);
  twice += step_checks_block(m.steps[0]);
  const LintItem dup = lint_lesson_checks(twice, m);
  EXPECT_EQ(dup.status, LintStatus::fail);
  EXPECT_NE(dup.summary.find("step 1 has 2 lists of checks"), std::string::npos) << dup.summary;
}

TEST(LessonChecks, TheThresholdRuleReadsTheProseNotTheGeneratedLists) {
  const Manifest m = manifest();
  const std::string written = with_current_checks(kLesson, m);
  EXPECT_EQ(lint_lesson_thresholds(written, m).status, LintStatus::pass);
  const std::string restated = written + "\nYou need at least 2.5× here.\n";
  EXPECT_EQ(lint_lesson_thresholds(restated, m).status, LintStatus::fail);
}

// What two cards' calibrations ask of step 2 (speedup 2.5 in lab.json; a bank-conflict check falling back to 5×).
ThresholdsPerGpu two_cards() {
  CalibratedCheck h100, h200, stale, fallback;
  h100.design_min = h100.min = 2.5;
  h100.reference = 3.1234;
  h200.design_min = 2.5;
  h200.min = 2.2;
  h200.reference = 2.9;
  stale.design_min = 2.0;  // made for another lab.json value: not what a grade applies
  stale.min = 1.7;
  fallback.design_min = 5;
  fallback.min = 4.4;
  ThresholdsPerGpu t;
  t["NVIDIA H100 80GB HBM3"]["step2:speedup:64x64"] = h100;
  t["NVIDIA H200"]["step2:speedup:64x64"] = h200;
  t["NVIDIA H200"]["step3:fraction_of_peak:64x64"] = stale;
  t["NVIDIA H200"]["step2:speedup:128x128"] = fallback;
  return t;
}

TEST(LessonChecks, ATimedCheckGivesEachCalibratedGpusThresholdAndReference) {
  const Manifest m = manifest();
  const ThresholdsPerGpu cards = two_cards();
  const std::string step2 = step_checks_block(m.steps[1], cards);
  EXPECT_NE(step2.find("- `speedup`: at least 2.5× the baseline's speed at case `64x64`\n  - per GPU, as `grader "
                       "calibrate` measured it there: NVIDIA H100 80GB HBM3 asks 2.5× (the reference reaches 3.12×); "
                       "NVIDIA H200 asks 2.2× (the reference reaches 2.9×)\n"),
            std::string::npos)
      << step2;
  EXPECT_NE(step2.find("  - without the counters, per GPU, as `grader calibrate` measured it there: NVIDIA H200 asks "
                       "4.4×\n"),
            std::string::npos)
      << step2;
  EXPECT_EQ(step_checks_block(m.steps[2], cards), step_checks_block(m.steps[2]))
      << "a stale value is not listed: the grade applies lab.json's";
  EXPECT_EQ(step_checks_block(m.steps[0], cards), step_checks_block(m.steps[0])) << "no timed check, no line";
}

TEST(LessonChecks, AListWrittenBeforeACalibrationChangedFailsTheLint) {
  const Manifest m = manifest();
  const std::string before = with_current_checks(kLesson, m);
  EXPECT_EQ(lint_lesson_checks(before, m, two_cards()).status, LintStatus::fail) << "a calibration was added since";
  const std::string after = with_current_checks(before, m, two_cards());
  EXPECT_EQ(lint_lesson_checks(after, m, two_cards()).status, LintStatus::pass) << after;
  EXPECT_EQ(with_current_checks(after, m, two_cards()), after);
  EXPECT_EQ(lint_lesson_checks(after, m).status, LintStatus::fail) << "a calibration was removed since";
}

}  // namespace
}  // namespace grader
