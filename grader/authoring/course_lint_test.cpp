#include "course_lint.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "grading.hpp"
#include "lesson_checks.hpp"
#include "options.hpp"

namespace grader {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const char* kManifest = R"({
  "format_version": 1, "id": "lab01", "title": "Tiles",
  "steps": [
    { "id": 1, "title": "Stage a tile", "checks": [ { "kind": "ptx", "kernel": "k", "must_contain": ["bar.sync"] },
                                                  { "kind": "correct", "cases": ["1x1"] } ],
      "hints": ["Threads share a tile.", "In k, stage out in shared memory.", "Then `grader lab01` shows bar.sync."] },
    { "id": 2, "title": "Fast", "checks": [ { "kind": "speedup", "case": "64x64", "min": 2.5 } ],
      "hints": ["Idea.", "Where.", "`grader bench lab01` shows the speed."] },
    { "id": 3, "title": "Near peak", "checks": [ { "kind": "fraction_of_peak", "case": "64x64", "min": 0.7 } ],
      "hints": ["Idea.", "Where.", "`grader bench lab01` shows the bandwidth."] }
  ]})";

// The lesson as an author writes it; readme() adds each step's generated list of checks.
const char* kLessonText =
    "# Lab 01\n\n## Why it matters\n\ntext\n\n## What the hardware does\n\n```\n## not a heading\n```\n\n"
    "## Your task\n\n## Steps\n\n### Step 1: Stage a tile\n\n### Step 2: Fast\n\n### Step 3: Near peak\n\n"
    "## Going further\n";

const char* kSkeleton =
    "#include \"lab.cuh\"\n"
    "__global__ void k(float* out) {\n"
    "  // TODO(step 1): stage out through a __shared__ tile with a __syncthreads() (~3 lines)\n"
    "  out[0] = 1;\n"
    "}\n"
    "\n"
    "void launch(float* out) { k<<<1, 1>>>(out); }\n";

const char* kSolution =
    "#include \"lab.cuh\"\n"
    "__global__ void k(float* out) {\n"
    "  __shared__ float tile[1];\n"
    "  tile[0] = 1;\n"
    "  __syncthreads();\n"
    "  out[0] = tile[0];\n"
    "}\n"
    "\n"
    "void launch(float* out) { k<<<1, 1>>>(out); }\n";

Manifest manifest() { return parse_manifest(json::parse(kManifest), "lab.json"); }
std::string readme() { return with_current_checks(kLessonText, manifest()); }

// A course of one lab in a fresh temporary folder; tests break one thing each.
class TempCourse : public ::testing::Test {
 protected:
  void SetUp() override {
    static int n = 0;
    root = fs::temp_directory_path() / ("course_lint_test-" + std::to_string(getpid()) + "-" + std::to_string(n++));
    lab = root / "labs" / "lab01-tiles";
    fs::create_directories(lab);
    fs::create_directories(root / "solutions" / "lab01-tiles");
    fs::create_directories(root / "tests" / "fixtures" / "lab01-tiles");
    write(root / "syllabus.md", "| lab01 | tiles |\n");
    write(lab / "README.md", readme());
    write(lab / "lab.json", kManifest);
    write(lab / "lab.cuh", "#pragma once\n");
    write(lab / "kernel.cu", kSkeleton);
    write(lab / "driver.cu", "// driver\n");
    write(root / "solutions" / "lab01-tiles" / "kernel.cu", kSolution);
    write(root / "tests" / "fixtures" / "lab01-tiles" / "empty.cu", "// expect: step 1 fails: ptx\n");
  }
  void TearDown() override { fs::remove_all(root); }

