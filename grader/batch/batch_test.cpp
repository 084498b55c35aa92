#include "batch.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

namespace fs = std::filesystem;
using nlohmann::json;
using namespace grader;

namespace {

class BatchDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = fs::temp_directory_path() / ("batch_test-" + std::to_string(::getpid()) + "-" +
                                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }
  void write(const fs::path& rel, const std::string& text) {
    fs::create_directories((dir / rel).parent_path());
    std::ofstream(dir / rel, std::ios::binary) << text;
  }
  fs::path dir;
};

const Submission* find(const std::vector<Submission>& v, const std::string& id) {
  for (const auto& s : v)
    if (s.id == id) return &s;
  return nullptr;
}

}  // namespace

TEST_F(BatchDir, DiscoversFoldersFilesAndEverythingElse) {
  write("alice/kernel.cu", "// a");
  write("alice/notes.md", "x");
  write("bob.cu", "// b");
  write("carol/main.cu", "// no kernel.cu");
  write("readme.txt", "x");
  write(".DS_Store", "x");
  write("bob/kernel.cu", "// the same id twice");
  fs::create_symlink(dir / "alice", dir / "mallory");
  const auto subs = discover_submissions(dir);
  ASSERT_EQ(subs.size(), 6u);
  EXPECT_EQ(subs[0].id, "alice");
  EXPECT_EQ(subs[0].source, dir / "alice" / "kernel.cu");
  EXPECT_EQ(subs[0].folder, dir / "alice");
  EXPECT_TRUE(subs[0].problem.empty());
  // Paths sort "bob" before "bob.cu": the folder keeps the id, the file is the duplicate.
  ASSERT_TRUE(find(subs, "bob"));
  EXPECT_EQ(find(subs, "bob")->source, dir / "bob" / "kernel.cu");
  EXPECT_TRUE(find(subs, "bob")->problem.empty());
  ASSERT_TRUE(find(subs, "bob (bob.cu)"));
  EXPECT_NE(find(subs, "bob (bob.cu)")->problem.find("duplicate id"), std::string::npos);
  ASSERT_TRUE(find(subs, "carol"));
  EXPECT_NE(find(subs, "carol")->problem.find("no kernel.cu"), std::string::npos);
  ASSERT_TRUE(find(subs, "readme.txt"));
  EXPECT_NE(find(subs, "readme.txt")->problem.find("not a submission"), std::string::npos);
  ASSERT_TRUE(find(subs, "mallory"));
  EXPECT_NE(find(subs, "mallory")->problem.find("symbolic link"), std::string::npos);
  EXPECT_FALSE(find(subs, ".DS_Store"));
}

TEST_F(BatchDir, MissingFolderIsAnError) { EXPECT_THROW(discover_submissions(dir / "nope"), std::runtime_error); }

TEST_F(BatchDir, ChecksFiles) {
  write("ok.cu", "// transpose × ≥\n__global__ void k() {}\n");
  write("empty.cu", "");
  write("nul.cu", std::string("abc\0def", 7));
  write("latin1.cu", "caf\xe9\n");
  write("overlong.cu", "\xc0\xaf");
  write("huge.cu", std::string(kMaxSubmissionBytes + 1, 'a'));
  write("limit.cu", std::string(kMaxSubmissionBytes, 'a'));
  fs::create_symlink(dir / "ok.cu", dir / "link.cu");
  EXPECT_EQ(check_submission_file(dir / "ok.cu"), "");
  EXPECT_EQ(check_submission_file(dir / "limit.cu"), "");
  EXPECT_EQ(check_submission_file(dir / "absent.cu").rfind("missing", 0), 0u);
  EXPECT_EQ(check_submission_file(dir / "empty.cu").rfind("empty", 0), 0u);
  EXPECT_EQ(check_submission_file(dir / "nul.cu").rfind("binary", 0), 0u);
  EXPECT_EQ(check_submission_file(dir / "latin1.cu").rfind("binary", 0), 0u);
  EXPECT_EQ(check_submission_file(dir / "overlong.cu").rfind("binary", 0), 0u);
  EXPECT_EQ(check_submission_file(dir / "huge.cu").rfind("too large", 0), 0u);
  EXPECT_NE(check_submission_file(dir / "link.cu").find("symbolic link"), std::string::npos);
}

