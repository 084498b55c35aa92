// The adversarial suite: hostile submissions, in tests/adversarial/<lab>/*.cu,
// each a whole kernel.cu written by someone who has read the grader's source
// and tries to get a grade its kernel does not earn. Each says what it tries
// and the verdict it must get instead:
//
//   // attack: writes a passing verdict into the referee's stdout through /proc
//   // expect: step 1 fails: correct (mismatch)
//   // message: elements of `out` differ from the expected result
//   // not-shown: root:x:0:0
//
// "not-shown" lines name text that must appear nowhere in the grade report
// (what an attack tried to have quoted back: a solution, a system file);
// "survivor" lines name a process (by its comm) that must not outlive the grade.
// "@COURSE_ROOT@" in a file is replaced with the course's absolute path before
// it is graded: a submission knows every path.
//
// Static instances run without a GPU (build-time attacks must fail the build
// exactly; the rest must not pass a static check they should not). Gpu
// instances grade each one as a batch would, with the submission isolated
// (bwrap where it works, else rlimits), and need a device.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "course_runs.hpp"
#include "fixture_verdict.hpp"
#include "manifest.hpp"
#include "sandbox.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

using course_runs::Fixture;
using course_runs::kRoot;
using course_runs::read;
using course_runs::run_grader;

const fs::path kSuite = kRoot / "tests" / "adversarial";

std::vector<Fixture> attacks() { return course_runs::fixtures_in(kSuite); }

std::vector<std::string> lines_after(const std::string& text, const std::string& prefix) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(prefix, 0) == 0) out.push_back(line.substr(prefix.size()));
  return out;
}

// The file as graded: @COURSE_ROOT@ replaced, under the attack's own name, in
// a folder of this test's own that goes with it.
class Materialised {
 public:
  explicit Materialised(const Fixture& f)
      : dir_(fs::temp_directory_path() / ("adversarial-" + std::to_string(getpid()))) {
    fs::create_directories(dir_ / f.lab);
    std::string text = read(f.file);
    for (std::size_t at; (at = text.find("@COURSE_ROOT@")) != std::string::npos;) text.replace(at, 13, kRoot.string());
    file_ = dir_ / f.lab / f.file.filename();
    std::ofstream(file_, std::ios::binary) << text;
  }
  ~Materialised() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  Materialised(const Materialised&) = delete;
  Materialised& operator=(const Materialised&) = delete;
  std::string file() const { return file_.string(); }

 private:
  fs::path dir_, file_;
};

std::string shown_anywhere(const course_runs::GraderRun& g, const Fixture& f) {
  const std::string everything = g.raw + g.err;
  for (const auto& text : lines_after(read(f.file), "// not-shown: "))
    if (everything.find(text) != std::string::npos) return "the report shows \"" + text + "\"";
  return "";
}

// "// survivor: NAME" lines name a process an attack starts to outlive its grade
// (its name as prctl sets it, /proc/<pid>/comm): none may be left once the grade
// has returned.
std::string survivors(const Fixture& f) {
  std::string left;
  for (const auto& name : lines_after(read(f.file), "// survivor: ")) {
    std::error_code ec;
    for (fs::directory_iterator it("/proc", ec), end; !ec && it != end; it.increment(ec)) {
      std::string comm = read(it->path() / "comm");
      while (!comm.empty() && comm.back() == '\n') comm.pop_back();
      if (comm == name) left += " " + name + " (pid " + it->path().filename().string() + ")";
    }
  }
  return left.empty() ? "" : "outlived the grade:" + left;
}

// The isolation of batch grading, for a single grade: the mode the test's own
// environment names (GRADER_ISOLATE=rlimits, to prove both modes give the same
// verdicts on a machine where bwrap works), else bwrap where it works.
std::vector<std::string> isolated_environment() {
  const char* named = std::getenv(grader::kIsolateVar);
  const std::string mode = named && *named ? named : grader::probe_bwrap().works ? "bwrap" : "rlimits";
  return {std::string(grader::kIsolateVar) + "=" + mode, std::string(grader::kIsolateHideVar) + "=" + kRoot.string()};
}

#define REQUIRE_SUITE()                                                                                 \
  do {                                                                                                  \
    if (!fs::exists(kSuite)) GTEST_SKIP() << "no tests/adversarial/ (a published class copy has none)"; \
  } while (0)

TEST(AdversarialSuite, EveryAttackSaysWhatItTriesAndWhatItMustGet) {
  REQUIRE_SUITE();
  std::size_t count = 0;
  for (const auto& f : attacks()) {
    SCOPED_TRACE(f.file.string());
    ++count;
    const std::string text = read(f.file);
    EXPECT_FALSE(lines_after(text, "// attack: ").empty()) << "no \"// attack: <what it tries>\" line";
    const auto e = grader::read_expectation(f.file);
    EXPECT_NE(e.kind, grader::FixtureExpectation::all_pass) << "an attack that passes is not in this suite";
    EXPECT_FALSE(e.messages.empty()) << "no \"// message: <text the failure must show>\" line";
    EXPECT_EQ(grader::expectation_problem(e, grader::load_manifest(kRoot / "labs" / f.lab / "lab.json")), "");
  }
  EXPECT_GE(count, 39u) << "the suite covers every row of docs/security.md's table";
}

class StaticAttack : public ::testing::TestWithParam<Fixture> {};

TEST_P(StaticAttack, StaticVerdict) {
  const Fixture& f = GetParam();
  const auto e = grader::read_expectation(f.file);
  const Materialised submission(f);
  const auto g = run_grader({"grade", f.lab, "--submission", submission.file()}, true, isolated_environment());
  ASSERT_TRUE(g.out.is_object()) << g.raw << g.err;
  EXPECT_EQ(grader::static_verdict_mismatch(g.out, g.exit_code, e), "") << f.file;
  EXPECT_EQ(shown_anywhere(g, f), "") << f.file;
}

class GpuAttack : public ::testing::TestWithParam<Fixture> {};

TEST_P(GpuAttack, Verdict) {
  REQUIRE_GPU();
  const Fixture& f = GetParam();
  const Materialised submission(f);
  const auto g = run_grader({"grade", f.lab, "--submission", submission.file()}, false, isolated_environment());
  ASSERT_TRUE(g.out.is_object()) << g.raw << g.err;
  EXPECT_EQ(grader::verdict_mismatch(g.out, g.exit_code, grader::read_expectation(f.file)), "") << f.file;
  EXPECT_EQ(shown_anywhere(g, f), "") << f.file;
  EXPECT_EQ(survivors(f), "") << f.file;
}

GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(StaticAttack);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(GpuAttack);
INSTANTIATE_TEST_SUITE_P(Static, StaticAttack, ::testing::ValuesIn(attacks()),
                         [](const auto& info) { return course_runs::fixture_test_name(info.param); });
INSTANTIATE_TEST_SUITE_P(Gpu, GpuAttack, ::testing::ValuesIn(attacks()),
                         [](const auto& info) { return course_runs::fixture_test_name(info.param); });

}  // namespace