  static void write(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

  LabLint lint() {
    const Course c = Course::open(root);
    return lint_lab_sources(read_lab_sources(c, c.labs().at(0)));
  }
  static const LintItem& find(const LabLint& l, const std::string& id) {
    for (const auto& i : l.items)
      if (i.id == id) return i;
    throw std::runtime_error("no item " + id);
  }
  static std::vector<std::string> failing(const LabLint& l) {
    std::vector<std::string> ids;
    for (const auto& i : l.items)
      if (i.status == LintStatus::fail) ids.push_back(i.id);
    return ids;
  }

  fs::path root, lab;
};

TEST_F(TempCourse, AGoodLabHasNoFailingItem) {
  const LabLint l = lint();
  EXPECT_TRUE(failing(l).empty()) << json(failing(l)).dump();
  EXPECT_FALSE(l.manifest_error);
  EXPECT_EQ(find(l, "todo_markers").status, LintStatus::pass);
  EXPECT_NE(find(l, "todo_markers").summary.find("steps 2, 3 need no code of their own"), std::string::npos)
      << find(l, "todo_markers").summary;
  EXPECT_EQ(find(l, "fixture:empty").summary, "expect: step 1 fails: ptx");
}

TEST_F(TempCourse, AMissingFileFails) {
  fs::remove(lab / "driver.cu");
  const LabLint l = lint();
  EXPECT_EQ(failing(l), std::vector<std::string>{"files"});
  EXPECT_EQ(find(l, "files").summary, "lacks driver.cu");
}

TEST_F(TempCourse, AMissingSolutionFailsButAPublishedCopySkips) {
  fs::remove(root / "solutions" / "lab01-tiles" / "kernel.cu");
  LabLint l = lint();
  EXPECT_EQ(find(l, "solution").status, LintStatus::fail);
  EXPECT_EQ(find(l, "todo_solution").status, LintStatus::skip);
  fs::remove_all(root / "solutions");
  l = lint();
  EXPECT_TRUE(failing(l).empty()) << json(failing(l)).dump();
  EXPECT_EQ(find(l, "solution").status, LintStatus::skip);
  EXPECT_NE(find(l, "solution").summary.find("published"), std::string::npos);
}

TEST_F(TempCourse, AMalformedManifestIsAManifestError) {
  write(lab / "lab.json", R"({"format_version": 1, "id": "lab01", "title": "t", "steps": []})");
  const LabLint l = lint();
  EXPECT_TRUE(l.manifest_error);
  EXPECT_EQ(find(l, "manifest").status, LintStatus::fail);
  EXPECT_NE(find(l, "manifest").details.at(0).find("at least one step"), std::string::npos);
  CourseLint c;
  c.labs.push_back(l);
  EXPECT_EQ(lint_exit_code(c, false), kExitUsage);
}

TEST_F(TempCourse, SectionsOutOfOrderFail) {
  std::string r = readme();
  r.replace(r.find("## Your task"), 12, "## Steps");
  r.replace(r.rfind("## Steps"), 8, "## Your task");
  write(lab / "README.md", r);
  const LabLint l = lint();
  EXPECT_EQ(failing(l), std::vector<std::string>{"lesson_sections"});
  EXPECT_NE(find(l, "lesson_sections")
                .summary.find("in the order Why it matters · What the hardware does · Steps · Your task"),
            std::string::npos)
      << find(l, "lesson_sections").summary;
}

TEST_F(TempCourse, AMissingOrRepeatedSectionFails) {
  std::string r = readme();
  r.replace(r.find("## Going further"), 16, "## Further");
  EXPECT_NE(lint_lesson_sections(r).summary.find("no \"## Going further\" section"), std::string::npos);
  EXPECT_EQ(lint_lesson_sections(readme() + "## Steps\n").status, LintStatus::fail);
}

TEST_F(TempCourse, AStrayHunkIsReportedWithItsLineAndText) {
  std::string s = kSolution;
  s.replace(s.find("k<<<1, 1>>>"), 11, "k<<<2, 1>>>");
  write(root / "solutions" / "lab01-tiles" / "kernel.cu", s);
  const LabLint l = lint();
  EXPECT_EQ(failing(l), std::vector<std::string>{"stray_hunks"});
  const auto& i = find(l, "stray_hunks");
  EXPECT_NE(i.summary.find("the first at line 7"), std::string::npos) << i.summary;
  ASSERT_EQ(i.details.size(), 3u);
  EXPECT_EQ(i.details[0], "kernel.cu line 7:");
  EXPECT_EQ(i.details[1], "  - void launch(float* out) { k<<<1, 1>>>(out); }");
  EXPECT_EQ(i.details[2], "  + void launch(float* out) { k<<<2, 1>>>(out); }");
}

// "teaches" names kinds of red flag; a misspelt one would silently leave the flags in.
TEST_F(TempCourse, ALabTeachesOnlyKindsOfRedFlagThatExist) {
  json m = json::parse(kManifest);
  m["teaches"] = {"streams"};
  write(lab / "lab.json", m.dump());
  EXPECT_EQ(find(lint(), "manifest").status, LintStatus::pass);
  m["teaches"] = {"stream"};
  write(lab / "lab.json", m.dump());
  const LintItem i = find(lint(), "manifest");
  EXPECT_EQ(i.status, LintStatus::fail);
  EXPECT_EQ(i.summary, "lab.json teaches \"stream\", which is no kind of red flag");
}

// The hostile tester's finds: a free hint that pastes the fix, a driver whose
// baseline is the answer. A paid hint may show code.
TEST_F(TempCourse, AFreeHintOrALabFileHoldingAStepsFixFails) {
  EXPECT_EQ(find(lint(), "fixes_not_given").status, LintStatus::pass);
  json m = json::parse(kManifest);
  m["steps"][0]["hints"][2] = "Then `grader lab01` shows bar.sync: out[0] = tile[0];";
  write(lab / "lab.json", m.dump());
  EXPECT_EQ(find(lint(), "fixes_not_given").status, LintStatus::pass) << "a paid hint may show the code";
  m["steps"][0]["symptom_hints"] = {{"race", "Read the tile after the barrier: out[0] = tile[0];"}};
  write(lab / "lab.json", m.dump());
  LabLint l = lint();
  EXPECT_EQ(failing(l), std::vector<std::string>{"fixes_not_given"});
  EXPECT_EQ(find(l, "fixes_not_given").summary,
            "the free symptom hint \"race\" of step 1 states step 1's fix (the solution's code for the TODO region "
            "at line 3 of the skeleton) of solutions/lab01-tiles/kernel.cu");

  write(lab / "lab.json", kManifest);
  write(lab / "driver.cu", std::string("// the baseline\n") + kSolution);
  l = lint();
  EXPECT_EQ(failing(l), std::vector<std::string>{"fixes_not_given"});
  EXPECT_EQ(find(l, "fixes_not_given").summary.rfind("labs/lab01-tiles/driver.cu holds step 1's fix", 0), 0u)
      << find(l, "fixes_not_given").summary;
}

// A symptom hint is shown to every student whose check fails that way: its
// numbers are held to the lesson's cited rows as a hint's are.
TEST_F(TempCourse, ASymptomHintsNumberNeedsARowTheLessonCites) {
  json m = json::parse(kManifest);
  m["steps"][0]["symptom_hints"] = {{"race", "A racy tile ran 2.5x slower on our H100."}};
  m["symptom_hints"] = {{"mismatch", "Our fixtures were off by 40 %."}};
  write(lab / "lab.json", m.dump());
  const LabLint l = lint();
  EXPECT_EQ(failing(l), std::vector<std::string>{"lesson_numbers"});
  const auto& i = find(l, "lesson_numbers");
  ASSERT_GE(i.details.size(), 2u);
  EXPECT_EQ(i.details[0].rfind("lab.json step 1 symptom hint race: 2.5 x", 0), 0u) << i.details[0];
  EXPECT_EQ(i.details[1].rfind("symptom hint mismatch: 40 %", 0), 0u) << i.details[1];
}

TEST_F(TempCourse, AMarkerForAMissingStepFails) {
  std::string sk = kSkeleton;
  sk.replace(sk.find("step 1)"), 6, "step 9");
  write(lab / "kernel.cu", sk);
  const LabLint l = lint();
  const auto& i = find(l, "todo_markers");
  EXPECT_EQ(i.status, LintStatus::fail);
  EXPECT_NE(i.summary.find("kernel.cu:3: the marker names step 9, which lab.json does not have (steps: 1, 2, 3)"),
            std::string::npos)
      << i.summary;
}

TEST_F(TempCourse, AMalformedMarkerFails) {
  std::string sk = kSkeleton;
  sk.replace(sk.find(" (~3 lines)"), 11, "");
  write(lab / "kernel.cu", sk);
  const LabLint l = lint();
  const auto& i = find(l, "todo_markers");
  EXPECT_EQ(i.status, LintStatus::fail);
  EXPECT_NE(i.summary.find("kernel.cu:3: malformed marker"), std::string::npos) << i.summary;
}

TEST_F(TempCourse, AMarkerTheSolutionDoesNotFillFails) {
  // The solution drops the step 2 marker but writes no code for it.
  const std::string sk =
      std::string(kSkeleton) +
      "\n__device__ void unroll(float* out) {\n  // TODO(step 2): unroll the copy by four (~4 lines)\n"
      "  out[1] = 2;\n}\n";
  const std::string so =
      std::string(kSolution) + "\n__device__ void unroll(float* out) {\n  // unrolled by four\n  out[1] = 2;\n}\n";
  write(lab / "kernel.cu", sk);
  write(root / "solutions" / "lab01-tiles" / "kernel.cu", so);
  const LabLint l = lint();
  EXPECT_EQ(failing(l), std::vector<std::string>{"todo_solution"});
  EXPECT_NE(
      find(l, "todo_solution").summary.find("kernel.cu:10: step 2 has a marker, but the solution changes no code"),
      std::string::npos)
      << find(l, "todo_solution").summary;
}

TEST_F(TempCourse, ASolutionThatKeepsAMarkerFails) {
  write(root / "solutions" / "lab01-tiles" / "kernel.cu", std::string(kSolution) + "// TODO(step 1): x (~1 line)\n");
  EXPECT_EQ(find(lint(), "todo_solution").status, LintStatus::fail);
}

TEST_F(TempCourse, AFixtureWithAMalformedExpectationFails) {
  write(root / "tests" / "fixtures" / "lab01-tiles" / "bad.cu", "// expect: step 1 breaks\n");
  write(root / "tests" / "fixtures" / "lab01-tiles" / "none.cu", "__global__ void k() {}\n");
  write(root / "tests" / "fixtures" / "lab01-tiles" / "nostep.cu", "// expect: step 4 fails: correct\n");
  write(root / "tests" / "fixtures" / "lab01-tiles" / "nokind.cu", "// expect: step 2 fails: ptx\n");
  const LabLint l = lint();
  EXPECT_EQ(failing(l), (std::vector<std::string>{"fixture:bad", "fixture:nokind", "fixture:none", "fixture:nostep"}));
  EXPECT_NE(find(l, "fixture:bad").summary.find("cannot read the expectation \"step 1 breaks\""), std::string::npos);
  EXPECT_NE(find(l, "fixture:none").summary.find("has no \"// expect: \" line"), std::string::npos);
  EXPECT_NE(find(l, "fixture:nostep").summary.find("names step 4"), std::string::npos);
  EXPECT_NE(find(l, "fixture:nokind").summary.find("step 2 checks only speedup"), std::string::npos);
  CourseLint c;
  c.labs.push_back(l);
  EXPECT_EQ(lint_exit_code(c, false), kExitStepFailed);
}

TEST(Hints, ALadderOfThreeNamingItsEvidenceAndNotPastingTheAnswer) {
  Manifest m = manifest();
  EXPECT_EQ(lint_hints(m).status, LintStatus::pass) << lint_hints(m).summary;
  m.steps[1].hints.pop_back();  // two rungs, and no command left
  m.steps[2].hints.back() = "`grader bench` then: float x = 1; x += 2; out[i] = x;";
  const LintItem i = lint_hints(m);
  EXPECT_EQ(i.status, LintStatus::fail);
  EXPECT_EQ(i.details, (std::vector<std::string>{
                           "step 2 has 2 hints; a step needs at least 3 (idea, where, how)",
                           "step 2: no hint names the command that shows the evidence (grader , nvcc, ncu, "
                           "compute-sanitizer, cuobjdump)",
                           "step 3's last hint holds 3 statements of code: it should guide, not paste the answer"}));
}

TEST(LessonThresholds, FlagsARestatedThreshold) {
  const Manifest m = manifest();
  for (const char* line :
       {"Step 2 passes at a speedup of at least 2.5×.", "the threshold is 2.5x", "needs ≥ 2.50× over the baseline",
        "at least 70 % of memcpy bandwidth", "a fraction of at least 0.70", "Minimum: 70%"}) {
    const LintItem i = lint_lesson_thresholds(std::string("intro\n") + line + "\n", m);
    EXPECT_EQ(i.status, LintStatus::fail) << line;
    ASSERT_FALSE(i.details.empty());
    EXPECT_EQ(i.details[0].rfind("README.md:2: ", 0), 0u) << i.details[0];
  }
}

TEST(LessonThresholds, LeavesOrdinaryProseAlone) {
  const Manifest m = manifest();
  for (const char* line : {"it is 2.5× faster on an H100",  // no threshold word
                           "needs ≥ T× (the threshold in lab.json)", "at least 256 bytes", "at least 2 loads",
                           "the threshold at 8192x8192 and sm_90", "at least 3.0× (no check has that min)",
                           "at least 70 ms of GPU time", "lab25 at least"}) {
    const LintItem i = lint_lesson_thresholds(std::string(line) + "\n", m);
    EXPECT_EQ(i.status, LintStatus::pass) << line << ": " << (i.details.empty() ? "" : i.details[0]);
  }
}

TEST(MarginItem, PassesFailsOrWarns) {
  const Manifest m = manifest();
  const Check& speedup = m.steps[1].checks[0];
  const Check& peak = m.steps[2].checks[0];
  LintItem i = margin_item(2, speedup, 3.5, 1.25);
  EXPECT_EQ(i.status, LintStatus::pass);
  EXPECT_EQ(i.id, "margin:step2:speedup:64x64");
  EXPECT_NE(i.summary.find("3.50× against a threshold of 2.50×, a margin of 1.40×"), std::string::npos) << i.summary;
  EXPECT_EQ(margin_item(2, speedup, 3.0, 1.25).status, LintStatus::fail);
  EXPECT_EQ(margin_item(3, peak, 0.8, 1.25).status, LintStatus::warn);
  EXPECT_EQ(margin_item(3, peak, 0.9, 1.25).status, LintStatus::pass);
}

// The solution's grade of kManifest: step 2's speedup and step 3's fraction of
// peak read one timing session of 64x64 (each check carries its whole report).
GradeReport timed_solution(double speedup, double fraction) {
  const json timing = {{"rounds", 6},
                       {"speedup", {{"median", speedup}, {"lo", speedup}, {"hi", speedup}, {"n", 6}}},
                       {"fraction_of_peak", {{"median", fraction}, {"lo", fraction}, {"hi", fraction}, {"n", 6}}}};
  GradeReport r;
  r.steps = {{1, "Stage a tile", 1, Outcome::pass, {CheckResult{}, CheckResult{}}, ""},
             {2, "Fast", 1, Outcome::pass, {CheckResult{}}, ""},
             {3, "Near peak", 1, Outcome::pass, {CheckResult{}}, ""}};
  r.steps[1].checks[0].kind = CheckKind::speedup;
  r.steps[1].checks[0].data = timing;
  r.steps[2].checks[0].kind = CheckKind::fraction_of_peak;
  r.steps[2].checks[0].data = timing;
  return r;
}

TEST(MarginItems, ReadEachThresholdFromTheSolutionsOwnTiming) {
  const GradeReport r = timed_solution(3.5, 0.8);
  const std::vector<LintItem> items = margin_items(manifest(), &r, 1.25);
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0].id, "margin:step2:speedup:64x64");
  EXPECT_EQ(items[0].status, LintStatus::pass);
  EXPECT_NE(items[0].summary.find("3.50×"), std::string::npos) << items[0].summary;
  EXPECT_EQ(items[1].id, "margin:step3:fraction_of_peak:64x64");
  EXPECT_EQ(items[1].status, LintStatus::warn) << items[1].summary;

  const GradeReport slow = timed_solution(2.6, 0.9);
  EXPECT_EQ(margin_items(manifest(), &slow, 1.25)[0].status, LintStatus::fail);
  EXPECT_EQ(margin_items(manifest(), &slow, 1.25)[1].status, LintStatus::pass);
}

