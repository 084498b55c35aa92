#include "timing_sessions.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <fstream>

namespace fs = std::filesystem;

namespace grader {
namespace {

class TimingSessionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("timing_sessions_test-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  // A call of a stand-in referee that runs `script` (sh).
  RefereeCall call_of(const std::string& name, const std::string& script) {
    const fs::path referee = dir_ / (name + ".sh");
    std::ofstream(referee) << "#!/bin/sh\n" << script << "\n";
    fs::permissions(referee, fs::perms::owner_all);
    RefereeCall call;
    call.referee = referee;
    call.work_dir = dir_ / name;
    call.gpu_use = memlabs::GpuUse::shared;
    make_timing_call(call, "1x1", 1, 1.0, 5);
    call.referee_takes_turns = false;
    return call;
  }
  fs::path dir_;
};

TEST_F(TimingSessionsTest, EachCaseIsTimedOnceAndReadWhenItsCheckComes) {
  TimingSessions sessions;
  const std::string usage = "echo '{\"protocol\": " + std::to_string(memlabs::kRefereeProtocol) +
                            ", \"phases\": [], \"status\": \"usage\", \"failure\": " +
                            nlohmann::json(memlabs::failure_of(memlabs::FailureKind::usage, "stand-in")).dump() + "}'";
  sessions.start("1x1", call_of("first", usage));
  sessions.start("1x1", call_of("second", "exit 3"));  // started already: this one never runs
  EXPECT_TRUE(sessions.started("1x1"));
  EXPECT_FALSE(sessions.started("2x2"));
  const RunnerOutcome& out = sessions.result("1x1");
  EXPECT_EQ(out.category, RunCategory::usage) << out.message;
  EXPECT_FALSE(fs::exists(dir_ / "second"));
}

TEST_F(TimingSessionsTest, StopEndsASessionNoCheckReads) {
  TimingSessions sessions;
  sessions.start("1x1", call_of("slow", "sleep 60"));
  const auto begin = std::chrono::steady_clock::now();
  sessions.stop();
  EXPECT_LT(std::chrono::steady_clock::now() - begin, std::chrono::seconds(30));
  EXPECT_EQ(sessions.result("1x1").category, RunCategory::cancelled);
}

}  // namespace
}  // namespace grader
