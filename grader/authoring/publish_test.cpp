#include "publish.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "sha256.hpp"

namespace fs = std::filesystem;

namespace {

using namespace grader;

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

class TempDir : public ::testing::Test {
 protected:
  void SetUp() override {
    static int n = 0;
    dir = fs::temp_directory_path() / ("publish_test-" + std::to_string(getpid()) + "-" + std::to_string(n++));
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }
  fs::path dir;
};

// A minimal course: two labs, solutions, fixtures, faults and instructor-only files.
void make_course(const fs::path& r) {
  for (const char* lab : {"lab01-a", "lab02-b"}) {
    write(r / "labs" / lab / "kernel.cu", "skeleton\n");
    write(r / "labs" / lab / "lab.json", "{}\n");
    write(r / "solutions" / lab / "kernel.cu", "solution\n");
    write(r / "tests/fixtures" / lab / "wrong.cu", "wrong\n");
    write(r / "tests/faults" / lab / "broken.cu", "a solution with one thing broken\n");
    write(r / "tests/adversarial" / lab / "attack.cu", "a solution that tries to forge its grade\n");
  }
  write(r / "labs/lab01-a/.kernel.cu.swp", "editor junk");
  write(r / "grader/main.cpp", "main\n");
  write(r / "grader/.cache/x", "junk");
  write(r / "common/referee_main.cpp", "referee\n");
  write(r / "tests/CMakeLists.txt", "tests\n");
  write(r / "tests/labs_test.cpp", "labs test\n");
  for (const char* f : {"CMakeLists.txt", "CMakePresets.json", "scripts/setup", "scripts/check-format", ".clang-format",
                        "scripts/gpu-check", "docs/json-output.md", "docs/manifest.md", "docs/measurements/h100.md",
                        "README.md", "syllabus.md"})
    write(r / f, "x\n");
}

std::vector<std::string> names(const std::vector<fs::path>& v) {
  std::vector<std::string> out;
  for (const auto& p : v) out.push_back(p.generic_string());
  return out;
}

TEST_F(TempDir, SelectsChosenLabsAndSharedTreesButNoSolutionsFixturesOrJunk) {
  make_course(dir);
  const auto files = names(select_files(dir, {"lab02-b"}));
  const std::vector<std::string> want = {".clang-format",           "CMakeLists.txt",         "CMakePresets.json",
                                         "common/referee_main.cpp", "docs/json-output.md",    "docs/manifest.md",
                                         "grader/main.cpp",         "labs/lab02-b/kernel.cu", "labs/lab02-b/lab.json",
                                         "scripts/check-format",    "scripts/setup",          "tests/CMakeLists.txt",
                                         "tests/labs_test.cpp"};
  EXPECT_EQ(files, want);
}

TEST_F(TempDir, AllLabsSelectedAndDotFilesSkipped) {
  make_course(dir);
  const auto files = names(select_files(dir, {"lab01-a", "lab02-b"}));
  EXPECT_NE(std::find(files.begin(), files.end(), "labs/lab01-a/kernel.cu"), files.end());
  for (const auto& f : files) {
    EXPECT_EQ(f.find("solutions"), std::string::npos) << f;
    EXPECT_EQ(f.find("fixtures"), std::string::npos) << f;
    EXPECT_EQ(f.find("faults"), std::string::npos) << f;
    EXPECT_EQ(f.find("adversarial"), std::string::npos) << f;
    EXPECT_EQ(f.find("/."), std::string::npos) << f;
    EXPECT_NE(f, "scripts/gpu-check");
    EXPECT_NE(f, "README.md");  // generated, not copied
  }
}

TEST_F(TempDir, MissingRequiredFileIsAnError) {
  make_course(dir);
  fs::remove(dir / "CMakePresets.json");
  try {
    select_files(dir, {"lab01-a"});
    FAIL() << "expected a PublishError";
  } catch (const PublishError& e) {
    EXPECT_NE(std::string(e.what()).find("CMakePresets.json"), std::string::npos) << e.what();
    EXPECT_EQ(e.exit_code, 2);
  }
}

TEST(Publish, SyllabusKeepsOnlyPublishedRows) {
  const std::string s =
      "# Syllabus\n\n| lab | topic |\n|---|---|\n| lab00-hardware | know |\n| lab07-bank-conflicts | banks |\n"
      "| lab08-reduction | sums |\n\nText after lab00-hardware.\n";
  const std::string got = filter_syllabus(s, {"lab07-bank-conflicts"});
  EXPECT_EQ(
      got,
      "# Syllabus\n\n| lab | topic |\n|---|---|\n| lab07-bank-conflicts | banks |\n\nText after lab00-hardware.\n");
}

TEST(Publish, StudentReadmeDropsInstructorParts) {
  const std::string r =
      "# Course\n\nintro\n\n## For students\n\nloop\n\n```\n## not a heading\n```\n\n"
      "<!-- instructor-only -->\nsolutions/ live here\n<!-- /instructor-only -->\n\n"
      "## For instructors\n\n- grader publish\n\n## Layout\n\nlabs/\n";
  const std::string got = student_readme(r);
  EXPECT_NE(got.find("## For students"), std::string::npos);
  EXPECT_NE(got.find("## not a heading"), std::string::npos);
  EXPECT_NE(got.find("## Layout"), std::string::npos);
  EXPECT_EQ(got.find("For instructors"), std::string::npos) << got;
  EXPECT_EQ(got.find("grader publish"), std::string::npos) << got;
  EXPECT_EQ(got.find("solutions/"), std::string::npos) << got;
  EXPECT_EQ(got.find("instructor-only"), std::string::npos) << got;
  EXPECT_EQ(got.find("\n\n\n"), std::string::npos) << got;
}

TEST(Publish, StudentReadmeRejectsUnexpectedReadmes) {
  EXPECT_THROW(student_readme("# Course\n\n## For instructors\n"), PublishError);
  EXPECT_THROW(student_readme("## For students\n<!-- instructor-only -->\nx\n"), PublishError);
  EXPECT_THROW(student_readme("## For students\n<!-- /instructor-only -->\n"), PublishError);
}

const std::string kSkeleton =
    "__global__ void k(float* out) {\n  // TODO(step 1): write out (~2 lines)\n}\n\nvoid launch() {\n  // TODO(step "
    "2): launch (~1 line)\n}\n";
const std::string kSolution =
    "__global__ void k(float* out) {\n  const int i = threadIdx.x;\n  out[i] = 2.0f * i;\n}\n\nvoid launch() {\n  "
    "k<<<1, 32>>>(nullptr);\n}\n";

TEST(Publish, SolutionProbeFindsCopiesButNotSkeletonsOrHints) {
  const auto p = make_solution_probe("solutions/lab01-a/kernel.cu", kSkeleton, kSolution);
  ASSERT_EQ(p.blocks.size(), 2u);
  EXPECT_TRUE(contains_solution(kSolution, p));
  EXPECT_TRUE(contains_solution("// header\n" + kSolution + "// trailer\n", p));
  // Re-indented and with blank lines added: still the solution.
  EXPECT_TRUE(
      contains_solution("void x() {\n        const int i = threadIdx.x;\n\n out[i] = 2.0f * i;\n}\n"
                        "    k<<<1, 32>>>(nullptr);\n",
                        p));
  EXPECT_FALSE(contains_solution(kSkeleton, p));
  // A hint that quotes one filled-in line is not the solution.
  EXPECT_FALSE(contains_solution("{\"hints\": [\"k<<<1, 32>>>(nullptr);\"]}\n  k<<<1, 32>>>(nullptr);\n", p));
  // Part of a line is not the line.
  EXPECT_FALSE(contains_solution("x const int i = threadIdx.x;\nout[i] = 2.0f * i;\nk<<<1, 32>>>(nullptr);\n", p));
}

TEST_F(TempDir, LeakScanNamesTheFileAndTheSolution) {
  const auto p = make_solution_probe("solutions/lab01-a/kernel.cu", kSkeleton, kSolution);
  write(dir / "labs/lab01-a/kernel.cu", kSkeleton);
  write(dir / "grader/notes.txt", "copied:\n" + kSolution);
  const auto leaks = find_solution_leaks(dir, {p});
  ASSERT_EQ(leaks.size(), 1u);
  EXPECT_EQ(leaks[0], "grader/notes.txt: holds solutions/lab01-a/kernel.cu");
  fs::remove(dir / "grader/notes.txt");
  EXPECT_TRUE(find_solution_leaks(dir, {p}).empty());
}

TEST_F(TempDir, ManifestProtectsEverythingButStudentFilesAndVerifySeesEdits) {
  write(dir / "labs/lab01-a/kernel.cu", "student\n");
  write(dir / "labs/lab01-a/driver.cu", "driver\n");
  write(dir / "grader/main.cpp", "main\n");
  write(dir / ".reference/lab01-a/skeleton/kernel.cu", "skeleton\n");
  const auto m = make_published_manifest(dir, {"lab01-a"}, {"labs/lab01-a/kernel.cu"});
  EXPECT_EQ(m["files"].size(), 3u);
  EXPECT_FALSE(m["files"].contains("labs/lab01-a/kernel.cu"));
  EXPECT_EQ(m["files"]["grader/main.cpp"], sha256_hex("main\n"));
  write(dir / kPublishedManifest, m.dump());

  auto v = verify_published(dir);
  EXPECT_TRUE(v.ok());
  EXPECT_EQ(v.checked, 3u);
  write(dir / "labs/lab01-a/kernel.cu", "the student's work\n");
  EXPECT_TRUE(verify_published(dir).ok());
  write(dir / "labs/lab01-a/driver.cu", "driver, edited\n");
  fs::remove(dir / ".reference/lab01-a/skeleton/kernel.cu");
  v = verify_published(dir);
  EXPECT_FALSE(v.ok());
  EXPECT_EQ(v.modified, std::vector<std::string>{"labs/lab01-a/driver.cu"});
  EXPECT_EQ(v.missing, std::vector<std::string>{".reference/lab01-a/skeleton/kernel.cu"});
}

TEST_F(TempDir, VerifyOutsideAPublishedCopyIsAUsageError) {
  try {
    verify_published(dir);
    FAIL();
  } catch (const PublishError& e) {
    EXPECT_EQ(e.exit_code, 2);
    EXPECT_NE(std::string(e.what()).find("not a published class copy"), std::string::npos);
  }
  write(dir / kPublishedManifest, "{not json");
  EXPECT_THROW(verify_published(dir), PublishError);
}

}  // namespace