TEST(MarginItems, FailWhereTheSolutionsGradeTimedNothing) {
  // No report at all, and a grade whose timing failed (its check carries no timing report).
  GradeReport untimed = timed_solution(3.5, 0.9);
  untimed.steps[1].checks[0].data = json::object();
  untimed.steps[2].checks[0].data = json::object();
  for (const GradeReport* r : std::initializer_list<const GradeReport*>{nullptr, &untimed}) {
    const std::vector<LintItem> items = margin_items(manifest(), r, 1.25);
    ASSERT_EQ(items.size(), 2u);
    for (const auto& i : items) {
      EXPECT_EQ(i.status, LintStatus::fail) << i.id;
      EXPECT_NE(i.summary.find("has no timing of 64x64"), std::string::npos) << i.summary;
    }
  }
}

TEST(MarginItems, AFallbackReadsTheTimingOfItsCase) {
  // lab07's shape: an ncu check whose fallback is a speedup on the case step 1 already times.
  const Manifest m = parse_manifest(json::parse(R"({
    "format_version": 1, "id": "lab01", "title": "Tiles",
    "steps": [
      { "id": 1, "title": "Fast", "checks": [ { "kind": "speedup", "case": "64x64", "min": 2.0 } ],
        "hints": ["a", "b", "c"] },
      { "id": 2, "title": "No conflicts", "checks": [
          { "kind": "ncu", "kernel": "k", "case": "64x64", "metric": "shared_loads_per_block", "min": 1,
            "fallback": { "kind": "speedup", "case": "64x64", "min": 3.0 } } ],
        "hints": ["a", "b", "c"] }
    ]})"),
                                    "lab.json");
  GradeReport r;
  r.steps = {{1, "Fast", 1, Outcome::pass, {CheckResult{}}, ""},
             {2, "No conflicts", 1, Outcome::pass, {CheckResult{}}, ""}};
  r.steps[0].checks[0].kind = CheckKind::speedup;
  r.steps[0].checks[0].data = {{"rounds", 6}, {"speedup", {{"median", 4.0}, {"lo", 3.9}, {"hi", 4.1}, {"n", 6}}}};
  r.steps[1].checks[0].kind = CheckKind::ncu;  // ncu ran: the fallback's case is still timed by step 1
  const std::vector<LintItem> items = margin_items(m, &r, 1.25);
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0].id, "margin:step1:speedup:64x64");
  EXPECT_EQ(items[0].status, LintStatus::pass);
  EXPECT_EQ(items[1].id, "margin:step2:speedup:64x64");
  EXPECT_EQ(items[1].status, LintStatus::pass) << items[1].summary;  // 4.0 over 3.0: 1.33×
}

