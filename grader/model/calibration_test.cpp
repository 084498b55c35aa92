#include "calibration.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

namespace fs = std::filesystem;
using namespace grader;

namespace {

Manifest one_timed_step() {
  return parse_manifest(nlohmann::json::parse(R"({
    "format_version": 1, "id": "lab09", "title": "t", "timeout_s": 60,
    "steps": [
      {"id": 1, "title": "a", "hints": ["a", "b", "c"], "checks": [
        {"kind": "correct", "cases": ["17x5"]},
        {"kind": "fraction_of_peak", "case": "4096x4096", "min": 0.55},
        {"kind": "speedup", "case": "4096x4096", "min": 2.0}]}]})"),
                        "test");
}

struct TempCourse {
  fs::path root = fs::temp_directory_path() / ("calibration_test-" + std::to_string(::getpid()));
  TempCourse() { fs::create_directories(root / kCalibrationFolder); }
  ~TempCourse() { fs::remove_all(root); }
  void write(const std::string& name, const std::string& text) const {
    std::ofstream(root / kCalibrationFolder / name) << text;
  }
};

Calibration h200() {
  Calibration c;
  c.gpu = "NVIDIA H200";
  c.toolkit = "13.0.88";
  c.design_gpu = "NVIDIA H100 80GB HBM3";
  CalibratedCheck k;
  k.status = CalibratedCheck::Status::moved;
  k.design_min = 0.55;
  k.min = 0.48;
  k.reference = 0.62;
  k.honest = {{"solution", 0.62}, {"alt_one_d", 0.537}};
  k.why = "moved";
  c.labs["lab09-stencil"]["step1:fraction_of_peak:4096x4096"] = k;
  return c;
}

}  // namespace

TEST(Calibration, AGpuModelIsAFileName) {
  EXPECT_EQ(gpu_model_key("NVIDIA H100 80GB HBM3"), "nvidia-h100-80gb-hbm3");
  EXPECT_EQ(gpu_model_key("NVIDIA H200"), "nvidia-h200");
  EXPECT_EQ(gpu_model_key("  Tesla T4 (PCIe) "), "tesla-t4-pcie");
  EXPECT_EQ(gpu_model_key("../../etc"), "etc");
  EXPECT_EQ(gpu_model_key(""), "unnamed-gpu");
}

TEST(Calibration, ReadsBackWhatItWrites) {
  const Calibration c = h200();
  const Calibration back = calibration_from_json(calibration_to_json(c), "test");
  EXPECT_EQ(calibration_to_json(back), calibration_to_json(c));
}

TEST(Calibration, AMalformedFileSaysWhatAndWhere) {
  nlohmann::json j = calibration_to_json(h200());
  j["labs"]["lab09-stencil"]["step1:fraction_of_peak:4096x4096"]["min"] = -1;
  try {
    calibration_from_json(j, "calibration/nvidia-h200.json");
    FAIL() << "a threshold of -1 read";
  } catch (const CalibrationError& e) {
    EXPECT_NE(std::string(e.what()).find("calibration/nvidia-h200.json: lab09-stencil.step1"), std::string::npos)
        << e.what();
  }
  j = calibration_to_json(h200());
  j["format"] = 7;
  EXPECT_THROW(calibration_from_json(j, "x"), CalibrationError);
}

TEST(Calibration, AGradeOnACalibratedCardReadsItsThresholds) {
  TempCourse course;
  course.write("design.json", R"({"gpu": "NVIDIA H100 80GB HBM3"})");
  course.write("nvidia-h200.json", calibration_to_json(h200()).dump());
  CalibrationUse use = calibration_for(course.root, "NVIDIA H200");
  ASSERT_EQ(use.state, CalibrationUse::State::calibrated);
  const Manifest m = with_calibration(one_timed_step(), "lab09-stencil", use);
  EXPECT_DOUBLE_EQ(m.steps[0].checks[1].min, 0.48);
  EXPECT_DOUBLE_EQ(m.steps[0].checks[2].min, 2.0) << "no value for the speedup: the design value";
  EXPECT_EQ(use.uncalibrated_checks, std::vector<std::string>{"step1:speedup:4096x4096"});
  EXPECT_EQ(use.timed_suffix("step1:speedup:4096x4096"), " (uncalibrated for NVIDIA H200)");
  EXPECT_EQ(use.timed_suffix("step1:fraction_of_peak:4096x4096"), "");
  EXPECT_NE(use.header().find("calibrated for NVIDIA H200"), std::string::npos) << use.header();
}

TEST(Calibration, AValueMadeForAnotherLabJsonValueIsStale) {
  TempCourse course;
  Calibration c = h200();
  c.labs["lab09-stencil"]["step1:fraction_of_peak:4096x4096"].design_min = 0.60;  // lab.json changed since
  course.write("nvidia-h200.json", calibration_to_json(c).dump());
  CalibrationUse use = calibration_for(course.root, "NVIDIA H200");
  const Manifest m = with_calibration(one_timed_step(), "lab09-stencil", use);
  EXPECT_DOUBLE_EQ(m.steps[0].checks[1].min, 0.55);
  EXPECT_EQ(use.uncalibrated_checks.size(), 2u);
}

