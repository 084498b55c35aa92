#include "progress.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>

namespace grader {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

void write_file(const fs::path& file, const std::string& text) { std::ofstream(file, std::ios::binary) << text; }

std::string read_file(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class ProgressTest : public testing::Test {
 protected:
  void SetUp() override {
    static int counter = 0;
    dir_ = fs::temp_directory_path() / ("progress_test." + std::to_string(getpid()) + "." + std::to_string(counter++));
    fs::create_directories(dir_);
    file_ = dir_ / ".grader" / "progress.json";
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::vector<std::string> names_in(const fs::path& dir) const {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

  // Writes text as the progress file and loads it.
  std::vector<std::string> load_text(ProgressStore& store, const std::string& text) {
    fs::create_directories(file_.parent_path());
    write_file(file_, text);
    return store.load();
  }

  fs::path dir_, file_;
};

TEST_F(ProgressTest, RoundTripsEveryField) {
  ProgressStore store(file_);
  LabProgress& p = store.lab("lab07");
  p.steps_passed = {1, 2};
  p.hints_shown = {{1, 2}, {3, 1}};
  p.best = {{"speedup:8192x8192", 6.5}, {"fraction_of_peak:8192x8192", 0.9375}};
  p.last_summary = "step 3 failed: 2.1x, needs 5.0x";
  p.graded_at = "2026-11-22T12:00:00Z";
  store.lab("lab00").steps_passed = {1};
  store.save();

  ProgressStore again(file_);
  EXPECT_TRUE(again.load().empty());
  ASSERT_EQ(again.labs().size(), 2u);
  const LabProgress* q = again.find("lab07");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->steps_passed, (std::set<int>{1, 2}));
  EXPECT_EQ(q->hints_shown, (std::map<int, int>{{1, 2}, {3, 1}}));
  EXPECT_EQ(q->best, p.best);
  EXPECT_EQ(q->last_summary, p.last_summary);
  EXPECT_EQ(q->graded_at, p.graded_at);
  EXPECT_EQ(again.find("lab00")->steps_passed, (std::set<int>{1}));
}

TEST_F(ProgressTest, ReadsTheDocumentedFormat) {
  ProgressStore store(file_);
  auto warnings = load_text(store, R"({"format_version":1,"labs":{"lab07":{"steps_passed":[1,2],
      "hints_shown":{"1":2},"best":{"speedup:8192x8192":6.5},"last_summary":"step 3 failed",
      "graded_at":"2026-11-22T12:00:00Z","added_later":{"x":1}}}})");
  EXPECT_TRUE(warnings.empty());
  const LabProgress* p = store.find("lab07");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->steps_passed, (std::set<int>{1, 2}));
  EXPECT_EQ(p->hints_shown.at(1), 2);
  EXPECT_DOUBLE_EQ(p->best.at("speedup:8192x8192"), 6.5);
  EXPECT_EQ(p->last_summary, "step 3 failed");
  EXPECT_EQ(p->graded_at, "2026-11-22T12:00:00Z");
}

TEST_F(ProgressTest, MissingFileIsEmptyProgress) {
  ProgressStore store(file_);
  EXPECT_TRUE(store.load().empty());
  EXPECT_TRUE(store.labs().empty());
  EXPECT_EQ(store.find("lab07"), nullptr);
  EXPECT_FALSE(fs::exists(file_.parent_path())) << "load must not create anything";
}

TEST_F(ProgressTest, LoadDropsWhatWasInMemory) {
  ProgressStore store(file_);
  store.lab("lab01").steps_passed = {1};
  store.load();
  EXPECT_EQ(store.find("lab01"), nullptr);
}

