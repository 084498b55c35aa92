#include "lesson_rows.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

namespace grader {
namespace {

namespace fs = std::filesystem;

class Rows : public ::testing::Test {
 protected:
  void SetUp() override {
    root = fs::temp_directory_path() / ("lesson_rows_test-" + std::to_string(getpid()));
    fs::create_directories(root / "docs" / "measurements" / "logs");
    std::ofstream(root / "docs" / "measurements" / "gpu.md")
        << "<!-- bench:lab01-x -->\n## lab01-x: X\n\n| reference | 0.581 |\n<!-- /bench:lab01-x -->\n"
        << "<!-- bench:lab02-y -->\n## lab02-y: Y\n\n| reference | 9.99 |\n<!-- /bench:lab02-y -->\n";
    std::ofstream(root / "docs" / "measurements" / "logs" / "probe.log")
        << "star 1024: 1.10\nstar 8192: 1.26\nstar 8192: 1.26\nbox 8192: 0.98\n";
  }
  void TearDown() override { fs::remove_all(root); }
  fs::path root;
};

TEST_F(Rows, ALogByNameAndAMeasurementFileByPathEachNameOneRow) {
  const auto rows = cited_rows(
      "Text. <!-- row: probe.log: star 8192 -->\n\nMore. <!-- row: docs/measurements/gpu.md: reference -->\n",
      "lab01-x", root);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].file, "docs/measurements/logs/probe.log");
  EXPECT_EQ(rows[0].row, "star 8192: 1.26");  // the same line twice is one row
  EXPECT_EQ(rows[0].paragraph_begin, 0u);
  EXPECT_EQ(rows[0].paragraph_end, 40u);
  // Only the lab's own block of a measurement file of several labs.
  EXPECT_EQ(rows[1].row, "| reference | 0.581 |") << rows[1].problem;
  EXPECT_EQ(rows[1].paragraph_begin, 42u);
}

TEST_F(Rows, AKeyThatIsVagueAbsentOrOnlyANumberNamesNoRow) {
  const auto rows = cited_rows(
      "<!-- row: probe.log: star -->\n\n<!-- row: probe.log: tile -->\n\n<!-- row: probe.log: 1.26 -->\n\n"
      "<!-- row: ../secret.log: x -->\n\n<!-- row: probe.log -->\n",
      "lab01-x", root);
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_NE(rows[0].problem.find("2 different lines"), std::string::npos) << rows[0].problem;
  EXPECT_NE(rows[1].problem.find("no line of docs/measurements/logs/probe.log holds \"tile\""), std::string::npos);
  EXPECT_NE(rows[2].problem.find("names no row"), std::string::npos) << rows[2].problem;
  EXPECT_NE(rows[3].problem.find("not a file under docs/measurements/"), std::string::npos) << rows[3].problem;
  EXPECT_NE(rows[4].problem.find("FILE: KEY"), std::string::npos) << rows[4].problem;
  for (const auto& r : rows) EXPECT_TRUE(r.row.empty());
}

TEST(Paragraphs, AreTheTextBetweenBlankLines) {
  const std::string t = "one\ntwo\n\nthree\n\nfour";
  EXPECT_EQ(paragraph_around(t, 5), (std::pair<std::size_t, std::size_t>{0, 7}));
  EXPECT_EQ(paragraph_around(t, 9), (std::pair<std::size_t, std::size_t>{9, 14}));
  EXPECT_EQ(paragraph_around(t, 16), (std::pair<std::size_t, std::size_t>{16, 20}));
}

}  // namespace
}  // namespace grader