TEST(CourseLintJson, HasTheDocumentedShapeAndExitCodes) {
  CourseLint c;
  c.root = "/course";
  c.arch = "sm_90";
  c.gpu = nullptr;
  LabLint l;
  l.lab = "lab01-tiles";
  l.items.push_back({"files", LintStatus::pass, "has them", {}});
  l.items.push_back({"solution", LintStatus::skip, "published", {}});
  c.labs.push_back(l);
  c.skipped.push_back({"GPU checks", "--static-only"});
  EXPECT_EQ(lint_exit_code(c, false), kExitPass);
  EXPECT_EQ(lint_exit_code(c, true), kExitEnvironment);
  c.labs[0].items.push_back({"stray_hunks", LintStatus::fail, "x", {"kernel.cu line 3:"}});
  EXPECT_EQ(lint_exit_code(c, true), kExitStepFailed);
  c.exit_code = lint_exit_code(c, false);
  const json j = lint_to_json(c);
  EXPECT_EQ(j["schema"], "cuda-memory-labs/check/1");
  EXPECT_EQ(j["arch"], "sm_90");
  EXPECT_TRUE(j["gpu"].is_null());
  EXPECT_EQ(j["labs"][0]["lab"], "lab01-tiles");
  EXPECT_EQ(j["labs"][0]["ok"], false);
  EXPECT_EQ(j["labs"][0]["items"][2]["details"][0], "kernel.cu line 3:");
  EXPECT_EQ(j["skipped"][0]["why"], "--static-only");
  EXPECT_EQ(j["counts"]["fail"], 1);
  EXPECT_EQ(j["counts"]["skip"], 1);
  EXPECT_EQ(j["exit_code"], 1);
}

