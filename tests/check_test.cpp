// `grader check`, the course lint, run by the real grader binary: the course
// as it stands must pass it without a GPU, and a broken copy must fail it with
// the exit code the lint promises (README.md, docs/json-output.md).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "child_process.hpp"
#include "course.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const fs::path kRoot = COURSE_ROOT;

std::vector<std::string> lab_folders() {
  std::vector<std::string> labs;
  const auto course = grader::Course::open(kRoot);  // labs() refers into it: keep it alive
  for (const auto& l : course.labs()) labs.push_back(l.folder);
  return labs;
}

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

struct GraderRun {
  int exit_code = -1;
  json out;
  std::string raw, err;
};

GraderRun run_grader(std::vector<std::string> argv, double timeout_s, bool no_gpu = false) {
  static int counter = 0;
  const fs::path dir =
      fs::temp_directory_path() / ("check_test-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
  fs::create_directories(dir);
  grader::ChildOptions o;
  o.argv = {GRADER_BIN};
  o.argv.insert(o.argv.end(), argv.begin(), argv.end());
  o.timeout_s = timeout_s;
  if (no_gpu) {
    std::vector<std::string> env;
    for (char** e = environ; *e; ++e) env.emplace_back(*e);
    env.emplace_back("GRADER_NO_GPU=1");
    o.env = env;
  }
  o.stdout_file = dir / "out";
  o.stderr_file = dir / "err";
  const auto r = grader::run_child(o);
  GraderRun g;
  g.exit_code = r.exited ? r.exit_code : -1;
  g.raw = read(o.stdout_file);
  g.err = read(o.stderr_file);
  try {
    g.out = json::parse(g.raw);
  } catch (...) {
  }
  fs::remove_all(dir);
  return g;
}

GraderRun run_check(const fs::path& root, std::vector<std::string> args) {
  std::vector<std::string> argv = {"--json", "--root", root.string(), "check", "--static-only"};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_grader(argv, 1700);
}

// What failed, one line per item, for the test's message.
std::string failures(const json& report) {
  std::string s;
  if (!report.is_object() || !report.contains("labs")) return report.dump();
  for (const auto& lab : report["labs"])
    for (const auto& item : lab["items"])
      if (item["status"] == "fail") {
        s += lab["lab"].get<std::string>() + " " + item["id"].get<std::string>() + ": " +
             item["summary"].get<std::string>() + "\n";
        for (const auto& d : item["details"]) s += "    " + d.get<std::string>() + "\n";
      }
  return s;
}

// A copy of one lab (with what it needs to build) that a test may break.
class CourseCopy : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kRoot / "solutions" / kLab))
      GTEST_SKIP() << "needs solutions/" << kLab << " (absent in a published copy)";
    root = fs::temp_directory_path() / ("check_test-course-" + std::to_string(getpid()));
    fs::remove_all(root);
    fs::create_directories(root / "labs");
    fs::create_directories(root / "solutions");
    fs::copy(kRoot / "common", root / "common", fs::copy_options::recursive);
    fs::copy(kRoot / "labs" / kLab, root / "labs" / kLab, fs::copy_options::recursive);
    fs::copy(kRoot / "solutions" / kLab, root / "solutions" / kLab, fs::copy_options::recursive);
    fs::copy_file(kRoot / "syllabus.md", root / "syllabus.md");
    // The calibrations too: the lesson's lists of checks give each calibrated GPU's thresholds.
    fs::copy(kRoot / "calibration", root / "calibration", fs::copy_options::recursive);
    // Build outputs are keyed by content, not path: share the course's cache
    // so that only what a test changes is compiled again.
    fs::create_directories(kRoot / ".grader" / "cache");
    fs::create_directories(root / ".grader");
    fs::create_directory_symlink(kRoot / ".grader" / "cache", root / ".grader" / "cache");
  }
  void TearDown() override { fs::remove_all(root); }
  static constexpr const char* kLab = "lab07-bank-conflicts";
  fs::path root;
};

}  // namespace

TEST(CourseCheck, TheCoursePassesTheStaticLint) {
  const GraderRun g = run_check(kRoot, {});
  ASSERT_TRUE(g.out.is_object()) << g.raw << g.err;
  EXPECT_EQ(g.out["schema"], "cuda-memory-labs/check/1");
  EXPECT_EQ(g.exit_code, 0) << failures(g.out);
  EXPECT_FALSE(g.out["labs"].empty());
  // Without --static-only's GPU part, the report says so.
  ASSERT_FALSE(g.out["skipped"].empty());
  EXPECT_EQ(g.out["skipped"].back()["why"], "--static-only");
}

TEST_F(CourseCopy, AMalformedManifestExitsTwo) {
  std::ofstream(root / "labs" / kLab / "lab.json") << R"({"format_version": 1, "id": "lab07", "steps": "many"})";
  const GraderRun g = run_check(root, {});
  ASSERT_TRUE(g.out.is_object()) << g.raw << g.err;
  EXPECT_EQ(g.exit_code, 2) << g.raw;
  EXPECT_EQ(g.out["labs"][0]["manifest_error"], true);
}

