// A grade in a child grader process: its command line, its report read back,
// and what is said when no report comes (a crash, a hang, garbage).
#include "child_grade.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "options.hpp"

namespace fs = std::filesystem;
using namespace grader;

namespace {

class ChildGrade : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = fs::temp_directory_path() / ("child_grade_test-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    call.course_root = "/course";
    call.lab = "lab07-bank-conflicts";
    call.submission = "/course/tests/fixtures/x.cu";
    call.arch = "sm_90";
    call.work_dir = dir / "work";
    call.timeout_s = 20;
  }
  void TearDown() override { fs::remove_all(dir); }
  // A stand-in grader: a shell script.
  void grader_script(const std::string& body) {
    call.grader = dir / "grader.sh";
    std::ofstream(call.grader) << "#!/bin/sh\n" << body << "\n";
    fs::permissions(call.grader, fs::perms::owner_all);
  }
  fs::path dir;
  ChildGradeCall call;
};

GradeReport a_report() {
  GradeReport r;
  r.lab_folder = "lab07-bank-conflicts";
  r.title = "Bank conflicts";
  r.arch = "sm_90";
  r.student_build.ok = true;
  StepResult st;
  st.id = 1;
  st.title = "tile";
  st.status = Outcome::fail;
  CheckResult c;
  c.kind = CheckKind::correct;
  c.status = Outcome::fail;
  c.summary = "case 1x1: 1 of 1 elements differ";
  st.checks.push_back(c);
  r.steps.push_back(st);
  r.current_step = 1;
  r.exit_code = kExitStepFailed;
  return r;
}

}  // namespace

TEST_F(ChildGrade, ItsCommandIsAFreshJsonGradeAndItsReportReadsBack) {
  std::ofstream(dir / "report.json") << report_to_json(a_report()).dump();
  grader_script("printf '%s\\n' \"$@\" > " + (dir / "argv").string() + "; cat " + (dir / "report.json").string() +
                "; exit 1");
  call.all_steps = true;
  call.one_step_at_a_time = true;
  call.first_failure_only = true;
  call.decide_margin = 1.25;
  call.cap_s = 2.5;
  const GradeReport r = grade_in_child(call);
  EXPECT_EQ(r.exit_code, kExitStepFailed);
  EXPECT_EQ(r.current_step, 1);
  ASSERT_EQ(r.steps.size(), 1u);
  EXPECT_EQ(r.steps[0].checks[0].summary, "case 1x1: 1 of 1 elements differ");
  std::ifstream in(dir / "argv");
  std::vector<std::string> argv;
  for (std::string line; std::getline(in, line);) argv.push_back(line);
  const std::vector<std::string> want = {"--json",
                                         "--no-color",
                                         "--root",
                                         "/course",
                                         "--arch",
                                         "sm_90",
                                         "grade",
                                         "lab07-bank-conflicts",
                                         "--submission",
                                         "/course/tests/fixtures/x.cu",
                                         "--fresh",
                                         "--cap",
                                         "2.50",
                                         "--all",
                                         "--one-step-at-a-time",
                                         "--first-failure-only",
                                         "--decide-margin",
                                         "1.2500"};
  EXPECT_EQ(argv, want);
}

TEST_F(ChildGrade, NoReportSaysHowTheGradeEndedAndWhatItPrintedLast) {
  grader_script("echo 'nvcc: not found' >&2; exit 4");
  try {
    grade_in_child(call);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("exited 4 without a report"), std::string::npos) << what;
    EXPECT_NE(what.find("nvcc: not found"), std::string::npos) << what;
  }
  grader_script("echo '{\"schema\": \"cuda-memory-labs/grade/1\"}'");
  EXPECT_THROW(grade_in_child(call), std::runtime_error);  // a report missing its keys
  grader_script("kill -SEGV $$");
  try {
    grade_in_child(call);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("killed by signal 11"), std::string::npos) << e.what();
  }
}

TEST_F(ChildGrade, AGradeThatHangsIsStoppedAtItsLimit) {
  grader_script("sleep 30");
  call.timeout_s = 0.5;
  try {
    grade_in_child(call);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("was stopped"), std::string::npos) << e.what();
  }
}

// A check spread over several GPUs gives each child the one it grades on, in
// place of whatever this process was given; without one the child inherits.
TEST_F(ChildGrade, VisibleGpuReplacesTheChildsCudaVisibleDevices) {
  std::ofstream(dir / "report.json") << report_to_json(a_report()).dump();
  grader_script("printf '[%s]' \"$CUDA_VISIBLE_DEVICES\" > " + (dir / "seen").string() +
                "; env | grep -c '^CUDA_VISIBLE_DEVICES=' >> " + (dir / "seen").string() + "; cat " +
                (dir / "report.json").string() + "; exit 1");
  ::setenv("CUDA_VISIBLE_DEVICES", "2,3", 1);
  call.visible_gpu = "3";
  grade_in_child(call);
  std::ifstream seen(dir / "seen");
  std::string text((std::istreambuf_iterator<char>(seen)), {});
  EXPECT_EQ(text, "[3]1\n");
  call.visible_gpu.clear();
  grade_in_child(call);
  std::ifstream again(dir / "seen");
  text.assign((std::istreambuf_iterator<char>(again)), {});
  ::unsetenv("CUDA_VISIBLE_DEVICES");
  EXPECT_EQ(text, "[2,3]1\n");
}