TEST_F(ProgressTest, CorruptJsonIsSetAsideWithAWarning) {
  ProgressStore store(file_);
  const std::string broken = R"({"format_version":1,"labs":{"lab07":{"steps_passed":[1,)";
  auto warnings = load_text(store, broken);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find(file_.string() + " is not valid JSON"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("started with empty progress"), std::string::npos) << warnings[0];
  EXPECT_TRUE(store.labs().empty());
  EXPECT_FALSE(fs::exists(file_));

  auto names = names_in(file_.parent_path());
  ASSERT_EQ(names.size(), 1u);
  EXPECT_TRUE(std::regex_match(names[0], std::regex(R"(progress\.json\.corrupt-\d{8}T\d{6}Z)"))) << names[0];
  EXPECT_EQ(read_file(file_.parent_path() / names[0]), broken);
  EXPECT_NE(warnings[0].find(names[0]), std::string::npos) << warnings[0];

  // The next grade starts over cleanly.
  store.lab("lab07").steps_passed = {1};
  store.save();
  ProgressStore again(file_);
  EXPECT_TRUE(again.load().empty());
  EXPECT_NE(again.find("lab07"), nullptr);
}

TEST_F(ProgressTest, WrongShapeIsSetAsideWithAWarning) {
  const std::vector<std::pair<std::string, std::string>> shapes = {
      {R"({"format_version":1,"labs":[]})", "labs: expected an object of labs"},
      {R"([1, 2])", "the top level: expected an object"},
      {R"({"labs":{}})", "format_version: expected 1"},
      {R"({"format_version":2,"labs":{}})", "format_version: expected 1"},
      {R"({"format_version":1,"labs":{"lab07":[]}})", "labs.lab07: expected an object"},
      {R"({"format_version":1,"labs":{"lab07":{"steps_passed":["1"]}}})", "labs.lab07.steps_passed[0]"},
      {R"({"format_version":1,"labs":{"lab07":{"steps_passed":[0]}}})", "labs.lab07.steps_passed[0]"},
      {R"({"format_version":1,"labs":{"lab07":{"hints_shown":{"one":1}}}})", "labs.lab07.hints_shown.one"},
      {R"({"format_version":1,"labs":{"lab07":{"hints_shown":{"1":-1}}}})", "labs.lab07.hints_shown.1"},
      {R"({"format_version":1,"labs":{"lab07":{"best":{"speedup:x":"fast"}}}})", "labs.lab07.best.speedup:x"},
      {R"({"format_version":1,"labs":{"lab07":{"graded_at":12}}})", "labs.lab07.graded_at"},
  };
  for (const auto& [text, where] : shapes) {
    fs::remove_all(file_.parent_path());
    ProgressStore store(file_);
    auto warnings = load_text(store, text);
    ASSERT_EQ(warnings.size(), 1u) << text;
    EXPECT_NE(warnings[0].find("is not progress data"), std::string::npos) << warnings[0];
    EXPECT_NE(warnings[0].find(where), std::string::npos) << "want \"" << where << "\" in: " << warnings[0];
    EXPECT_TRUE(store.labs().empty()) << text;
    EXPECT_FALSE(fs::exists(file_)) << text;
    auto names = names_in(file_.parent_path());
    ASSERT_EQ(names.size(), 1u) << text;
    EXPECT_EQ(read_file(file_.parent_path() / names[0]), text);
  }
}

TEST_F(ProgressTest, RepeatedCorruptionKeepsEveryBackup) {
  ProgressStore store(file_);
  EXPECT_EQ(load_text(store, "first").size(), 1u);
  EXPECT_EQ(load_text(store, "second").size(), 1u);
  EXPECT_EQ(load_text(store, "third").size(), 1u);
  std::set<std::string> contents;
  for (const auto& name : names_in(file_.parent_path())) contents.insert(read_file(file_.parent_path() / name));
  EXPECT_EQ(contents, (std::set<std::string>{"first", "second", "third"}));
}

TEST_F(ProgressTest, SaveCreatesTheFolderAndLeavesNoTempFiles) {
  ProgressStore store(file_);
  store.lab("lab05").steps_passed = {1};
  store.save();
  store.save();
  EXPECT_EQ(names_in(file_.parent_path()), (std::vector<std::string>{"progress.json"}));
}

TEST_F(ProgressTest, SaveReplacesAnExistingFileWhole) {
  fs::create_directories(file_.parent_path());
  json old = {{"format_version", 1}, {"labs", json::object()}};
  for (int i = 0; i < 50; ++i) old["labs"]["lab" + std::to_string(i)] = {{"last_summary", std::string(200, 'x')}};
  write_file(file_, old.dump(2));

  ProgressStore store(file_);
  ASSERT_TRUE(store.load().empty());
  ASSERT_EQ(store.labs().size(), 50u);
  ProgressStore fresh(file_);  // never loaded: what it saves is all the file holds
  fresh.lab("lab07").steps_passed = {1};
  fresh.save();

  json saved = json::parse(read_file(file_));  // throws on trailing bytes of the old file
  EXPECT_EQ(saved["labs"].size(), 1u);
  EXPECT_EQ(saved["labs"]["lab07"]["steps_passed"], json({1}));
  EXPECT_EQ(saved["format_version"], 1);
}

