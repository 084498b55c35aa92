#include "lesson_measurements.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

namespace grader {
namespace {

namespace fs = std::filesystem;

const char* kMeasurements =
    "# Measurements\n\n<!-- bench:lab01-tiles -->\n## lab01-tiles: Tiles\n\nGPU X; seed 1.\n\n"
    "| case | kernel | GB/s |\n|---|---|---:|\n| 64 | baseline | 100 |\n| 64 | reference | 250 |\n"
    "<!-- /bench:lab01-tiles -->\n\n<!-- bench:lab02-other -->\n## lab02-other: Other\n\n| x |\n"
    "<!-- /bench:lab02-other -->\n";

class MeasuredLesson : public ::testing::Test {
 protected:
  void SetUp() override {
    static int n = 0;
    root = fs::temp_directory_path() /
           ("lesson_measurements_test-" + std::to_string(getpid()) + "-" + std::to_string(n++));
    fs::create_directories(root / "docs" / "measurements");
    std::ofstream(root / "docs" / "measurements" / "gpu.md") << kMeasurements;
  }
  void TearDown() override { fs::remove_all(root); }
  fs::path root;
};

const std::string kLesson =
    "## What the hardware does\n\nMeasured:\n\n<!-- measured: docs/measurements/gpu.md -->\n"
    "old numbers typed by hand\n<!-- /measured -->\n\nThe reference row is the fast one.\n";

TEST(MeasuredBlock, IsTheLabsBlockWithoutItsHeading) {
  const auto b = measured_block(kMeasurements, "lab01-tiles");
  ASSERT_TRUE(b);
  EXPECT_EQ(*b,
            "GPU X; seed 1.\n\n| case | kernel | GB/s |\n|---|---|---:|\n| 64 | baseline | 100 |\n"
            "| 64 | reference | 250 |\n");
  EXPECT_FALSE(measured_block(kMeasurements, "lab03-none"));
}

TEST_F(MeasuredLesson, ACopyMadeByWriteLessonsPassesAndAStaleOneFails) {
  EXPECT_EQ(lint_lesson_measurements(kLesson, "lab01-tiles", root).status, LintStatus::fail);
  const std::string written = with_current_measurements(kLesson, "lab01-tiles", root);
  EXPECT_NE(written.find("| 64 | reference | 250 |\n<!-- /measured -->"), std::string::npos) << written;
  EXPECT_EQ(written.find("old numbers"), std::string::npos);
  EXPECT_NE(written.find("The reference row is the fast one."), std::string::npos);
  EXPECT_EQ(lint_lesson_measurements(written, "lab01-tiles", root).status, LintStatus::pass);
  EXPECT_EQ(with_current_measurements(written, "lab01-tiles", root), written);
  std::string stale = written;
  stale.replace(stale.find("250"), 3, "260");
  const LintItem i = lint_lesson_measurements(stale, "lab01-tiles", root);
  EXPECT_EQ(i.status, LintStatus::fail);
  EXPECT_NE(i.summary.find("differs from docs/measurements/gpu.md"), std::string::npos) << i.summary;
}

TEST_F(MeasuredLesson, AMissingFileBlockOrEndAndAPathOutOfTheCourseFail) {
  const auto summary = [&](const std::string& lesson, const std::string& lab) {
    const LintItem i = lint_lesson_measurements(lesson, lab, root);
    EXPECT_EQ(i.status, LintStatus::fail) << lesson;
    return i.summary;
  };
  std::string other_file = kLesson;
  other_file.replace(other_file.find("gpu.md"), 6, "none.md");
  EXPECT_NE(summary(other_file, "lab01-tiles").find("is not in this course"), std::string::npos);
  EXPECT_NE(summary(kLesson, "lab03-none").find("has no table for lab03-none"), std::string::npos);
  std::string outside = kLesson;
  outside.replace(outside.find("docs/measurements/gpu.md"), 24, "../gpu.md");
  EXPECT_NE(summary(outside, "lab01-tiles").find("not a file of the course"), std::string::npos);
  std::string unclosed = kLesson;
  unclosed.erase(unclosed.find("<!-- /measured -->"), 18);
  EXPECT_NE(summary(unclosed, "lab01-tiles").find("no closing"), std::string::npos);
  EXPECT_EQ(with_current_measurements(unclosed, "lab01-tiles", root), unclosed);
}

TEST_F(MeasuredLesson, ALessonWithoutTablesPasses) {
  EXPECT_EQ(lint_lesson_measurements("## Steps\n", "lab01-tiles", root).status, LintStatus::pass);
}

}  // namespace
}  // namespace grader
