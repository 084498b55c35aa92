#include "tool_runs.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <functional>

#include "gpu_lock.hpp"
#include "kept_tool_runs.hpp"

namespace fs = std::filesystem;

namespace grader {
namespace {

class ToolRunsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tool_runs_test-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "cache");
    set_process_gpu_lock(dir_ / "gpu.lock");
    std::ofstream(dir_ / "worker") << "the program's bytes";
  }
  void TearDown() override {
    set_process_gpu_lock({});
    fs::remove_all(dir_);
  }
  // A stand-in tool (its file made once: another file is another tool) that
  // runs `script` (sh), its report's path as $2, in a run folder `name`.
  ToolCall call_of(const std::string& name, const std::string& script) {
    const fs::path tool = dir_ / ("tool-" + std::to_string(std::hash<std::string>{}(script)) + ".sh");
    if (!fs::exists(tool)) {
      std::ofstream(tool) << "#!/bin/sh\n" << script << "\n";
      fs::permissions(tool, fs::perms::owner_all);
    }
    ToolCall call;
    call.tool = {tool.string(), "--report", (dir_ / name / "report.txt").string()};
    call.worker = dir_ / "worker";
    call.work_dir = dir_ / name;
    call.timeout_s = 60;
    return call;
  }
  static bool any(const std::string&) { return true; }
  fs::path dir_;
};

TEST_F(ToolRunsTest, AKeyRunsOnceAndAReportThatMeasuredIsKeptForTheSameProgram) {
  const std::string writes = "echo counted > \"$2\"";
  {
    ToolRuns runs(dir_ / "cache", "GPU-1");
    const ToolOutput& first = runs.start("ncu 1x1", call_of("first", writes), "report.txt", "ncu", any).get();
    EXPECT_TRUE(first.outcome.ok()) << first.outcome.message;
    EXPECT_EQ(first.log, "counted\n");
    EXPECT_TRUE(first.kept_from.empty());
    runs.start("ncu 1x1", call_of("again", "exit 9"), "report.txt", "ncu", any);  // started already
    EXPECT_FALSE(fs::exists(dir_ / "again"));
  }
  // The next grade of the very same program, by the same tool on the same GPU, reads the kept report.
  ToolRuns next(dir_ / "cache", "GPU-1");
  const ToolOutput& kept = next.start("ncu 1x1", call_of("next", writes), "report.txt", "ncu", any).get();
  EXPECT_FALSE(fs::exists(dir_ / "next")) << "not run again";
  EXPECT_EQ(kept.log, "counted\n");
  EXPECT_FALSE(kept.kept_from.empty());
  // A sandboxed grade keeps and reuses nothing.
  ToolRuns sandboxed(dir_ / "cache", "");
  const ToolOutput& fresh = sandboxed.start("ncu 1x1", call_of("sandboxed", writes), "report.txt", "ncu", any).get();
  EXPECT_TRUE(fs::exists(dir_ / "sandboxed")) << "run again";
  EXPECT_EQ(fresh.log, "counted\n");
  EXPECT_TRUE(fresh.kept_from.empty());
}

TEST_F(ToolRunsTest, StopEndsARunNoCheckReads) {
  ToolRuns runs(dir_ / "cache", "");
  const auto run = runs.start("sanitizer memcheck 1x1", call_of("slow", "sleep 60"), "report.txt", "memcheck", any);
  const auto begin = std::chrono::steady_clock::now();
  runs.stop();
  EXPECT_LT(std::chrono::steady_clock::now() - begin, std::chrono::seconds(30));
  EXPECT_EQ(run.get().outcome.category, RunCategory::cancelled);
}

// A program that hung in one case would hang in the runs of that case; the
// runs of other cases go on, and their reports still count.
TEST_F(ToolRunsTest, CancellingTheRunsOfACaseLeavesTheOthers) {
  ToolRuns runs(dir_ / "cache", "");
  ToolCall hung = call_of("hung", "sleep 60");
  hung.cases = {"bulk_1000"};
  ToolCall other = call_of("other", "sleep 1; echo counted > \"$2\"");
  other.cases = {"async_512"};
  const auto hung_run = runs.start("ncu bulk_1000", hung, "report.txt", "ncu", any);
  const auto other_run = runs.start("ncu async_512", other, "report.txt", "ncu", any);
  const auto begin = std::chrono::steady_clock::now();
  runs.cancel_runs_of({"bulk_1000", "bulk_36"});
  EXPECT_EQ(hung_run.get().outcome.category, RunCategory::cancelled);
  EXPECT_LT(std::chrono::steady_clock::now() - begin, std::chrono::seconds(30));
  const ToolOutput& done = other_run.get();
  EXPECT_TRUE(done.outcome.ok()) << done.outcome.message;
  EXPECT_EQ(done.log, "counted\n");
}

}  // namespace
}  // namespace grader