TEST_F(ProgressTest, StrayTempFileFromACrashIsIgnored) {
  ProgressStore store(file_);
  store.lab("lab07").steps_passed = {1, 2};
  store.save();
  const fs::path stray = file_.string() + ".tmp.99999";
  write_file(stray, R"({"format_version":1,"labs":{"lab07":{"steps_pa)");

  ProgressStore again(file_);
  EXPECT_TRUE(again.load().empty());
  ASSERT_NE(again.find("lab07"), nullptr);
  EXPECT_EQ(again.find("lab07")->steps_passed, (std::set<int>{1, 2}));
  EXPECT_EQ(read_file(stray), R"({"format_version":1,"labs":{"lab07":{"steps_pa)");

  // A crash before the first save leaves only the temp file: still no progress, no warning.
  fs::remove(file_);
  ProgressStore empty(file_);
  EXPECT_TRUE(empty.load().empty());
  EXPECT_TRUE(empty.labs().empty());
}

// A grader killed at any moment of a save (SIGKILL: no handler, no cleanup)
// leaves the old progress or the new one, whole, never a mix or a stub. A
// child saves the next version over and over; it is killed after a random
// delay; the file must then parse and hold either version.
TEST_F(ProgressTest, KilledMidSaveLeavesTheOldOrTheNewFile) {
  // Large enough that one save takes several writes, so kills land inside them.
  const auto version = [](int v) {
    std::map<std::string, LabProgress> labs;
    for (int lab = 0; lab < 40; ++lab) {
      LabProgress& p = labs["lab" + std::to_string(lab)];
      p.steps_passed = {1, 1 + v % 3};
      p.last_summary = "version " + std::to_string(v) + " " + std::string(2000, 'a' + v % 26);
    }
    return labs;
  };
  const auto save = [&](int v) {
    ProgressStore store(file_);
    for (auto& [id, p] : version(v)) store.lab(id) = p;
    store.save();
  };
  const auto holds = [&](int v) {
    ProgressStore store(file_);
    if (!store.load().empty()) return false;
    for (const auto& [id, p] : version(v)) {
      const LabProgress* q = store.find(id);
      if (!q || q->steps_passed != p.steps_passed || q->last_summary != p.last_summary) return false;
    }
    return store.labs().size() == version(v).size();
  };

  // Kills land at a random moment within about three saves from the child's
  // first: measured here, not assumed, since a loaded machine makes a save
  // (and the child's start) take many times longer than a quiet one.
  std::vector<double> took;
  for (int i = 0; i < 5; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    save(0);
    took.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(took.begin(), took.end());
  const int window_us = static_cast<int>(3 * took[2]) + 1;

  int current = 0, replaced = 0;
  std::srand(12345);
  for (int round = 1; round <= 150; ++round) {
    int started[2];
    ASSERT_EQ(::pipe(started), 0);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(started[0]);
      const char ready = 1;
      if (::write(started[1], &ready, 1) != 1) ::_exit(2);
      try {
        for (;;) save(round);  // until killed
      } catch (...) {
      }
      ::_exit(1);  // a failed save: the parent sees an exit, not a kill
    }
    ::close(started[1]);
    char ready = 0;
    ASSERT_EQ(::read(started[0], &ready, 1), 1) << "round " << round << ": the child never started";
    ::close(started[0]);
    ::usleep(static_cast<useconds_t>(std::rand() % window_us));
    ::kill(pid, SIGKILL);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status)) << "round " << round;

    const bool old_one = holds(current), new_one = !old_one && holds(round);
    ASSERT_TRUE(old_one || new_one) << "round " << round << ": the file holds neither version " << current
                                    << " nor version " << round << ":\n"
                                    << read_file(file_).substr(0, 300);
    if (new_one) current = round, ++replaced;
  }
  // Both outcomes happened, so kills did land before and after the rename.
  EXPECT_GT(replaced, 0);
  EXPECT_LT(replaced, 150);
}

