// The fault suite: submissions broken on purpose, in tests/faults/<lab>/*.cu,
// each a whole kernel.cu with a header that says what is wrong, the verdict
// the grader must give and words it must use:
//
//   // fault: the launcher calls cudaDeviceReset() after the kernel
//   // expect: step 1 fails: correct (cuda_error)
//   // message: (case acc-1)
//
// They are graded like tests/fixtures (labs_test.cpp): Static instances with
// the grader told there is no GPU (build failures and ptx/ptxas verdicts must
// hold exactly, with their messages; the others must not be contradicted), Gpu
// instances with the full verdict, skipped without a GPU. Robustness tests of
// the grader binary itself (Ctrl-C in the middle of a grade) live here too.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "child_process.hpp"
#include "course_runs.hpp"
#include "fixture_verdict.hpp"
#include "manifest.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

using course_runs::Fixture;
using course_runs::kRoot;
using course_runs::read;
using course_runs::run_grader;

const fs::path kFaults = kRoot / "tests" / "faults";

std::vector<Fixture> faults() { return course_runs::fixtures_in(kFaults); }

#define REQUIRE_FAULTS()                                                                            \
  do {                                                                                              \
    if (!fs::exists(kFaults)) GTEST_SKIP() << "no tests/faults/ (a published class copy has none)"; \
  } while (0)

// ---- the suite's shape (no compiler needed) ----

// A folder under tests/faults/ that is not a lab's would be skipped silently.
TEST(FaultSuite, EveryFolderIsALab) {
  REQUIRE_FAULTS();
  const auto labs = course_runs::lab_folders();
  for (const auto& entry : fs::directory_iterator(kFaults)) {
    EXPECT_TRUE(entry.is_directory()) << entry.path() << ": faults go in tests/faults/<lab folder>/";
    if (entry.is_directory())
      EXPECT_NE(std::find(labs.begin(), labs.end(), entry.path().filename().string()), labs.end())
          << entry.path() << " is not a lab folder";
  }
}

TEST(FaultSuite, EveryFaultSaysWhatIsWrongWhatItGetsAndWhatItIsTold) {
  REQUIRE_FAULTS();
  static const std::regex fault_line(R"((?:^|\n)// fault: \S[^\n]*)");
  for (const auto& f : faults()) {
    SCOPED_TRACE(f.file.string());
    const std::string text = read(f.file);
    EXPECT_TRUE(std::regex_search(text, fault_line)) << "no \"// fault: <what is wrong>\" line";
    try {
      const auto e = grader::read_expectation(f.file);
      // A fault the grader is immune to (a host sleep the timing never sees) passes: nothing to show.
      if (e.kind != grader::FixtureExpectation::all_pass)
        EXPECT_FALSE(e.messages.empty()) << "no \"// message: <text the failure must show>\" line";
      const auto manifest = grader::load_manifest(kRoot / "labs" / f.lab / "lab.json");
      EXPECT_EQ(grader::expectation_problem(e, manifest), "");
    } catch (const grader::ExpectationError& e) {
      ADD_FAILURE() << e.what();
    }
  }
}

TEST(FaultSuite, HasAtLeastThirtyFaultsInAtLeastSixLabs) {
  REQUIRE_FAULTS();
  const auto all = faults();
  std::set<std::string> labs;
  for (const auto& f : all) labs.insert(f.lab);
  EXPECT_GE(all.size(), 30u);
  EXPECT_GE(labs.size(), 6u);
}

// ---- static: real nvcc builds, no GPU ----

class StaticFault : public ::testing::TestWithParam<Fixture> {};

TEST_P(StaticFault, StaticVerdict) {
  const Fixture& f = GetParam();
  const auto e = grader::read_expectation(f.file);
  const auto g = run_grader({"grade", f.lab, "--submission", f.file.string()}, true);
  ASSERT_TRUE(g.out.is_object()) << g.raw << g.err;
  EXPECT_EQ(grader::static_verdict_mismatch(g.out, g.exit_code, e), "") << f.file;
}

GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(StaticFault);
INSTANTIATE_TEST_SUITE_P(Static, StaticFault, ::testing::ValuesIn(faults()),
                         [](const auto& info) { return course_runs::fixture_test_name(info.param); });

// ---- gpu ----

class GpuFault : public ::testing::TestWithParam<Fixture> {};

TEST_P(GpuFault, Verdict) {
  REQUIRE_GPU();
  const Fixture& f = GetParam();
  const auto g = run_grader({"grade", f.lab, "--submission", f.file.string()}, false);
  ASSERT_TRUE(g.out.is_object()) << "no JSON report (the grader " << g.ended << "); stdout: " << g.raw
                                 << " stderr: " << g.err;
  EXPECT_EQ(grader::verdict_mismatch(g.out, g.exit_code, grader::read_expectation(f.file)), "") << f.file;
}

GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(GpuFault);
INSTANTIATE_TEST_SUITE_P(Gpu, GpuFault, ::testing::ValuesIn(faults()),
                         [](const auto& info) { return course_runs::fixture_test_name(info.param); });

// ---- the grader itself ----

// Alive, and not a zombie waiting for its parent.
bool alive(int pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] != 'Z';
}

// The live processes whose process group is pgid.
std::vector<int> group_members(int pgid) {
  std::vector<int> pids;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    const auto close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 1));
    char state;
    int ppid, pgrp;
    if (rest >> state >> ppid >> pgrp && pgrp == pgid && state != 'Z') pids.push_back(std::stoi(name));
  }
  return pids;
}

