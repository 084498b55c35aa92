#include "publish.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>

#include "calibration.hpp"
#include "committed_course.hpp"
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
  write(r / "common/referee/referee_main.cpp", "referee\n");
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
  const std::vector<std::string> want = {
      ".clang-format",         "CMakeLists.txt",       "CMakePresets.json", "common/referee/referee_main.cpp",
      "docs/json-output.md",   "docs/manifest.md",     "grader/main.cpp",   "labs/lab02-b/kernel.cu",
      "labs/lab02-b/lab.json", "scripts/check-format", "scripts/setup",     "tests/CMakeLists.txt",
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

// ---- what publish reads: the last commit ----

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// git in `dir`, with an identity of its own so that no user configuration is needed.
void git(const fs::path& dir, const std::string& args) {
  const std::string cmd = "cd '" + dir.string() +
                          "' && git -c user.name=t -c user.email=t@example.com -c commit.gpgsign=false " + args +
                          " >/dev/null 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
}

const char* kLabJson = R"({"format_version": 1, "id": "lab01", "title": "A",
  "steps": [{"id": 1, "title": "Double", "checks": [{"kind": "ptx", "kernel": "k", "must_contain": ["st.global"]}],
             "hints": ["paid: out[i] = 2.0f * in[i] + bias[i];"],
             "symptom_hints": {"mismatch": "Each output is twice its input plus its bias."}}]})";
const char* kLabSkeleton =
    "__global__ void k(float* out, const float* in, const float* bias, int i) {\n"
    "  // TODO(step 1): write twice the input plus the bias (~1 line)\n"
    "  out[i] = in[i];\n"
    "}\n";
const char* kLabSolution =
    "__global__ void k(float* out, const float* in, const float* bias, int i) {\n"
    "  out[i] = 2.0f * in[i] + bias[i];\n"
    "}\n";

// A course publish accepts: one lab, its solution, the trees and files a copy needs.
void make_publishable_course(const fs::path& r) {
  const fs::path lab = r / "labs/lab01-a";
  write(lab / "kernel.cu", kLabSkeleton);
  write(lab / "lab.json", kLabJson);
  write(lab / "README.md", "# lab01\n");
  write(lab / "lab.cuh", "#pragma once\n");
  write(lab / "driver.cu", "// the driver\n");
  write(r / "solutions/lab01-a/kernel.cu", kLabSolution);
  write(r / "grader/main.cpp", "main\n");
  write(r / "common/referee/referee_main.cpp", "referee\n");
  write(r / "tests/CMakeLists.txt", "tests\n");
  for (const char* f : {"CMakeLists.txt", "CMakePresets.json", "scripts/setup", "scripts/check-format", ".clang-format",
                        "docs/json-output.md", "docs/manifest.md"})
    write(r / f, "x\n");
  write(r / "README.md", "# Course\n\n## For students\n\nloop\n\n## For instructors\n\npublish\n");
  write(r / "syllabus.md", "| lab01-a | a |\n");
}

class GitCourse : public TempDir {
 protected:
  void SetUp() override {
    TempDir::SetUp();
    if (std::system("git --version >/dev/null 2>&1") != 0) GTEST_SKIP() << "git is not installed";
    course = dir / "course";
    make_publishable_course(course);
    fs::permissions(course / "scripts/setup", fs::perms::owner_exec, fs::perm_options::add);
    git(course, "init -q");
    git(course, "add -A");
    git(course, "commit -q -m course");
  }
  PublishResult publish_to(const std::string& name, PublishOptions o = {}) {
    o.out = dir / name;
    return publish(Course::open(course), o);
  }
  // The PublishError a publish throws (its message and exit code), or "" and 0.
  std::pair<std::string, int> refusal(const std::string& name, PublishOptions o = {}) {
    try {
      publish_to(name, o);
    } catch (const PublishError& e) {
      return {e.what(), e.exit_code};
    }
    return {"", 0};
  }
  fs::path course;
};