TEST_F(ProgressTest, RecordBestKeepsTheMaximum) {
  ProgressStore store(file_);
  store.record_best("lab07", "speedup:big", 3.0);
  store.record_best("lab07", "speedup:big", 2.0);
  EXPECT_DOUBLE_EQ(store.find("lab07")->best.at("speedup:big"), 3.0);
  store.record_best("lab07", "speedup:big", 4.5);
  EXPECT_DOUBLE_EQ(store.find("lab07")->best.at("speedup:big"), 4.5);
  store.record_best("lab07", "speedup:big", std::nan(""));
  store.record_best("lab07", "speedup:big", INFINITY);
  store.record_best("lab07", "speedup:small", -INFINITY);
  EXPECT_DOUBLE_EQ(store.find("lab07")->best.at("speedup:big"), 4.5);
  EXPECT_EQ(store.find("lab07")->best.count("speedup:small"), 0u);
  store.record_best("lab07", "speedup:small", 0.5);
  EXPECT_DOUBLE_EQ(store.find("lab07")->best.at("speedup:small"), 0.5);
}

TEST_F(ProgressTest, SaveSurvivesInvalidUtf8InASummary) {
  ProgressStore store(file_);
  store.lab("lab07").last_summary = "nvcc said: \xff\xfe";
  store.save();
  ProgressStore again(file_);
  EXPECT_TRUE(again.load().empty());
  ASSERT_NE(again.find("lab07"), nullptr);
  EXPECT_EQ(again.find("lab07")->last_summary.rfind("nvcc said: ", 0), 0u);
}

TEST_F(ProgressTest, SaveFailureIsAProgressError) {
  write_file(dir_ / "blocker", "a file where the folder should be");
  ProgressStore store(dir_ / "blocker" / "progress.json");
  store.lab("lab07").steps_passed = {1};
  try {
    store.save();
    FAIL() << "saved under a regular file";
  } catch (const ProgressError& e) {
    EXPECT_NE(std::string(e.what()).find((dir_ / "blocker").string()), std::string::npos) << e.what();
  }
}

// A grade and hints in several terminals at once: every count survives.
TEST_F(ProgressTest, ConcurrentUpdatesLoseNothing) {
  constexpr int kWriters = 6, kEach = 15;
  std::vector<pid_t> kids;
  for (int w = 0; w < kWriters; ++w) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      for (int i = 0; i < kEach; ++i) {
        ProgressStore s(file_);
        s.update([](ProgressStore& st) { ++st.lab("lab07").hints_shown[1]; });
      }
      ::_exit(0);
    }
    kids.push_back(pid);
  }
  for (pid_t k : kids) {
    int status = 0;
    ::waitpid(k, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  ProgressStore s(file_);
  EXPECT_TRUE(s.load().empty());
  ASSERT_NE(s.find("lab07"), nullptr);
  EXPECT_EQ(s.find("lab07")->hints_shown.at(1), kWriters * kEach);
}

TEST_F(ProgressTest, AnUpdateRemovesTempFilesOfAKilledWriter) {
  fs::create_directories(file_.parent_path());
  for (const char* stale : {".tmp.12345", ".tmp.99"}) std::ofstream(file_.string() + stale) << "{";
  ProgressStore s(file_);
  s.update([](ProgressStore& st) { st.lab("lab01").steps_passed.insert(1); });
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(file_.parent_path()))
    if (e.path().filename().string().find(".tmp") != std::string::npos) left.push_back(e.path().filename().string());
  EXPECT_TRUE(left.empty()) << left.front();
  ProgressStore back(file_);
  back.load();
  EXPECT_TRUE(back.find("lab01")->steps_passed.count(1));
}

TEST(UtcNow, IsIso8601InUtc) {
  const std::string now = utc_now_iso8601();
  EXPECT_TRUE(std::regex_match(now, std::regex(R"(20\d\d-[01]\d-[0-3]\dT[0-2]\d:[0-5]\d:[0-6]\dZ)"))) << now;
}

}  // namespace
}  // namespace grader