TEST(CourseLint, SymptomHintsMustNameASymptomAChecksReports) {
  json j = json::parse(kManifest);
  j["symptom_hints"] = {{"race", "add a barrier"}};
  j["steps"][0]["symptom_hints"] = {{"mismatch", "look at the guards"}};
  EXPECT_EQ(lint_symptom_hints(parse_manifest(j, "lab.json")).status, LintStatus::pass);
  j["steps"][0]["symptom_hints"]["bank_conflict"] = "pad";  // the symptom is bank_conflicts
  const LintItem bad = lint_symptom_hints(parse_manifest(j, "lab.json"));
  EXPECT_EQ(bad.status, LintStatus::fail);
  ASSERT_EQ(bad.details.size(), 1u);
  EXPECT_NE(bad.details[0].find("step 1 symptom_hints: \"bank_conflict\""), std::string::npos) << bad.details[0];
}

TEST(CourseLint, AnNcuCheckAloneNeedsAFallback) {
  json j = json::parse(kManifest);
  j["steps"][1]["checks"] = json::array({{{"kind", "ncu"},
                                          {"kernel", "k"},
                                          {"case", "64x64"},
                                          {"metric", "shared_bank_conflicts_per_request"},
                                          {"max", 0}}});
  EXPECT_EQ(lint_symptom_hints(parse_manifest(j, "lab.json")).status, LintStatus::fail);
  j["steps"][1]["checks"][0]["fallback"] = {{"kind", "speedup"}, {"case", "64x64"}, {"min", 2}};
  EXPECT_EQ(lint_symptom_hints(parse_manifest(j, "lab.json")).status, LintStatus::pass);
}

