// The parts of grading that need no GPU: which hint a failing step shows,
// what grade --sanitize adds to a manifest, the order --first-failure-only takes.
#include "grading.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "lab_grader.hpp"
#include "protocol/referee_protocol.hpp"

namespace grader {
namespace {

using nlohmann::json;

Manifest manifest() {
  return parse_manifest(json::parse(R"({
    "format_version": 1, "id": "lab07", "title": "t",
    "symptom_hints": { "race": "lab: add a barrier", "edge_mismatch": "lab: guard the edges",
                       "implausibly_fast": "lab: does it do all the work?" },
    "steps": [
      { "id": 1, "title": "tile", "checks": [ { "kind": "correct", "cases": ["1x1", "64x64"] },
                                               { "kind": "sanitizer", "cases": ["1x1"] } ],
        "symptom_hints": { "mismatch": "step: check the formula", "race": "step: barrier between load and store" } },
      { "id": 2, "title": "fast", "checks": [ { "kind": "speedup", "case": "64x64", "min": 2 } ] },
      { "id": 3, "title": "fused", "checks": [ { "kind": "ptx", "kernel": "k", "must_contain": ["ld.shared"] },
                                                { "kind": "correct", "cases": ["64x64"] } ] }
    ] })"),
                        "lab.json");
}

CheckResult failing(const std::string& kind, const std::string& symptom) {
  CheckResult c;
  c.kind = check_kind_traits(kind)->kind;
  c.status = Outcome::fail;
  c.symptom = symptom_named(symptom);
  return c;
}

TEST(SymptomHint, TheCauseWinsOverWhatItCaused) {
  const Manifest m = manifest();
  // The output was wrong and racecheck saw a race: the race explains the mismatch.
  EXPECT_EQ(symptom_hint(m, m.steps[0], {failing("correct", "mismatch"), failing("sanitizer", "race")}),
            "step: barrier between load and store");
  EXPECT_EQ(symptom_hint(m, m.steps[0], {failing("correct", "mismatch")}), "step: check the formula");
}

TEST(SymptomHint, TheLabsHintServesAStepWithoutItsOwn) {
  const Manifest m = manifest();
  EXPECT_EQ(symptom_hint(m, m.steps[1], {failing("speedup", "implausibly_fast")}), "lab: does it do all the work?");
  EXPECT_EQ(symptom_hint(m, m.steps[2], {failing("correct", "edge_mismatch")}), "lab: guard the edges");
}

TEST(SymptomHint, NoHintForPassingChecksOrUnknownSymptoms) {
  const Manifest m = manifest();
  CheckResult passed = failing("sanitizer", "race");
  passed.status = Outcome::pass;
  EXPECT_EQ(symptom_hint(m, m.steps[0], {passed}), "");
  EXPECT_EQ(symptom_hint(m, m.steps[1], {failing("speedup", "noisy")}), "");
  EXPECT_EQ(symptom_hint(m, m.steps[1], {failing("speedup", "")}), "");
}

TEST(SymptomHint, PriorityPutsRacesFirstAndSpeedLast) {
  const auto& p = symptoms_closest_to_the_cause_first();
  const auto at = [&](Symptom s) { return std::find(p.begin(), p.end(), s) - p.begin(); };
  EXPECT_LT(at(Symptom::race), at(Symptom::nondeterministic));
  EXPECT_LT(at(Symptom::nondeterministic), at(Symptom::edge_mismatch));
  EXPECT_LT(at(Symptom::edge_mismatch), at(Symptom::bank_conflicts));
  EXPECT_LT(at(Symptom::bank_conflicts), at(Symptom::implausibly_fast));
}

TEST(Sanitize, AddsACheckAfterEachCorrectnessCheckThatHasNone) {
  const Manifest m = with_sanitizer_checks(manifest());
  // Step 1 had one: unchanged.
  ASSERT_EQ(m.steps[0].checks.size(), 2u);
  // Step 2 checks no correctness: nothing to sanitize.
  ASSERT_EQ(m.steps[1].checks.size(), 1u);
  // Step 3 gets one right after its correct check, on the same cases, with every tool.
  ASSERT_EQ(m.steps[2].checks.size(), 3u);
  const Check& s = m.steps[2].checks[2];
  EXPECT_EQ(s.kind, CheckKind::sanitizer);
  EXPECT_EQ(s.cases, std::vector<std::string>{"64x64"});
  EXPECT_EQ(s.tools, (std::vector<std::string>{"memcheck", "racecheck", "synccheck", "initcheck"}));
}

// A disturbed timing session ("interference") is the machine's state: it is
// run again, up to three sessions in all; any other outcome stands at once.
TEST(TimingSessions, ADisturbedSessionRunsAgainUpToThreeInAll) {
  using C = RunCategory;
  const auto sessions = [](std::vector<C> categories) {
    std::vector<int> ran;
    const RunnerOutcome out = timed_until_undisturbed([&](int session) {
      ran.push_back(session);
      RunnerOutcome o;
      o.category = categories.at(ran.size() - 1);
      return o;
    });
    return std::make_pair(ran, out.category);
  };
  EXPECT_EQ(sessions({C::ok}), std::make_pair(std::vector<int>{1}, C::ok));
  EXPECT_EQ(sessions({C::timed_failure}), std::make_pair(std::vector<int>{1}, C::timed_failure));
  EXPECT_EQ(sessions({C::interference, C::ok}), std::make_pair(std::vector<int>{1, 2}, C::ok));
  EXPECT_EQ(sessions({C::interference, C::interference, C::interference}),
            std::make_pair(std::vector<int>{1, 2, 3}, C::interference));
  EXPECT_EQ(kTimingSessions, 3);
}

// --first-failure-only takes a step's checks cheapest first: the compiler's
// evidence, the correctness run's checks, compute-sanitizer, ncu (one profile at
// a time machine-wide), then the timings (the GPU alone); the manifest's order
// within each. Only the last three have runs of their own for it to leave out.
TEST(FirstFailureOnly, TakesAStepsChecksCheapestFirst) {
  const Manifest m = parse_manifest(json::parse(R"({
    "format_version": 1, "id": "lab07", "title": "t",
    "steps": [ { "id": 1, "title": "all", "checks": [
      { "kind": "speedup", "case": "64x64", "min": 2 },
      { "kind": "ncu", "kernel": "k", "case": "64x64", "metric": "shared_loads_per_block", "min": 1 },
      { "kind": "sanitizer", "cases": ["1x1"] },
      { "kind": "correct", "cases": ["1x1"] },
      { "kind": "ptx", "kernel": "k", "must_contain": ["ld.shared"] },
      { "kind": "fraction_of_peak", "case": "64x64", "min": 0.5 },
      { "kind": "ptxas", "kernel": "k", "max_spill_bytes": 0 },
      { "kind": "api", "case": "1x1", "facts": ["sm_count"] } ] } ] })"),
                                    "lab.json");
  EXPECT_EQ(cheapest_first(m.steps[0].checks), (std::vector<std::size_t>{4, 6, 3, 7, 2, 1, 0, 5}));
  // speedup, ncu, sanitizer, correct, ptx, fraction_of_peak, ptxas, api
  const std::vector<bool> own_run = {true, true, true, false, false, true, false, false};
  for (std::size_t i = 0; i < own_run.size(); ++i)
    EXPECT_EQ(has_a_run_of_its_own(m.steps[0].checks[i].kind), own_run[i]) << name_of(m.steps[0].checks[i].kind);
  CheckResult left_out;
  EXPECT_FALSE(not_run_after_a_failure(left_out));
  left_out.data["not_run"] = "first_failure_only";
  EXPECT_TRUE(not_run_after_a_failure(left_out));
}