TEST_F(BatchDir, HintsComeFromTheSubmissionsProgress) {
  write(
      "a/.grader/progress.json",
      R"({"format_version":1,"labs":{"lab07":{"steps_passed":[1],"hints_shown":{"1":2,"3":1}},"lab05":{"hints_shown":{"1":9}}}})");
  write("b/.grader/progress.json", "{ not json");
  EXPECT_EQ(hints_used(dir / "a", "lab07"), 3);
  EXPECT_EQ(hints_used(dir / "a", "lab05"), 9);
  EXPECT_EQ(hints_used(dir / "a", "lab01"), 0);
  EXPECT_EQ(hints_used(dir / "b", "lab07"), 0);
  EXPECT_TRUE(fs::exists(dir / "b" / ".grader" / "progress.json"));  // read, never repaired
  EXPECT_EQ(hints_used(dir / "c", "lab07"), 0);
  EXPECT_EQ(hints_used({}, "lab07"), 0);
}

TEST_F(BatchDir, AtomicWriteReplacesAndLeavesNoTemp) {
  write_file_atomically(dir / "out" / "r.json", "one");
  write_file_atomically(dir / "out" / "r.json", "two");
  std::ifstream in(dir / "out" / "r.json");
  std::string s;
  in >> s;
  EXPECT_EQ(s, "two");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir / "out"), fs::directory_iterator()), 1);
}

TEST_F(BatchDir, RowRoundTrips) {
  BatchRow r;
  r.id = "alice";
  r.status = RowStatus::graded;
  r.hash = "abc";
  r.hints_used = 2;
  r.grader_exit_code = 1;
  GradeReport g;
  g.seed = 42;
  g.exit_code = 1;
  json document = report_to_json(g);
  document["phases"] = json::array();  // what a child grader adds is kept as it came
  set_report(r, document);
  const json j = row_to_json(r, "lab07", "bwrap");
  EXPECT_EQ(j["hints_source"], "self-reported");  // the upload's own progress.json
  const BatchRow back = row_from_json(j);
  EXPECT_EQ(back.id, "alice");
  EXPECT_EQ(back.status, RowStatus::graded);
  EXPECT_EQ(back.hash, "abc");
  EXPECT_EQ(back.hints_used, 2);
  EXPECT_EQ(back.grader_exit_code, 1);
  EXPECT_EQ(back.report_document, document);
  ASSERT_TRUE(back.report);
  EXPECT_EQ(back.report->seed, 42u);
  json unreadable = j;
  unreadable["report"].erase("steps");
  EXPECT_THROW(row_from_json(unreadable), std::exception) << "a report that is not this grader's";
  EXPECT_THROW(row_from_json(json{{"schema", "other"}}), std::runtime_error);
}

// Bad submissions never reach a child grader, and a finished row for the same
// bytes is kept: grader_exe does not exist, so any grade would be an "error" row.
TEST_F(BatchDir, RejectsBadOnesAndResumesFinishedRows) {
  write("subs/empty/kernel.cu", "");
  write("subs/bin.cu", std::string("\x7f"
                                   "ELF\0\0",
                                   6));
  write("subs/done.cu", "// graded before\n");
  write("subs/changed.cu", "// edited since\n");
  BatchSettings s;
  s.grader_exe = dir / "no-such-grader";
  s.course_root = dir;
  s.lab = s.lab_id = "lab07";
  s.out = dir / "out";
  s.jobs = 3;
  for (const char* id : {"done", "changed"}) {
    BatchRow old;
    old.id = id;
    old.status = RowStatus::graded;
    old.hash = submission_hash(dir / "subs" / "done.cu");
    GradeReport marked;
    marked.submission = id;
    set_report(old, report_to_json(marked));
    write_file_atomically(s.out / "results" / (std::string(id) + ".json"), row_to_json(old, "lab07", "rlimits").dump());
  }
  int reported = 0;
  const auto rows = run_batch(discover_submissions(dir / "subs"), s, [&](const BatchRow&) { ++reported; });
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(reported, 4);
  EXPECT_EQ(rows[0].id, "bin");
  EXPECT_EQ(rows[0].status, RowStatus::rejected);
  EXPECT_NE(rows[0].reason.find("NUL"), std::string::npos);
  EXPECT_EQ(rows[1].id, "changed");
  EXPECT_EQ(rows[1].status, RowStatus::error);  // regraded (and the fake grader cannot run)
  EXPECT_FALSE(rows[1].reused);
  EXPECT_EQ(rows[2].id, "done");
  EXPECT_TRUE(rows[2].reused);
  ASSERT_TRUE(rows[2].report);
  EXPECT_EQ(rows[2].report->submission, "done");
  EXPECT_EQ(rows[3].id, "empty");
  EXPECT_EQ(rows[3].status, RowStatus::rejected);
  for (const char* id : {"bin", "changed", "done", "empty"})
    EXPECT_TRUE(fs::exists(s.out / "results" / (std::string(id) + ".json"))) << id;
}