// The GPUs a check spreads over, named as the driver reads CUDA_VISIBLE_DEVICES:
// by this process's own entries where it has some, else by index.
TEST(CheckGpus, NamesEachGpuAsTheDriverWouldReadIt) {
  EXPECT_EQ(check_gpus(1, nullptr), std::vector<std::string>{"0"});
  EXPECT_EQ(check_gpus(2, nullptr), (std::vector<std::string>{"0", "1"}));
  EXPECT_EQ(check_gpus(2, ""), (std::vector<std::string>{"0", "1"}));
  EXPECT_EQ(check_gpus(2, "2, 3"), (std::vector<std::string>{"2", "3"}));
  EXPECT_EQ(check_gpus(1, "GPU-5e4a,GPU-77b1"), std::vector<std::string>{"GPU-5e4a"}) << "what the driver shows";
  EXPECT_TRUE(check_gpus(0, nullptr).empty());
  EXPECT_EQ(GpuLintOptions::default_gpu_lint_jobs(0), GpuLintOptions::default_gpu_lint_jobs(1));
  EXPECT_LE(GpuLintOptions::default_gpu_lint_jobs(1), 8u);
  EXPECT_GE(GpuLintOptions::default_gpu_lint_jobs(4), GpuLintOptions::default_gpu_lint_jobs(1));
}

}  // namespace
}  // namespace grader
