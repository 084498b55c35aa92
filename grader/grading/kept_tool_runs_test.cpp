#include "kept_tool_runs.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

namespace fs = std::filesystem;

namespace grader {
namespace {

class KeptToolRuns : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kept-tool-runs-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    write(dir_ / "worker", "the program's bytes");
    write(dir_ / "tool", "a tool");
  }
  void TearDown() override { fs::remove_all(dir_); }
  static void write(const fs::path& f, const std::string& text) { std::ofstream(f) << text; }

  ToolCall call(const std::string& run) const {
    ToolCall c;
    c.tool = {(dir_ / "tool").string(), "--tool", "memcheck", "--log-file", (dir_ / run / "log.txt").string()};
    c.worker = dir_ / "worker";
    c.cases = {"1000x777", "33x4097"};
    c.seed = 1;
    c.work_dir = dir_ / run;
    return c;
  }

  fs::path dir_;
};

TEST_F(KeptToolRuns, TheSameProgramToolAndCasesMeetTheSameKeyWhateverTheSeedOrFolder) {
  ToolCall other = call("run-2");
  other.seed = 99;  // the inputs' values are not part of a tool's report
  EXPECT_EQ(tool_run_key(call("run-1"), "H100"), tool_run_key(other, "H100"));
  EXPECT_FALSE(tool_run_key(call("run-1"), "H100").empty());
}

TEST_F(KeptToolRuns, AnythingThatCouldChangeTheReportChangesTheKey) {
  const std::string key = tool_run_key(call("run"), "H100");
  EXPECT_NE(key, tool_run_key(call("run"), "A100")) << "another GPU or driver";
  ToolCall tool = call("run");
  tool.tool[2] = "racecheck";
  EXPECT_NE(key, tool_run_key(tool, "H100")) << "another tool or option";
  ToolCall cases = call("run");
  cases.cases.pop_back();
  EXPECT_NE(key, tool_run_key(cases, "H100")) << "other cases";
  write(dir_ / "worker", "the program's bytes, one edit later");
  EXPECT_NE(key, tool_run_key(call("run"), "H100")) << "another program";
  write(dir_ / "worker", "the program's bytes");
  write(dir_ / "tool", "another version of the tool");
  EXPECT_NE(key, tool_run_key(call("run"), "H100")) << "another version of the tool";
}

TEST_F(KeptToolRuns, AProgramThatCannotBeReadHasNoKeyAndNothingIsKept) {
  ToolCall c = call("run");
  c.worker = dir_ / "missing";
  EXPECT_EQ(tool_run_key(c, "H100"), "");
  keep_tool_run(dir_ / "cache", "", "a report");
  EXPECT_FALSE(find_kept_tool_run(dir_ / "cache", "").has_value());
  EXPECT_FALSE(fs::exists(dir_ / "cache"));
}

TEST_F(KeptToolRuns, AKeptReportComesBackWholeWithWhenItRan) {
  const std::string key = tool_run_key(call("run"), "H100");
  EXPECT_FALSE(find_kept_tool_run(dir_ / "cache", key).has_value());
  keep_tool_run(dir_ / "cache", key, "========= ERROR SUMMARY: 0 errors\n");
  const auto kept = find_kept_tool_run(dir_ / "cache", key);
  ASSERT_TRUE(kept.has_value());
  EXPECT_EQ(kept->log, "========= ERROR SUMMARY: 0 errors\n");
  EXPECT_NE(kept->when.find("UTC"), std::string::npos);
}

TEST_F(KeptToolRuns, ATornOrForeignFileIsNotReused) {
  const std::string key = tool_run_key(call("run"), "H100");
  fs::create_directories(dir_ / "cache" / "tool-runs");
  write(dir_ / "cache" / "tool-runs" / (key + ".json"), "{\"schema\": \"cuda-memory-labs/kept-tool-run/1\", \"lo");
  EXPECT_FALSE(find_kept_tool_run(dir_ / "cache", key).has_value());
  // A file copied in under another name: its key does not match.
  write(dir_ / "cache" / "tool-runs" / (key + ".json"),
        R"({"schema": "cuda-memory-labs/kept-tool-run/1", "key": "another", "when": "x", "log": "clean"})");
  EXPECT_FALSE(find_kept_tool_run(dir_ / "cache", key).has_value());
}

}  // namespace
}  // namespace grader
