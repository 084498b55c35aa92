#include "lesson_numbers.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

namespace grader {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> values(const std::vector<StatedNumber>& v) {
  std::vector<std::string> out;
  for (const auto& n : v) out.push_back(n.value + n.unit);
  return out;
}

TEST(StatedNumbers, ReadsTimesRatesRatiosAndPercentages) {
  const auto v =
      stated_numbers("It took 0.252 ms, ran at 2,131 GB/s, 2.86× and 2x the baseline, 48 % of a copy.\n", "README.md");
  EXPECT_EQ(values(v), (std::vector<std::string>{"0.252ms", "2131GB/s", "2.86×", "2x", "48%"}));
  EXPECT_EQ(v[0].where, "README.md:1");
}

// Seconds, nanoseconds, cycles and ratios in words are measurements too.
TEST(StatedNumbers, ReadsSecondsNanosecondsCyclesAndRatiosInWords) {
  const auto v = stated_numbers(
      "racecheck took 2.3 s; a load waits 480 ns or about 700 cycles; atomics are 663 times slower, "
      "2 times the bandwidth.\n",
      "README.md");
  EXPECT_EQ(values(v), (std::vector<std::string>{"2.3s", "480ns", "700cycles", "663times", "2times"}));
}

// Ratios in words are read as the number they name; counts in words are not.
TEST(StatedNumbers, ReadsRatiosWrittenInWords) {
  const auto v = stated_numbers(
      "About three times slower than prefetching.\nIt runs twice as fast; Ten times the bandwidth.\n"
      "Run it three times; the twelve threads; twice the registers; a fourth time; seventy times faster.\n",
      "README.md");
  EXPECT_EQ(values(v), (std::vector<std::string>{"3times", "2times", "10times"}));
  EXPECT_EQ(v[0].where, "README.md:1");
  EXPECT_EQ(v[2].where, "README.md:2");
}

// A count in words, a plural and a size are not.
TEST(StatedNumbers, CountsPluralsAndWordsAfterANumberAreNotSeconds) {
  const auto v = stated_numbers(
      "Run it 3 times; 32 samples, the 1990s, 5 steps, 10 seconds of 8 sets; if step 1 passes, Part 2 loads; "
      "2R + 1 loads and n / 256 blocks.\n",
      "README.md");
  EXPECT_TRUE(v.empty()) << (v.empty() ? "" : v.front().value + v.front().unit + " in " + v.front().context);
}

// A count says what it counts; it is a fact of the hardware, the design or a run.
TEST(StatedNumbers, ReadsCountsOfWhatTheHardwareHasAndDoes) {
  const auto v = stated_numbers(
      "45 registers a thread, 40 warps, 1 warp, 2,048 wavefronts in 2 passes, 50 MiB of L2, 64KB, 16 bytes per "
      "load; 32 × 32 blocks, 8 blockDim, 2 GB/s.\n",
      "README.md");
  EXPECT_EQ(values(v), (std::vector<std::string>{"45register", "40warp", "1warp", "2048wavefront", "2pass", "50MiB",
                                                 "64KB", "16byte", "2GB/s"}));
}

// A line break inside a paragraph does not part a number from its unit; a blank line does.
TEST(StatedNumbers, ReadsANumberWhoseUnitWrapsToTheNextLine) {
  const auto v = stated_numbers("The tile showed 65,536\n  wavefronts in 2.3\nms; then 3\n\nwarps.\n", "README.md");
  EXPECT_EQ(values(v), (std::vector<std::string>{"65536wavefront", "2.3ms"}));
  EXPECT_EQ(v[1].where, "README.md:2");
}

TEST(StatedNumbers, SizesVersionsAndNamesAreNotMeasurements) {
  const auto v = stated_numbers(
      "Matrices of 1000×777, 33 × 4097 and 1 × 1 × 1; blocks of 64 x 4; sm_90 and CUDA 13.0; lab05 at 8192x8192; "
      "the x86 host; 3 ×\n5 tiles.\n",
      "README.md");
  EXPECT_TRUE(v.empty()) << (v.empty() ? "" : v.front().value + v.front().unit + " in " + v.front().context);
}

TEST(StatedNumbers, SkipsCodeGeneratedBlocksAndMarkedParagraphs) {
  const std::string text =
      "Run `nvcc -O3 -arch=sm_90 && echo 2.5x` to see.\n\n```\nspeedup 9.9x\n```\n\n"
      "<!-- measured: docs/measurements/gpu.md -->\n| 1.23× |\n<!-- /measured -->\n\n"
      "<!-- checks:1: generated -->\n- at least 85 %\n<!-- /checks:1 -->\n\n"
      "<!-- not measured: the claim being corrected -->\nA source lesson claims 2.3×\nand 32× too.\n\n"
      "But this 7.5 ms counts.\n";
  const auto v = stated_numbers(text, "README.md");
  ASSERT_EQ(values(v), (std::vector<std::string>{"7.5ms"}));
  EXPECT_EQ(v[0].where, "README.md:19");
}

// A marker after a sentence says so of that sentence alone; the paragraph's other numbers count.
TEST(StatedNumbers, AMarkerAfterASentenceCoversOnlyThatSentence) {
  const auto n = stated_numbers(
      "It ran 1.5× faster. A float4 carries four times as much per load. <!-- not measured: arithmetic -->\n"
      "It took 3 ms.\n\n<!-- not measured: a source's claim -->\nThey saw 9×.\n",
      "README.md");
  ASSERT_EQ(n.size(), 2u);
  EXPECT_EQ(n[0].value, "1.5");
  EXPECT_EQ(n[1].value, "3");
}

TEST(BackedBy, MatchesAtThePrecisionTheLessonWrites) {
  EXPECT_TRUE(backed_by("4.93", "tiled16x16 4.925 ms"));
  EXPECT_TRUE(backed_by("48", "| 48.0 |"));
  EXPECT_TRUE(backed_by("2131", "2,131 GB/s"));
  EXPECT_TRUE(backed_by("1.26", "speed 1.26"));
  EXPECT_FALSE(backed_by("93.8", "92.1 and 103.5"));
  EXPECT_FALSE(backed_by("1.3", "1.24"));
}

class NumbersLesson : public ::testing::Test {
 protected:
  void SetUp() override {
    static int n = 0;
    root = fs::temp_directory_path() / ("lesson_numbers_test-" + std::to_string(getpid()) + "-" + std::to_string(n++));
    fs::create_directories(root / "docs" / "measurements" / "logs");
    std::ofstream(root / "docs" / "measurements" / "gpu.md")
        << "<!-- bench:lab01-x -->\n## lab01-x: X\n\n| reference | 0.581 | 1847 | 2.32 |\n<!-- /bench:lab01-x -->\n"
        << "<!-- bench:lab02-y -->\n## lab02-y: Y\n\n| reference | 9.99 |\n<!-- /bench:lab02-y -->\n";
    std::ofstream(root / "docs" / "measurements" / "logs" / "probe.log") << "tile/direct 1.26\n";
  }
  void TearDown() override { fs::remove_all(root); }
  fs::path root;
  const std::string table = "<!-- measured: docs/measurements/gpu.md -->\n<!-- /measured -->\n\n";
};

TEST_F(NumbersLesson, PassesWhenARowItsParagraphCitesHoldsEachNumber) {
  const std::string readme = table +
                             "The reference runs at 1847 GB/s, 2.32× the baseline.\n"
                             "<!-- row: docs/measurements/gpu.md: | reference | -->\n\n"
                             "The probe found the tile 1.26× faster. <!-- row: probe.log: tile/direct -->\n";
  const LintItem i = lint_lesson_numbers(readme, {{"lab.json step 1 hint 1", "about 2.3× here"}}, "lab01-x", root);
  EXPECT_EQ(i.status, LintStatus::pass) << i.summary << (i.details.empty() ? "" : i.details[0]);
}

TEST_F(NumbersLesson, FailsANumberNoCitedRowHolds) {
  // 9.99 is another lab's; 1.26 is in a log this lesson names but no row it cites.
  const std::string readme = table + "The reference reaches 9.99× and (probe.log) the tile 1.26×.\n";
  const LintItem i =
      lint_lesson_numbers(readme, {{"lab.json step 2 hint 3", "we saw 93.2 % of memcpy"}}, "lab01-x", root);
  ASSERT_EQ(i.status, LintStatus::fail);
  ASSERT_EQ(i.details.size(), 4u);
  EXPECT_NE(i.details[0].find("README.md:4: 9.99 ×"), std::string::npos) << i.details[0];
  EXPECT_NE(i.details[1].find("1.26 ×"), std::string::npos);
  // The failure says which row of a named run would back it.
  EXPECT_NE(i.details[1].find("<!-- row: probe.log: tile/direct 1.26 -->"), std::string::npos) << i.details[1];
  EXPECT_NE(i.details[2].find("lab.json step 2 hint 3: 93.2 %"), std::string::npos) << i.details[2];
}

// A row backs only the paragraph that cites it: any number elsewhere in the same file does not.
TEST_F(NumbersLesson, ARowBacksOnlyItsOwnParagraph) {
  const std::string readme = table + "The reference runs at 1847 GB/s. <!-- row: probe.log: tile/direct -->\n\n" +
                             "The tile is 1.26× faster.\n";
  const LintItem i = lint_lesson_numbers(readme, {}, "lab01-x", root);
  ASSERT_EQ(i.status, LintStatus::fail);
  ASSERT_EQ(i.details.size(), 3u);
  EXPECT_NE(i.details[0].find("1847 GB/s"), std::string::npos) << i.details[0];
  EXPECT_NE(i.details[1].find("1.26 ×"), std::string::npos) << i.details[1];
}

TEST_F(NumbersLesson, ACitationThatNamesNoRowFails) {
  const std::string readme = table + "A is 2.32× faster. <!-- row: docs/measurements/gpu.md: | nothing | -->\n\n" +
                             "B is 2.32× faster. <!-- row: missing.log: tile -->\n";
  const LintItem i = lint_lesson_numbers(readme, {}, "lab01-x", root);
  ASSERT_EQ(i.status, LintStatus::fail);
  EXPECT_NE(i.details[0].find("no line of docs/measurements/gpu.md holds \"| nothing |\""), std::string::npos)
      << i.details[0];
  EXPECT_NE(i.details[1].find("docs/measurements/logs/missing.log, which is not in this course"), std::string::npos)
      << i.details[1];
}

// A ratio in words is held to the rows as one in digits: 2.32 is "two times", nothing is seven.
TEST_F(NumbersLesson, ARatioInWordsNeedsARowThatRoundsToIt) {
  const std::string readme = table +
                             "The reference is about two times faster. <!-- row: docs/measurements/gpu.md: reference "
                             "-->\n\nA tile is seven times faster. <!-- row: docs/measurements/gpu.md: reference -->\n";
  const LintItem i = lint_lesson_numbers(readme, {}, "lab01-x", root);
  ASSERT_EQ(i.status, LintStatus::fail);
  ASSERT_EQ(i.details.size(), 2u);
  EXPECT_NE(i.details[0].find("README.md:6: 7 times"), std::string::npos) << i.details[0];
}

// A fact is stated once, with its source, and backs that number of that unit anywhere in the lesson.
TEST_F(NumbersLesson, ACountIsBackedByAStatedFactOrACitedRow) {
  const std::string readme = table +
                             "<!-- fact: 32 threads: a warp (CUDA C++ Programming Guide) -->\n"
                             "A warp is 32 threads.\n\nEach of its 32 threads loads 4 bytes.\n";
  const LintItem i =
      lint_lesson_numbers(readme, {{"lab.json step 1 hint 1", "The 32 threads of a warp."}}, "lab01-x", root);
  ASSERT_EQ(i.status, LintStatus::fail);
  ASSERT_EQ(i.details.size(), 2u) << i.details[0];
  EXPECT_NE(i.details[0].find("README.md:7: 4 byte"), std::string::npos) << i.details[0];
  EXPECT_NE(i.details[1].find("<!-- fact: 32 threads"), std::string::npos) << i.details[1];
}

TEST_F(NumbersLesson, AFactWithoutANumberOrASourceFails) {
  const LintItem i =
      lint_lesson_numbers("<!-- fact: 32 threads -->\n<!-- fact: warps: a warp -->\n", {}, "lab01-x", root);
  ASSERT_EQ(i.status, LintStatus::fail);
  EXPECT_NE(i.details[0].find("a fact reads"), std::string::npos) << i.details[0];
  EXPECT_NE(i.details[1].find("a fact reads"), std::string::npos) << i.details[1];
}

// A planted number of every unit the lint reads fails when nothing backs it,
// and passes once a cited row holds it.
TEST_F(NumbersLesson, APlantedNumberOfEveryUnitFailsUntilARowHoldsIt) {
  const std::vector<std::string> planted = {
      "7.77 ms",       "7.77 µs",   "7.77 us",   "7.77 ns",        "7.77 s",
      "777 cycles",    "7.77 GB/s", "7.77 TB/s", "7.77 GFLOP/s",   "7.77 TFLOP/s",
      "7.77×",         "7.77x",     "7.77 %",    "7 times faster", "seven times faster",
      "777 registers", "777 warps", "777 bytes", "777 MiB",        "777 wavefronts",
      "777 sectors",   "777 loads"};
  std::ofstream(root / "docs" / "measurements" / "logs" / "planted.log")
      << "planted run: 7.77 and 777 and 7 (registers, warps, bytes, MiB, wavefronts, sectors, loads)\n";
  for (const auto& p : planted) {
    const std::string lesson = "It measured " + p + " on our GPU.\n";
    const LintItem bare = lint_lesson_numbers(lesson, {}, "lab01-x", root);
    EXPECT_EQ(bare.status, LintStatus::fail) << p;
    const LintItem cited =
        lint_lesson_numbers(lesson + "<!-- row: planted.log: planted run -->\n", {}, "lab01-x", root);
    EXPECT_EQ(cited.status, LintStatus::pass) << p << ": " << (cited.details.empty() ? "" : cited.details[0]);
  }
}

// A count's row must say what it counts: a row of 32 sectors is no evidence of 32 floats.
TEST_F(NumbersLesson, ACountNeedsARowThatSaysWhatItCounts) {
  std::ofstream(root / "docs" / "measurements" / "logs" / "ptxas.log")
      << "ptxas info: Used 32 registers, 0 bytes stack frame\nsectors per request: 32.0\nkernel: 32 LDG, 5 STG\n";
  const auto lint = [&](const std::string& sentence, const std::string& key) {
    return lint_lesson_numbers(sentence + " <!-- row: ptxas.log: " + key + " -->\n", {}, "lab01-x", root).status;
  };
  EXPECT_EQ(lint("It uses 32 registers.", "Used 32"), LintStatus::pass);
  EXPECT_EQ(lint("A warp reads 32 floats.", "sectors per request"), LintStatus::fail);
  EXPECT_EQ(lint("It issues 32 loads.", "LDG"), LintStatus::pass);
  EXPECT_EQ(lint("It makes 32 sector requests in all.", "sectors per request"), LintStatus::pass);
}

TEST_F(NumbersLesson, ALessonWithoutMeasurementsPasses) {
  EXPECT_EQ(lint_lesson_numbers("Banks are narrow; 32 of them.\n", {}, "lab01-x", root).status, LintStatus::pass);
  EXPECT_EQ(
      lint_lesson_numbers("Banks are 4 bytes wide.\n<!-- fact: 4 bytes: a bank's width -->\n", {}, "lab01-x", root)
          .status,
      LintStatus::pass);
}

}  // namespace
}  // namespace grader