std::vector<int> read_pids(const fs::path& file) {
  std::vector<int> pids;
  std::ifstream in(file);
  for (int pid; in >> pid;) pids.push_back(pid);
  return pids;
}

int parent_of(int pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return 0;
  std::istringstream rest(line.substr(line.rfind(')') + 1));
  char state;
  int ppid = 0;
  rest >> state >> ppid;
  return ppid;
}

class Robustness : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "fault_suite.XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

// Ctrl-C while the grader waits for nvcc: exit 130 at once, nvcc and what it
// started gone, progress.json exactly as before, no half-built cache entry.
// The compiler is a stand-in (CUDACXX) that records its pid and hangs, so the
// test needs no CUDA toolkit and the interrupt always lands mid-build.
TEST_F(Robustness, CtrlCInTheMiddleOfAGradeStopsEverythingAndKeepsProgress) {
  const fs::path course = dir_ / "course";
  fs::create_directories(course);
  for (const char* part : {"labs", "common", "solutions"})
    if (fs::exists(kRoot / part)) fs::copy(kRoot / part, course / part, fs::copy_options::recursive);
  fs::copy_file(kRoot / "syllabus.md", course / "syllabus.md");

  const fs::path progress = course / ".grader" / "progress.json";
  fs::create_directories(progress.parent_path());
  const std::string before =
      R"({"format_version": 1, "labs": {"lab07": {"steps_passed": [1, 2], "last_summary": "kept as it was"}}})";
  std::ofstream(progress) << before;

  // --version answers at once (the grader asks it first); a compile records
  // its pid and its child's, then waits for the child, which never ends.
  const fs::path pids = dir_ / "nvcc.pids";
  const fs::path nvcc = dir_ / "bin" / "nvcc";
  fs::create_directories(nvcc.parent_path());
  std::ofstream(nvcc)
      << "#!/bin/sh\n"
         "if [ \"$1\" = --version ]; then echo 'Cuda compilation tools, release 13.0, V13.0.88'; exit 0; fi\n"
         "sleep 300 &\n"
         "echo $$ $! >> '"
      << pids.string()
      << "'\n"
         "wait\n";
  fs::permissions(nvcc, fs::perms::owner_all);

  grader::ChildOptions o;
  o.argv = {GRADER_BIN, "--root", course.string(), "lab07"};
  o.stdout_file = dir_ / "out.txt";
  o.stderr_file = dir_ / "err.txt";
  o.timeout_s = 120;
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string kv = *e;
    if (kv.rfind("CUDACXX=", 0) != 0 && kv.rfind("GRADER_NO_GPU=", 0) != 0) env.push_back(kv);
  }
  env.push_back("CUDACXX=" + nvcc.string());
  env.push_back("GRADER_NO_GPU=1");  // no device probe: the first compile is the grade's own
  o.env = env;

  grader::ChildResult result;
  std::thread grade([&] { result = grader::run_child(o); });

  // Wait until the grader is compiling, then Ctrl-C it as a terminal would:
  // SIGINT to its process group (nvcc has a group of its own, so only the
  // grader can pass the interrupt on).
  std::vector<int> started;
  const auto t0 = std::chrono::steady_clock::now();
  while (started.empty() && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(60)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    started = read_pids(pids);
  }
  ASSERT_FALSE(started.empty()) << "the grader never ran the compiler: " << read(dir_ / "err.txt");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // let any parallel compile start too
  const int grader_pid = parent_of(started[0]);
  ASSERT_GT(grader_pid, 1);
  ASSERT_EQ(::kill(-grader_pid, SIGINT), 0);
  const auto interrupted_at = std::chrono::steady_clock::now();
  grade.join();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - interrupted_at).count();

  EXPECT_TRUE(result.exited) << result.describe();
  EXPECT_EQ(result.exit_code, 130) << read(dir_ / "err.txt");
  EXPECT_LT(seconds, 5.0);
  EXPECT_NE(read(dir_ / "err.txt").find("interrupted"), std::string::npos) << read(dir_ / "err.txt");

  // Every compiler and the sleep it started: gone, with their process groups.
  const auto all = read_pids(pids);
  ASSERT_EQ(all.size() % 2, 0u);
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    gone = std::none_of(all.begin(), all.end(), alive);
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (std::size_t i = 0; i < all.size(); i += 2) {
    EXPECT_FALSE(alive(all[i])) << "nvcc " << all[i] << " outlived the grader";
    EXPECT_FALSE(alive(all[i + 1])) << "its child " << all[i + 1] << " outlived the grader";
    EXPECT_TRUE(group_members(all[i]).empty()) << "process group " << all[i] << " still has members";
  }

  EXPECT_EQ(read(progress), before);
  for (const auto& entry : fs::directory_iterator(progress.parent_path()))
    EXPECT_EQ(entry.path().filename().string().rfind("progress.json.", 0), std::string::npos)
        << entry.path() << " left beside the progress file";
  if (fs::exists(course / ".grader" / "cache"))
    for (const auto& entry : fs::directory_iterator(course / ".grader" / "cache"))
      EXPECT_EQ(entry.path().filename().string().find(".tmp-"), std::string::npos)
          << entry.path() << ": a half-built cache entry was left behind";
}

}  // namespace