TEST(Calibration, OnTheDesignCardACheckItsCalibrationLacksIsNotUncalibrated) {
  TempCourse course;
  course.write("design.json", R"({"gpu": "NVIDIA H200"})");
  course.write("nvidia-h200.json", calibration_to_json(h200()).dump());
  CalibrationUse use = calibration_for(course.root, "NVIDIA H200");
  with_calibration(one_timed_step(), "lab09-stencil", use);
  EXPECT_TRUE(use.uncalibrated_checks.empty()) << "lab.json's speedup is the design card's own value";
  EXPECT_EQ(use.timed_suffix("step1:speedup:4096x4096"), "");
}

TEST(Calibration, TheDesignCardAndAnUncalibratedCardSaySo) {
  TempCourse course;
  course.write("design.json", R"({"gpu": "NVIDIA H100 80GB HBM3"})");
  CalibrationUse design = calibration_for(course.root, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(design.state, CalibrationUse::State::design_card);
  EXPECT_EQ(with_calibration(one_timed_step(), "lab09-stencil", design).steps[0].checks[1].min, 0.55);
  EXPECT_EQ(design.timed_suffix("step1:speedup:4096x4096"), "");

  CalibrationUse other = calibration_for(course.root, "NVIDIA L4");
  EXPECT_EQ(other.state, CalibrationUse::State::uncalibrated);
  with_calibration(one_timed_step(), "lab09-stencil", other);
  EXPECT_EQ(other.timed_suffix("step1:speedup:4096x4096"), " (uncalibrated for NVIDIA L4)");
  EXPECT_NE(other.header().find("grader calibrate"), std::string::npos) << other.header();
  EXPECT_NE(other.header().find("NVIDIA H100 80GB HBM3"), std::string::npos) << other.header();

  EXPECT_EQ(calibration_for(course.root, "").header(), "") << "no GPU: nothing is timed";
}

TEST(Calibration, ASelfStudyFileIsReadOnlyWhenAsked) {
  TempCourse course;
  const fs::path mine = user_calibration_file(course.root / "state", "NVIDIA H200", "13.0.88");
  fs::create_directories(mine.parent_path());
  std::ofstream(mine) << calibration_to_json(h200()).dump();
  EXPECT_EQ(calibration_for(course.root, "NVIDIA H200").state, CalibrationUse::State::uncalibrated)
      << "a batch or a check reads the course's calibration/ alone";
  const CalibrationUse use = calibration_for(course.root, "NVIDIA H200", mine);
  EXPECT_EQ(use.state, CalibrationUse::State::calibrated);
  EXPECT_EQ(use.file, mine);
}

TEST(Calibration, ACalibrationOfAnotherCardUnderThisCardsNameIsRefused) {
  TempCourse course;
  Calibration c = h200();
  c.gpu = "NVIDIA H100 PCIe";
  course.write("nvidia-h200.json", calibration_to_json(c).dump());
  EXPECT_THROW(calibration_for(course.root, "NVIDIA H200"), CalibrationError);
}

TEST(Calibration, TheCourseCalibrationsAreEveryCardsFileButTheDesignCardsName) {
  TempCourse course;
  EXPECT_TRUE(course_calibrations(course.root).empty());
  Calibration h100 = h200();
  h100.gpu = "NVIDIA H100 80GB HBM3";
  course.write("nvidia-h200.json", calibration_to_json(h200()).dump());
  course.write("nvidia-h100-80gb-hbm3.json", calibration_to_json(h100).dump());
  course.write(kDesignGpuFile, R"({"gpu": "NVIDIA H100 80GB HBM3"})");
  course.write("README.md", "not a calibration");
  const std::vector<Calibration> all = course_calibrations(course.root);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].gpu, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(all[1].gpu, "NVIDIA H200");
  course.write("nvidia-h200-old.json", calibration_to_json(h200()).dump());
  try {
    course_calibrations(course.root);
    FAIL() << "a calibration under another name than its card's was read";
  } catch (const CalibrationError& e) {
    EXPECT_NE(std::string(e.what()).find("grades read only as nvidia-h200.json"), std::string::npos) << e.what();
  }
  std::filesystem::remove(course.root / kCalibrationFolder / "nvidia-h200-old.json");
  course.write("broken.json", "{");
  EXPECT_THROW(course_calibrations(course.root), CalibrationError);
}

TEST(Calibration, ASelfStudyFileFillsTheLabsTheCoursesFileLacksAndTheHeaderSaysWhichFile) {
  TempCourse course;
  Calibration lab08_only = h200();
  lab08_only.labs.clear();
  lab08_only.labs["lab08-reduction"]["step3:fraction_of_peak:1"] = h200().labs["lab09-stencil"].begin()->second;
  course.write("nvidia-h200.json", calibration_to_json(lab08_only).dump());
  const fs::path mine = course.root / "mine.json";
  std::ofstream(mine) << calibration_to_json(h200()).dump();
  CalibrationUse use = calibration_for(course.root, "NVIDIA H200", mine);
  EXPECT_TRUE(use.has_lab("lab09-stencil"));
  const Manifest m = with_calibration(one_timed_step(), "lab09-stencil", use);
  EXPECT_DOUBLE_EQ(m.steps[0].checks[1].min, 0.48) << "the user's value for a lab the course's file lacks";
  EXPECT_EQ(use.file, mine);
  EXPECT_NE(use.header().find("mine.json"), std::string::npos) << use.header();
  CalibrationUse course_only = calibration_for(course.root, "NVIDIA H200");
  EXPECT_FALSE(course_only.has_lab("lab09-stencil")) << "a batch or a check reads the course's files alone";
  EXPECT_DOUBLE_EQ(with_calibration(one_timed_step(), "lab09-stencil", course_only).steps[0].checks[1].min, 0.55);
}
