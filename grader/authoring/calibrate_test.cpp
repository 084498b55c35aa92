#include "calibrate.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "threshold_rule.hpp"

using namespace grader;
using Status = CalibratedCheck::Status;

namespace {

// Step 1 checks correctness; step 2 times 4096x4096 twice (fraction and
// speedup: one timing serves both) and step 3 reads the same case again.
Manifest lab() {
  return parse_manifest(nlohmann::json::parse(R"({
    "format_version": 1, "id": "lab09", "title": "t", "timeout_s": 60,
    "steps": [
      {"id": 1, "title": "a", "hints": ["a", "b", "c"], "checks": [{"kind": "correct", "cases": ["17x5"]}]},
      {"id": 2, "title": "b", "hints": ["a", "b", "c"], "checks": [
        {"kind": "correct", "cases": ["17x5"]},
        {"kind": "fraction_of_peak", "case": "4096x4096", "min": 0.55},
        {"kind": "speedup", "case": "4096x4096", "min": 2.0}]}]})"),
                        "test");
}

// A grade whose step 2 timing measured `fraction` of memcpy and `speedup` over the baseline.
GradeReport graded(double fraction, double speedup) {
  GradeReport r;
  r.steps.resize(2);
  r.steps[0].id = 1;
  r.steps[0].checks.resize(1);
  r.steps[0].checks[0].kind = CheckKind::correct;
  r.steps[1].id = 2;
  r.steps[1].checks.resize(3);
  r.steps[1].checks[0].kind = CheckKind::correct;
  nlohmann::json timing = {{"rounds", 12},
                           {"fraction_of_peak", {{"median", fraction}, {"lo", fraction}, {"hi", fraction}}},
                           {"speedup", {{"median", speedup}, {"lo", speedup}, {"hi", speedup}}}};
  r.steps[1].checks[1].kind = CheckKind::fraction_of_peak;
  r.steps[1].checks[1].data = timing;
  r.steps[1].checks[2].kind = CheckKind::speedup;
  r.steps[1].checks[2].data = timing;
  return r;
}

FixtureExpectation fails(int step, const std::string& kind) {
  return parse_expectation("// expect: step " + std::to_string(step) + " fails: " + kind + "\n", "f.cu");
}

}  // namespace

TEST(Calibrate, ReadsEachTimedChecksMedianFromItsCasesTiming) {
  const auto m = timed_medians(lab(), graded(0.7, 3.5));
  ASSERT_EQ(m.size(), 2u);
  EXPECT_DOUBLE_EQ(m.at("step2:fraction_of_peak:4096x4096"), 0.7);
  EXPECT_DOUBLE_EQ(m.at("step2:speedup:4096x4096"), 3.5);
  GradeReport failed_early = graded(0.7, 3.5);
  failed_early.steps.resize(1);
  EXPECT_TRUE(timed_medians(lab(), failed_early).empty()) << "no timing, no median";
}

TEST(Calibrate, AFixtureCalibratesTheChecksItSpeaksFor) {
  const Manifest m = lab();
  EXPECT_TRUE(calibrates_with(parse_expectation("// expect: all pass\n", "a.cu"), m));
  EXPECT_TRUE(calibrates_with(fails(2, "speedup"), m));
  EXPECT_FALSE(calibrates_with(fails(2, "correct"), m)) << "its failure is not a time";
  EXPECT_FALSE(calibrates_with(parse_expectation("// expect: build fails\n", "b.cu"), m));
}