// A grade that left a step skipped for a reason of its own (exit 4) is no
// verdict: the row names the first such check, never an advisory one.
TEST(BatchRows, AGradeWithAStepNotGradedIsNotScored) {
  const auto skipped = [](bool advisory, const std::string& summary) {
    CheckResult c;
    c.kind = CheckKind::ncu;
    c.status = Outcome::skipped;
    c.advisory = advisory;
    c.summary = summary;
    return c;
  };
  GradeReport grade;
  grade.exit_code = 1;
  grade.steps.resize(1);
  grade.steps[0].checks = {skipped(true, "not measured: ncu was not found"),
                           skipped(false, "not graded: ncu failed twice")};
  EXPECT_FALSE(not_graded_reason(grade)) << "a failed step is a verdict";
  grade.exit_code = 0;
  EXPECT_FALSE(not_graded_reason(grade));
  grade.exit_code = 4;
  const auto why = not_graded_reason(grade);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("not graded: ncu failed twice"), std::string::npos) << *why;
  EXPECT_EQ(why->find("ncu was not found"), std::string::npos) << *why;
}

// A step a tool could not grade is the machine's failure: the row is graded
// once more at once, and only a second such grade leaves it not graded.
TEST_F(BatchDir, ARowNotGradedByTheMachineIsGradedOnceMore) {
  write("subs/ada.cu", "// a submission\n");
  const fs::path count = dir / "count";
  GradeReport not_graded;
  not_graded.exit_code = 4;
  not_graded.steps.resize(1);
  not_graded.steps[0].checks.resize(1);
  not_graded.steps[0].checks[0].kind = CheckKind::sanitizer;
  not_graded.steps[0].checks[0].status = Outcome::skipped;
  not_graded.steps[0].checks[0].summary = "not graded: compute-sanitizer could not attach";
  const std::string not_graded_doc = report_to_json(not_graded).dump(),
                    graded_doc = report_to_json(GradeReport{}).dump();
  const auto fake_grader = [&](bool recovers) {
    const fs::path script = dir / (recovers ? "recovers.sh" : "never.sh");
    write(script.filename(),
          "#!/bin/sh\n"
          "n=$(cat '" +
              count.string() + "' 2>/dev/null || echo 0); n=$((n+1)); echo $n > '" + count.string() +
              "'\n"
              "if [ $n -eq 1 ] || [ " +
              (recovers ? "0" : "1") +
              " -eq 1 ]; then\n"
              "  echo '" +
              not_graded_doc +
              "'; exit 4\n"
              "fi\n"
              "echo '" +
              graded_doc + "'\n");
    fs::permissions(script, fs::perms::owner_all);
    return script;
  };
  BatchSettings s;
  s.course_root = dir;
  s.lab = s.lab_id = "lab07";
  s.out = dir / "out";
  const Submission sub = discover_submissions(dir / "subs").at(0);

  s.grader_exe = fake_grader(true);
  const BatchRow recovered = grade_submission(sub, s);
  EXPECT_EQ(recovered.status, RowStatus::graded) << recovered.reason;
  std::string first_count;
  std::ifstream(count) >> first_count;
  EXPECT_EQ(first_count, "2");

  fs::remove(count);
  s.grader_exe = fake_grader(false);
  const BatchRow never = grade_submission(sub, s);
  EXPECT_EQ(never.status, RowStatus::not_graded);
  EXPECT_NE(never.reason.find("could not attach"), std::string::npos) << never.reason;
  std::string n;
  std::ifstream(count) >> n;
  EXPECT_EQ(n, "2") << "graded twice, no more";
}

// A grade stopped from outside (a Slurm job cancelled) leaves no report: what it said last
// on stderr (a wait for the GPU or another grade's tool run) reaches the log, made printable.
TEST_F(BatchDir, AStoppedGradeSaysWhatItWasDoing) {
  write("subs/ada.cu", "// a submission\n");
  const fs::path script = dir / "stops.sh";
  write(script.filename(),
        "#!/bin/sh\n"
        "echo 'waiting for the GPU (held by another grade: pid 7)' >&2\n"
        "printf 'a quoted \\033[2Jline\\n' >&2\n"
        "kill -TERM $PPID\n"
        "sleep 5\n");
  fs::permissions(script, fs::perms::owner_all);
  BatchSettings s;
  s.course_root = dir;
  s.lab = s.lab_id = "lab07";
  s.out = dir / "out";
  s.grader_exe = script;
  const Submission sub = discover_submissions(dir / "subs").at(0);
  ::testing::internal::CaptureStderr();
  EXPECT_THROW(grade_submission(sub, s), Interrupted);
  const std::string said = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(said.find("its last words"), std::string::npos) << said;
  EXPECT_NE(said.find("waiting for the GPU (held by another grade: pid 7)"), std::string::npos) << said;
  EXPECT_EQ(said.find('\033'), std::string::npos) << "a control character reached the log";
}