// A kernel that writes NaN or infinity must get a message that says so, not
// a grader that cannot read its own referee's document (JSON has no NaN).
// A step may need a newer GPU than the one grading (lab11's bulk copies need
// sm_90): the GPU's compute capability, else the arch the code is built for,
// decides; a step that names none is graded everywhere.
TEST(ComputeCapability, AStepForANewerGpuIsNotGradedOnAnOlderOne) {
  EXPECT_EQ(compute_capability_of("sm_90"), 90);
  EXPECT_EQ(compute_capability_of("sm_90a"), 90);
  EXPECT_EQ(compute_capability_of("sm_100"), 100);
  EXPECT_EQ(compute_capability_of("compute_86"), 86);
  EXPECT_FALSE(compute_capability_of("native").has_value());
  EXPECT_FALSE(compute_capability_of("sm_").has_value());
  Step bulk;
  bulk.min_compute_capability = 90;
  DeviceInfo a100, h100, none;
  a100.present = h100.present = true;
  a100.arch = "sm_80";
  h100.arch = "sm_90";
  EXPECT_EQ(compute_capability_shortfall(bulk, a100, "sm_80"), "needs compute capability 9.0; this GPU is 8.0");
  EXPECT_FALSE(compute_capability_shortfall(bulk, h100, "sm_90").has_value());
  EXPECT_FALSE(compute_capability_shortfall(bulk, h100, "sm_90a").has_value());
  // Built for an older arch on a new GPU, or without a GPU (the static checks read that build's PTX).
  EXPECT_EQ(compute_capability_shortfall(bulk, h100, "sm_80"), "needs compute capability 9.0; building for sm_80");
  EXPECT_EQ(compute_capability_shortfall(bulk, none, "sm_86"), "needs compute capability 9.0; building for sm_86");
  EXPECT_FALSE(compute_capability_shortfall(bulk, none, "sm_90").has_value());
  EXPECT_FALSE(compute_capability_shortfall(Step{}, a100, "sm_80").has_value());
  // Every check of such a step is skipped saying why, none run.
  bulk.checks = manifest().steps[0].checks;
  const auto skipped = checks_not_graded(bulk, "needs compute capability 9.0; this GPU is 8.0");
  ASSERT_EQ(skipped.size(), bulk.checks.size());
  for (const auto& c : skipped) {
    EXPECT_EQ(c.status, Outcome::skipped);
    EXPECT_FALSE(c.advisory) << "the step is not graded: it scores nothing";
    EXPECT_EQ(c.summary, "not graded: needs compute capability 9.0; this GPU is 8.0");
  }
}

TEST(ValueText, NonFiniteValuesTravelAsTextAndAreShownAsSuch) {
  const double inf = std::numeric_limits<double>::infinity();
  for (const auto& [v, text] : std::vector<std::pair<double, std::string>>{
           {std::nan(""), "nan"}, {inf, "inf"}, {-inf, "-inf"}, {0.5, "0.500000"}, {-2.0, "-2.000000"}}) {
    const json doc = json::parse(json({{"got", memlabs::value_json(v)}}).dump());
    EXPECT_EQ(value_text(doc["got"]), text) << v;
  }
  EXPECT_EQ(value_text(json()), "nan");
}

}  // namespace
}  // namespace grader