TEST(Calibrate, EveryHonestProgramPassesAndEveryWrongOneFailsTheCheckItMustFail) {
  LabCalibrationGrades g;
  g.solution = graded(0.62, 4.0);
  g.honest["alt_rows"] = graded(0.537, 3.0);
  g.failing["plain_loads"] = {fails(2, "speedup"), graded(0.60, 1.5)};
  std::vector<std::string> problems;
  std::map<std::string, CalibratedCheck> design = {
      {"step2:fraction_of_peak:4096x4096", {Status::design, 0.55, 0.55, 0.75, {}, {}, ""}},
      {"step2:speedup:4096x4096", {Status::design, 2.0, 2.0, 4.0, {}, {}, ""}}};
  const auto checks = calibrate_lab(lab(), g, &design, false, problems);
  EXPECT_TRUE(problems.empty());
  const CalibratedCheck& f = checks.at("step2:fraction_of_peak:4096x4096");
  EXPECT_LE(f.min * kHonestRoom, 0.537) << f.why;
  EXPECT_EQ(f.honest.size(), 2u);
  EXPECT_TRUE(f.failing.empty()) << "plain_loads must fail the speedup, not the fraction";
  const CalibratedCheck& s = checks.at("step2:speedup:4096x4096");
  EXPECT_EQ(s.status, Status::scaled) << s.why;
  EXPECT_DOUBLE_EQ(s.min, 2.0);
  EXPECT_GE(s.min, 1.5 * kHonestRoom);
  EXPECT_EQ(s.failing.at("plain_loads"), 1.5);
}

TEST(Calibrate, WithoutTheSolutionsTimingACheckStaysUncalibratedAndSaysWhy) {
  LabCalibrationGrades g;
  g.solution_error = "the referee failed";
  std::vector<std::string> problems;
  EXPECT_TRUE(calibrate_lab(lab(), g, nullptr, false, problems).empty());
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_NE(problems[0].find("the referee failed"), std::string::npos) << problems[0];
}

TEST(Calibrate, AClassCopyCarriesThresholdsNotTheFixturesNames) {
  Calibration c;
  c.gpu = "NVIDIA H200";
  c.labs["lab09-stencil"]["step2:speedup:4096x4096"] = {
      Status::moved, 2.0, 1.8, 3.0, {{"alt_secret_trick", 2.0}}, {{"cheat", 1.2}}, "moved: alt_secret_trick ..."};
  const std::string text = calibration_to_json(published_calibration(c)).dump();
  EXPECT_EQ(text.find("alt_secret_trick"), std::string::npos) << text;
  EXPECT_EQ(text.find("cheat"), std::string::npos) << text;
  EXPECT_NE(text.find("1.8"), std::string::npos);
}

TEST(Calibrate, AWrittenCalibrationKeepsTheLabsItDidNotRedoOnTheSameCardAndToolkit) {
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("calibrate_test-" + std::to_string(::getpid()) + ".json");
  Calibration first;
  first.gpu = "NVIDIA H200";
  first.toolkit = "13.0.88";
  first.labs["lab08-reduction"]["step2:speedup:33554432"] = {Status::scaled, 50, 73.4, 903, {}, {}, ""};
  write_calibration(file, first);
  Calibration second = first;
  second.labs.clear();
  second.labs["lab09-stencil"]["step2:speedup:box-8192x8192"] = {Status::scaled, 1.15, 1.14, 2.9, {}, {}, ""};
  write_calibration(file, second);
  EXPECT_EQ(read_calibration(file).labs.size(), 2u) << "lab08 kept, lab09 added";
  Calibration other_toolkit = second;
  other_toolkit.toolkit = "13.1.0";
  write_calibration(file, other_toolkit);
  EXPECT_EQ(read_calibration(file).labs.size(), 1u) << "another toolkit's labs are not kept";
  std::filesystem::remove(file);
}

