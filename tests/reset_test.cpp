// `grader reset`, by the real grader binary, on small temporary courses: the
// student's file is backed up and the skeleton restored, from the course's
// git HEAD or from a class copy's .reference/<lab>/skeleton/; it refuses to
// ask on a stdin that is not a terminal, and does nothing to a file that
// already is the skeleton. No toolkit or GPU needed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "child_process.hpp"
#include "toolchain.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const fs::path kRoot = COURSE_ROOT;
const std::string kLab = "lab07-bank-conflicts";

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

struct Result {
  int exit_code = -1;
  std::string out, err;
};

// stdin is /dev/null (run_child's), so never a terminal.
Result run(std::vector<std::string> argv, const fs::path& cwd) {
  static int counter = 0;
  const fs::path dir =
      fs::temp_directory_path() / ("reset_test-out-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
  fs::create_directories(dir);
  grader::ChildOptions o;
  o.argv = std::move(argv);
  o.cwd = cwd;
  o.timeout_s = 120;
  o.stdout_file = dir / "out";
  o.stderr_file = dir / "err";
  const auto r = grader::run_child(o);
  Result g;
  g.exit_code = r.exited ? r.exit_code : -1;
  g.out = read(o.stdout_file);
  g.err = read(o.stderr_file);
  if (!r.exited) g.err += "\n[" + r.describe() + "]";
  fs::remove_all(dir);
  return g;
}

// Backup files of lab07, sorted by name.
std::vector<fs::path> backups(const fs::path& root) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root / ".grader" / "backups" / "lab07", ec)) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

class Reset : public ::testing::Test {
 protected:
  void SetUp() override {
    root = fs::temp_directory_path() / ("reset_test-" + std::to_string(getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root);
    fs::create_directories(root / "labs");
    fs::copy(kRoot / "labs" / kLab, root / "labs" / kLab, fs::copy_options::recursive);
    fs::copy_file(kRoot / "syllabus.md", root / "syllabus.md");
    kernel = root / "labs" / kLab / "kernel.cu";
    skeleton = read(kernel);
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(root);  // kept after a failure, to look at
  }

  Result reset(std::vector<std::string> args) {
    std::vector<std::string> argv = {GRADER_BIN, "--no-color", "--root", root.string(), "reset", "lab07"};
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv, root);
  }
  // The course as its own git repository, the committed kernel.cu being the skeleton.
  void commit_course() {
    const auto git = grader::find_on_path("git");
    if (!git) GTEST_SKIP() << "git is not on PATH";
    const std::vector<std::string> id = {
        git->string(),         "-c", "user.name=reset_test", "-c", "user.email=reset_test@example.invalid", "-c",
        "commit.gpgsign=false"};
    for (std::vector<std::string> args :
         {std::vector<std::string>{"init", "-q"}, {"add", "-A"}, {"commit", "-qm", "course"}}) {
      std::vector<std::string> argv = id;
      argv.insert(argv.end(), args.begin(), args.end());
      const Result r = run(argv, root);
      ASSERT_EQ(r.exit_code, 0) << args[0] << ": " << r.out << r.err;
    }
  }

  fs::path root, kernel;
  std::string skeleton;
};