TEST_F(GitCourse, PublishesTheLastCommit) {
  const auto r = publish_to("class");
  EXPECT_EQ(r.source.rfind("commit ", 0), 0u) << r.source;
  EXPECT_EQ(read(dir / "class/labs/lab01-a/kernel.cu"), kLabSkeleton);
  EXPECT_EQ(read(published_skeleton(dir / "class", "lab01-a", "kernel.cu")), kLabSkeleton);
  EXPECT_TRUE((fs::status(dir / "class/scripts/setup").permissions() & fs::perms::owner_exec) != fs::perms::none);
  EXPECT_FALSE(fs::exists(dir / "class/solutions"));
  // The export of HEAD is gone.
  for (const auto& e : fs::directory_iterator(fs::temp_directory_path()))
    EXPECT_EQ(e.path().filename().string().find("grader-publish-head-" + std::to_string(getpid())), std::string::npos)
        << e.path();
}

// A calibration goes to the class, its thresholds without the fixtures' names and medians.
TEST_F(GitCourse, ACalibrationIsCarriedWithoutTheFixturesItWasMadeFrom) {
  Calibration c;
  c.gpu = "NVIDIA H200";
  c.toolkit = "13.0.88";
  c.labs["lab01-a"]["step1:speedup:64"] = {CalibratedCheck::Status::moved,
                                           2.0,
                                           1.75,
                                           3.0,
                                           {{"alt_hidden_trick", 1.95}},
                                           {{"cheat", 1.2}},
                                           "alt_hidden_trick"};
  write(course / "calibration/nvidia-h200.json", calibration_to_json(c).dump());
  write(course / "calibration/design.json", R"({"gpu": "NVIDIA H100 80GB HBM3"})");
  git(course, "add -A");
  git(course, "commit -q -m calibration");
  publish_to("class");
  const std::string carried = read(dir / "class/calibration/nvidia-h200.json");
  EXPECT_EQ(carried.find("alt_hidden_trick"), std::string::npos) << carried;
  EXPECT_EQ(carried.find("cheat"), std::string::npos) << carried;
  EXPECT_DOUBLE_EQ(
      read_calibration(dir / "class/calibration/nvidia-h200.json").labs.at("lab01-a").at("step1:speedup:64").min, 1.75);
  EXPECT_EQ(design_gpu(dir / "class"), "NVIDIA H100 80GB HBM3");
}

// The hostile tester's course: a near-solution in kernel.cu and a scratch file in the lab folder.
TEST_F(GitCourse, AModifiedOrUntrackedFileRefusesThePublishNamingIt) {
  write(course / "labs/lab01-a/kernel.cu", kLabSolution);
  write(course / "labs/lab01-a/scratch.cu", "// almost there\n");
  write(course / "labs/lab01-a/.kernel.cu.swp", "editor junk, never copied");
  write(course / "tests/fixtures/lab01-a/new.cu", "a fixture, never copied");
  const auto [message, code] = refusal("class");
  EXPECT_EQ(code, 2);
  EXPECT_NE(message.find("labs/lab01-a/kernel.cu (modified)"), std::string::npos) << message;
  EXPECT_NE(message.find("labs/lab01-a/scratch.cu (untracked)"), std::string::npos) << message;
  EXPECT_EQ(message.find(".kernel.cu.swp"), std::string::npos) << message;
  EXPECT_EQ(message.find("tests/fixtures"), std::string::npos) << message;
  EXPECT_NE(message.find("git commit"), std::string::npos) << message;
  EXPECT_NE(message.find("git stash --include-untracked"), std::string::npos) << message;
  EXPECT_FALSE(fs::exists(dir / "class"));
}

// What git does not report (an ignored file, a change git is told to overlook)
// still never reaches the copy: it is read from the commit, not the disk.
TEST_F(GitCourse, AFileGitDoesNotReportIsStillReadFromTheCommit) {
  git(course, "update-index --assume-unchanged labs/lab01-a/kernel.cu");
  write(course / "labs/lab01-a/kernel.cu", kLabSolution);
  write(course / "labs/lab01-a/scratch.cu", "// almost there\n");
  write(course / ".git/info/exclude", "scratch.cu\n");
  publish_to("class");
  EXPECT_EQ(read(dir / "class/labs/lab01-a/kernel.cu"), kLabSkeleton);
  EXPECT_EQ(read(published_skeleton(dir / "class", "lab01-a", "kernel.cu")), kLabSkeleton);
  EXPECT_FALSE(fs::exists(dir / "class/labs/lab01-a/scratch.cu"));
}