TEST_F(CourseCopy, AStrayChangeInTheSolutionExitsOne) {
  const fs::path sol = root / "solutions" / kLab / "kernel.cu";
  std::ofstream(sol, std::ios::app) << "\n// a line the skeleton does not have\nstatic int stray = 0;\n";
  const GraderRun g = run_check(root, {"lab07"});
  ASSERT_TRUE(g.out.is_object()) << g.raw << g.err;
  EXPECT_EQ(g.exit_code, 1) << g.raw;
  const std::string f = failures(g.out);
  EXPECT_NE(f.find("stray_hunks"), std::string::npos) << f;
  EXPECT_NE(f.find("+ static int stray = 0;"), std::string::npos) << f;
}

TEST_F(CourseCopy, AFixtureWhoseStaticVerdictDoesNotHoldExitsOne) {
  // The solution, claimed to be a build failure: a real build shows it is not.
  fs::create_directories(root / "tests" / "fixtures" / kLab);
  std::ofstream(root / "tests" / "fixtures" / kLab / "claims_build_failure.cu")
      << "// expect: build fails\n"
      << read(root / "solutions" / kLab / "kernel.cu");
  const GraderRun g = run_check(root, {"lab07"});
  ASSERT_TRUE(g.out.is_object()) << g.raw << g.err;
  EXPECT_EQ(g.exit_code, 1) << g.raw;
  const std::string f = failures(g.out);
  EXPECT_NE(f.find("fixture:claims_build_failure: expect: build fails, but without a GPU expected a build failure"),
            std::string::npos)
      << f;
}

// Without a GPU, a check that was asked for the GPU's part too is not the
// whole check: it says which checks did not run, and exits 4, never 0 (which
// read "35 hold, 0 fail, 0 skipped" and passed a lab no GPU had checked).
TEST_F(CourseCopy, WithoutAGpuTheCheckIsNotWholeAndExitsFour) {
  fs::copy(kRoot / "docs", root / "docs", fs::copy_options::recursive);  // the lesson's measured tables
  const GraderRun g = run_grader({"--json", "--root", root.string(), "check", "lab07"}, 1700, /*no_gpu=*/true);
  ASSERT_TRUE(g.out.is_object()) << g.raw << g.err;
  EXPECT_EQ(g.exit_code, 4) << failures(g.out) << g.raw;
  ASSERT_FALSE(g.out["skipped"].empty()) << g.raw;
  EXPECT_EQ(g.out["skipped"].back()["why"].get<std::string>().rfind("no GPU", 0), 0u) << g.out["skipped"].dump();
  const GraderRun text = run_grader({"--root", root.string(), "check", "lab07"}, 1700, /*no_gpu=*/true);
  EXPECT_EQ(text.exit_code, 4) << text.raw;
  EXPECT_NE(text.raw.find("group of checks not run"), std::string::npos) << text.raw;
  EXPECT_NE(text.raw.find("the GPU checks did not run"), std::string::npos) << text.raw;
}

TEST_F(CourseCopy, AnUnknownLabExitsTwo) {
  const GraderRun g = run_check(root, {"lab99"});
  EXPECT_EQ(g.exit_code, 2) << g.raw << g.err;
  EXPECT_EQ(g.out.value("schema", ""), "cuda-memory-labs/error/1") << g.raw;
}

// On a GPU: the whole lint, lab by lab (the skeleton fails its first step, the
// solution passes, the reference clears every threshold by 1.25×, every
// fixture gets its verdict). Skipped, saying why, without a GPU.
class GpuCheck : public ::testing::TestWithParam<std::string> {};

TEST_P(GpuCheck, LabPassesTheLint) {
  static const std::string no_gpu = [] {
    const GraderRun d = run_grader({"--json", "--root", kRoot.string(), "doctor"}, 300);
    if (d.out.is_object() && d.out.contains("gpu") && !d.out["gpu"].is_null()) return std::string();
    return "no GPU: " + (d.out.is_object() ? d.out.value("no_gpu_reason", d.raw) : d.raw + d.err);
  }();
  if (!no_gpu.empty()) GTEST_SKIP() << no_gpu;
  const GraderRun g = run_grader({"--json", "--root", kRoot.string(), "check", GetParam()}, 1700);
  ASSERT_TRUE(g.out.is_object()) << g.raw << g.err;
  EXPECT_EQ(g.exit_code, 0) << failures(g.out);
  EXPECT_TRUE(g.out["skipped"].empty()) << g.out["skipped"].dump(1);
}

INSTANTIATE_TEST_SUITE_P(Gpu, GpuCheck, ::testing::ValuesIn(lab_folders()), [](const auto& info) {
  std::string n;
  for (char c : info.param) n += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return n;
});