namespace {

// A course with one lab (its solution where `with_solution`), graded on `gpu` (none: "").
struct SelfStudyCourse {
  std::filesystem::path root =
      std::filesystem::temp_directory_path() / ("calibrate_test-course-" + std::to_string(::getpid()));
  explicit SelfStudyCourse(bool with_solution) {
    std::filesystem::create_directories(root / "labs/lab09-stencil");
    std::ofstream(root / "syllabus.md") << "# s\n";
    timed(true);
    if (with_solution) {
      std::filesystem::create_directories(root / "solutions/lab09-stencil");
      std::ofstream(root / "solutions/lab09-stencil/kernel.cu") << "// the answer\n";
    }
  }
  ~SelfStudyCourse() { std::filesystem::remove_all(root); }
  // lab09's lab.json, with a timed check or with none.
  void timed(bool with_timed_check) const {
    const std::string check = with_timed_check ? R"({"kind": "fraction_of_peak", "case": "1d", "min": 0.5})"
                                               : R"({"kind": "correct", "cases": ["1d"]})";
    std::ofstream(root / "labs/lab09-stencil/lab.json")
        << R"({"format_version": 1, "id": "lab09", "title": "t", "student_file": "kernel.cu", "steps": [)"
        << R"({"id": 1, "title": "s", "points": 1, "checks": [)" << check << R"(], "hints": ["a", "b", "c"]}]})";
  }
  Session session(const std::string& gpu) const {
    Session s{{}, Course::open(root), {}, nullptr, {}};
    s.device.present = !gpu.empty();
    s.device.name = gpu;
    s.toolchain.version = "13.0.88";
    return s;
  }
  void calibrate(const std::filesystem::path& file, const std::string& gpu, const std::string& lab) const {
    Calibration c;
    c.gpu = gpu;
    c.toolkit = "13.0.88";
    c.labs[lab]["step1:fraction_of_peak:1d"] = {Status::scaled, 0.5, 0.4, 0.6, {}, {}, ""};
    write_calibration(file, c);
  }
};

}  // namespace

TEST(Calibrate, SelfStudyCalibratesALabOnceOnACardTheCourseHasNoValuesFor) {
  SelfStudyCourse course(true);
  const Session h200 = course.session("NVIDIA H200");
  const LabInfo& lab = h200.course.resolve("lab09");
  EXPECT_TRUE(needs_self_study_calibration(h200, lab)) << "no calibration anywhere";
  course.calibrate(*h200.user_calibration(), "NVIDIA H200", "lab08-reduction");
  EXPECT_TRUE(needs_self_study_calibration(h200, lab)) << "the user's file lacks this lab";
  course.calibrate(*h200.user_calibration(), "NVIDIA H200", "lab09-stencil");
  EXPECT_FALSE(needs_self_study_calibration(h200, lab)) << "calibrated once, kept";
  EXPECT_FALSE(needs_self_study_calibration(course.session(""), lab)) << "nothing is timed without a GPU";
}

TEST(Calibrate, SelfStudyLeavesALabWithNoTimedCheckAlone) {
  SelfStudyCourse course(true);
  course.timed(false);
  const Session h200 = course.session("NVIDIA H200");
  EXPECT_FALSE(needs_self_study_calibration(h200, h200.course.resolve("lab09")))
      << "nothing to calibrate: grading the fixtures would keep nothing, and the next grade would grade them again";
}

TEST(Calibrate, SelfStudyCalibratesOnlyWhatTheCoursesFileLacksAndNeverWithoutTheSolution) {
  SelfStudyCourse course(true);
  const Session h200 = course.session("NVIDIA H200");
  const LabInfo& lab = h200.course.resolve("lab09");
  const std::filesystem::path course_file = course.root / kCalibrationFolder / "nvidia-h200.json";
  course.calibrate(course_file, "NVIDIA H200", "lab08-reduction");
  EXPECT_TRUE(needs_self_study_calibration(h200, lab)) << "the course's file for this card lacks lab09";
  course.calibrate(course_file, "NVIDIA H200", "lab09-stencil");
  EXPECT_FALSE(needs_self_study_calibration(h200, lab)) << "the course's own values decide";
  std::filesystem::remove(course_file);
  course.calibrate(course.root / kCalibrationFolder / "nvidia-h100-80gb-hbm3.json", "NVIDIA H100 80GB HBM3",
                   "lab08-reduction");
  std::ofstream(course.root / kCalibrationFolder / kDesignGpuFile) << R"({"gpu": "NVIDIA H100 80GB HBM3"})";
  EXPECT_FALSE(needs_self_study_calibration(course.session("NVIDIA H100 80GB HBM3"), lab))
      << "on the design card lab.json's values are the card's own";
  std::filesystem::remove_all(course.root / "solutions");
  EXPECT_FALSE(needs_self_study_calibration(course.session("NVIDIA H200"), lab)) << "a class copy cannot calibrate";
}