TEST_F(GitCourse, ACourseOutsideGitNeedsFromWorkingTree) {
  fs::remove_all(course / ".git");
  write(course / "labs/lab01-a/scratch.cu", "// a leftover\n");
  const auto [message, code] = refusal("class");
  EXPECT_EQ(code, 2);
  EXPECT_NE(message.find("is not in a git repository"), std::string::npos) << message;
  EXPECT_NE(message.find("--from-working-tree"), std::string::npos) << message;
  PublishOptions o;
  o.from_working_tree = true;
  const auto r = publish_to("class", o);
  EXPECT_EQ(r.source, "the working tree (--from-working-tree)");
  EXPECT_TRUE(fs::exists(dir / "class/labs/lab01-a/scratch.cu"));  // as documented: the disk as it is
  ASSERT_FALSE(r.notes.empty());
  EXPECT_NE(r.notes[0].find("uncommitted edits and untracked files included"), std::string::npos) << r.notes[0];
}

TEST_F(GitCourse, ADriverHoldingAStepsFixIsNotPublished) {
  write(course / "labs/lab01-a/driver.cu",
        "__global__ void baseline(float* out, const float* in, const float* bias, int i) {\n"
        "  out[i] = 2.0f * in[i] + bias[i];  // the plain version\n}\n");
  git(course, "commit -q -a -m baseline");
  const auto [message, code] = refusal("class");
  EXPECT_EQ(code, 2);
  EXPECT_NE(message.find("labs/lab01-a/driver.cu holds step 1's fix"), std::string::npos) << message;
  EXPECT_FALSE(fs::exists(dir / "class"));
}

TEST_F(GitCourse, AFreeHintStatingAStepsFixIsNotPublishedButAPaidOneIs) {
  std::string lab = kLabJson;
  lab.replace(lab.find("Each output is twice its input plus its bias."), 45, "Write out[i] = 2.0f * in[i] + bias[i];");
  write(course / "labs/lab01-a/lab.json", lab);
  git(course, "commit -q -a -m hint");
  const auto [message, code] = refusal("class");
  EXPECT_EQ(code, 2);
  EXPECT_NE(message.find("the free symptom hint \"mismatch\" of step 1 states step 1's fix"), std::string::npos)
      << message;
  // The paid hint holds the same line in every test of this file.
  EXPECT_EQ(message.find("labs/lab01-a/lab.json holds"), std::string::npos) << message;
}

TEST_F(GitCourse, AHintPenaltyWarnsThatUploadsSelfReportTheirHints) {
  PublishOptions o;
  o.hint_penalty = 0.5;
  const auto r = publish_to("class", o);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("honour system"), std::string::npos) << r.warnings[0];
  EXPECT_NE(r.warnings[0].find(".grader/progress.json"), std::string::npos) << r.warnings[0];
  o.hint_penalty = 0;
  o.force = true;
  EXPECT_TRUE(publish_to("class", o).warnings.empty());
  o.hint_penalty.reset();
  EXPECT_TRUE(publish_to("class", o).warnings.empty());
}

TEST(Publish, ReadByPublishSkipsWhatIsNeverCopied) {
  EXPECT_TRUE(read_by_publish("labs/lab07-x/kernel.cu"));
  EXPECT_TRUE(read_by_publish("labs/lab07-x/scratch.cu"));
  EXPECT_TRUE(read_by_publish(".clang-format"));
  EXPECT_FALSE(read_by_publish("labs/lab07-x/.kernel.cu.swp"));
  EXPECT_FALSE(read_by_publish("grader/.cache/x"));
  EXPECT_FALSE(read_by_publish("tests/fixtures/lab07-x/wrong.cu"));
  EXPECT_FALSE(read_by_publish("tests/adversarial/lab07-x/attack.cu"));
}

TEST(Publish, GitStatusIsParsedRelativeToTheCourse) {
  const std::string z = std::string(" M course/labs/a/kernel.cu") + '\0' + "?? course/labs/a/scratch.cu" + '\0' +
                        "R  course/labs/a/new.cu" + '\0' + "course/labs/a/old.cu" + '\0' + " D course/README.md" + '\0';
  const auto files = parse_git_status(z, "course/");
  ASSERT_EQ(files.size(), 4u);
  EXPECT_EQ(files[0].path, "labs/a/kernel.cu");
  EXPECT_EQ(files[0].state, "modified");
  EXPECT_EQ(files[1].state, "untracked");
  EXPECT_EQ(files[2].path, "labs/a/new.cu");
  EXPECT_EQ(files[2].state, "renamed");
  EXPECT_EQ(files[3].path, "README.md");
  EXPECT_EQ(files[3].state, "deleted");
}

}  // namespace