TEST_F(Reset, FromGitBacksUpTheStudentsFileAndRestoresTheSkeleton) {
  commit_course();
  if (IsSkipped() || HasFatalFailure()) return;
  const std::string mine = skeleton + "\n// my work on step 1\n";
  write(kernel, mine);
  write(root / ".grader" / "progress.json", R"({"format_version": 1, "labs": {"lab07": {"steps_passed": [1]}}})");
  const std::string progress = read(root / ".grader" / "progress.json");

  const Result r = reset({"--yes"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(read(kernel), skeleton);
  const auto saved = backups(root);
  ASSERT_EQ(saved.size(), 1u);
  EXPECT_TRUE(std::regex_match(saved[0].filename().string(), std::regex(R"(kernel-\d{8}T\d{6}Z\.cu)"))) << saved[0];
  EXPECT_EQ(read(saved[0]), mine);
  EXPECT_NE(r.out.find("git show HEAD:./labs/" + kLab + "/kernel.cu"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(".grader/backups/lab07/" + saved[0].filename().string()), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("progress in lab07 is kept"), std::string::npos) << r.out;
  EXPECT_EQ(read(root / ".grader" / "progress.json"), progress);
}

TEST_F(Reset, RefusesWithoutYesWhenStdinIsNotATerminal) {
  commit_course();
  if (IsSkipped() || HasFatalFailure()) return;
  const std::string mine = skeleton + "\n// unsaved elsewhere\n";
  write(kernel, mine);
  const Result r = reset({});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("stdin is not a terminal"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--yes"), std::string::npos) << r.err;
  EXPECT_EQ(read(kernel), mine);
  EXPECT_TRUE(backups(root).empty());
}

TEST_F(Reset, DoesNothingWhenTheFileIsAlreadyTheSkeleton) {
  commit_course();
  if (IsSkipped() || HasFatalFailure()) return;
  const Result r = reset({});  // no --yes needed: there is nothing to confirm
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("already the skeleton"), std::string::npos) << r.out;
  EXPECT_EQ(read(kernel), skeleton);
  EXPECT_FALSE(fs::exists(root / ".grader" / "backups"));
}

TEST_F(Reset, NeverOverwritesAnEarlierBackup) {
  commit_course();
  if (IsSkipped() || HasFatalFailure()) return;
  // Two resets in quick succession, most likely within the same second.
  for (const std::string mark : {"first", "second"}) {
    write(kernel, skeleton + "// " + mark + " try\n");
    const Result r = reset({"--yes"});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  }
  const auto saved = backups(root);
  ASSERT_EQ(saved.size(), 2u);
  std::set<std::string> contents = {read(saved[0]), read(saved[1])};
  EXPECT_EQ(contents, (std::set<std::string>{skeleton + "// first try\n", skeleton + "// second try\n"}));
}

TEST_F(Reset, InAClassCopyRestoresThePublishedSkeleton) {
  // The layout `grader publish` writes: a manifest, and the skeleton under .reference/.
  write(root / ".grader-manifest.json", R"({"schema": "cuda-memory-labs/published/1", "files": {}})");
  const std::string published = "// the skeleton as handed out\n";
  write(root / ".reference" / kLab / "skeleton" / "kernel.cu", published);
  const Result r = reset({"--yes", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["schema"], "cuda-memory-labs/reset/1");
  EXPECT_EQ(j["reset"], true);
  EXPECT_NE(j["skeleton_from"].get<std::string>().find(".reference/" + kLab + "/skeleton/kernel.cu"), std::string::npos)
      << r.out;
  EXPECT_EQ(read(kernel), published);
  ASSERT_EQ(backups(root).size(), 1u);
  EXPECT_EQ(read(backups(root)[0]), skeleton);
  EXPECT_EQ(j["backup"], ".grader/backups/lab07/" + backups(root)[0].filename().string());
}

TEST_F(Reset, WithoutASkeletonExitsFourAndSaysWhy) {
  // Neither a git repository nor a class copy.
  write(kernel, skeleton + "// mine\n");
  Result r = reset({"--yes"});
  EXPECT_EQ(r.exit_code, 4) << r.out << r.err;
  EXPECT_NE(r.err.find("git show HEAD:./labs/" + kLab + "/kernel.cu"), std::string::npos) << r.err;
  EXPECT_EQ(read(kernel), skeleton + "// mine\n");

  // A class copy without the skeleton: never git, whose HEAD would be the student's commit.
  write(root / ".grader-manifest.json", R"({"schema": "cuda-memory-labs/published/1", "files": {}})");
  r = reset({"--yes"});
  EXPECT_EQ(r.exit_code, 4) << r.out << r.err;
  EXPECT_NE(r.err.find("this class copy has no .reference/" + kLab + "/skeleton/kernel.cu"), std::string::npos)
      << r.err;
  EXPECT_EQ(read(kernel), skeleton + "// mine\n");
  EXPECT_FALSE(fs::exists(root / ".grader" / "backups"));
}

}  // namespace
