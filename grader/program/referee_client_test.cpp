#include "referee_client.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <thread>

#include "gpu_lock.hpp"
#include "protocol/referee_protocol.hpp"

namespace fs = std::filesystem;

namespace grader {
namespace {

// One definition of a timing session for a grade, `grader bench` and the margins.
TEST(TimingCall, NamesTheCaseTheSeedAndTheCapAndLeavesRoomForTheRounds) {
  RefereeCall call;
  call.who = "the reference";
  make_timing_call(call, "8192x8192", 42, 3.0, 60);
  EXPECT_EQ(memlabs::request_arguments(call.request),
            (std::vector<std::string>{"time", "--case", "8192x8192", "--seed", "42", "--cap-s", "3"}));
  EXPECT_EQ(call.request_timeout_s, 60);
  EXPECT_GT(call.timeout_s, 3 * 60 + 3.0);  // a few requests and the rounds
  EXPECT_EQ(call.who, "the reference");     // what the caller set stays
  EXPECT_TRUE(call.referee_takes_turns);    // shared while it starts, alone for what it times
}

// A timing's referee takes its own turns: the grader takes none for it (a
// shared turn of its own would keep the referee from ever timing alone) and
// hands it the lock file. Any other call runs only in the grader's turn.
TEST(RefereeTurns, ATimingsRefereeGetsTheLockFileAndTheGraderTakesNoTurnForIt) {
  const fs::path dir = fs::temp_directory_path() / ("referee_client_test-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path lock = dir / "gpu.lock", argv_file = dir / "argv", referee = dir / "referee.sh";
  std::ofstream(referee) << "#!/bin/sh\nprintf '%s\\n' \"$@\" > " << argv_file.string()
                         << "\necho '{\"protocol\": " << memlabs::kRefereeProtocol
                         << ", \"phases\": [], \"status\": \"usage\", \"failure\": "
                         << nlohmann::json(memlabs::failure_of(memlabs::FailureKind::usage, "stand-in")).dump()
                         << "}'\n";
  fs::permissions(referee, fs::perms::owner_all);
  set_process_gpu_lock(lock);
  const auto args = [&] {
    std::ifstream in(argv_file);
    std::vector<std::string> v;
    for (std::string line; std::getline(in, line);) v.push_back(line);
    return v;
  };
  RefereeCall call;
  call.referee = referee;
  call.work_dir = dir / "work";
  make_timing_call(call, "1x1", 1, 1.0, 5);
  {
    // Another grade holds the GPU alone: a grader-side turn would wait here.
    GpuTurn held(lock, memlabs::GpuUse::exclusive);
    const RunnerOutcome out = call_referee(call);
    EXPECT_EQ(out.category, RunCategory::usage) << out.message;
  }
  const auto timing_args = args();
  const auto at = std::find(timing_args.begin(), timing_args.end(), "--gpu-lock");
  ASSERT_NE(at, timing_args.end());
  ASSERT_NE(at + 1, timing_args.end());
  EXPECT_EQ(*(at + 1), lock.string());

  RefereeCall run = call;
  run.request = {};
  run.request.mode = memlabs::RefereeMode::run;
  run.request.cases = {"1x1"};
  run.referee_takes_turns = false;
  run.gpu_use = memlabs::GpuUse::shared;
  std::atomic<bool> done{false};
  auto held = std::make_unique<GpuTurn>(lock, memlabs::GpuUse::exclusive);
  std::thread t([&] {
    call_referee(run);
    done = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(done.load()) << "a correctness run started while another grade timed";
  held.reset();
  t.join();
  EXPECT_TRUE(done.load());
  const auto run_args = args();
  EXPECT_EQ(std::find(run_args.begin(), run_args.end(), "--gpu-lock"), run_args.end());
  set_process_gpu_lock({});
  fs::remove_all(dir);
}

// What the referee prints is read with every key its protocol requires: a
// result of another protocol, or one without its phases, is the referee's
// failure (never the student's, never read with a default).
TEST(RefereeResult, OneThatDoesNotReadIsTheRefereesFailure) {
  const fs::path dir = fs::temp_directory_path() / ("referee_result_test-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string failure = nlohmann::json(memlabs::failure_of(memlabs::FailureKind::usage, "stand-in")).dump();
  const auto outcome = [&](const std::string& document) {
    const fs::path referee = dir / "referee.sh";
    std::ofstream(referee) << "#!/bin/sh\necho '" << document << "'\n";
    fs::permissions(referee, fs::perms::owner_all);
    RefereeCall call;
    call.referee = referee;
    call.work_dir = dir / "work";
    call.request.mode = memlabs::RefereeMode::run;
    call.request.cases = {"1x1"};
    call.gpu_use = memlabs::GpuUse::shared;
    return call_referee(call);
  };
  const std::string v = std::to_string(memlabs::kRefereeProtocol);
  EXPECT_EQ(outcome("{\"protocol\": " + v + ", \"phases\": [], \"status\": \"usage\", \"failure\": " + failure + "}")
                .category,
            RunCategory::usage);
  const RunnerOutcome no_phases =
      outcome("{\"protocol\": " + v + ", \"status\": \"usage\", \"failure\": " + failure + "}");
  EXPECT_EQ(no_phases.category, RunCategory::referee);
  EXPECT_NE(no_phases.message.find("phases"), std::string::npos) << no_phases.message;
  const RunnerOutcome bad_phase = outcome("{\"protocol\": " + v +
                                          ", \"phases\": [{\"what\": \"starting CUDA\", \"start_s\": 0.1}], "
                                          "\"status\": \"usage\", \"failure\": " +
                                          failure + "}");
  EXPECT_EQ(bad_phase.category, RunCategory::referee) << "a phase without its seconds";
  const RunnerOutcome old = outcome("{\"protocol\": 3, \"phases\": [], \"status\": \"usage\"}");
  EXPECT_EQ(old.category, RunCategory::referee);
  EXPECT_NE(old.message.find("another protocol than this grader (3)"), std::string::npos) << old.message;
  const RunnerOutcome none = outcome("{\"status\": \"ok\"}");
  EXPECT_NE(none.message.find("another protocol than this grader (none)"), std::string::npos) << none.message;
  fs::remove_all(dir);
}

// The sentence for a CUDA error says what the error means for a kernel.
TEST(CudaErrorSentence, SaysWhatAnIllegalAddressMeans) {
  memlabs::ProgramError e;
  e.name = "cudaErrorIllegalAddress";
  const std::string s = explain_cuda_error(e, "candidate", "1000x777", "your program");
  EXPECT_EQ(s.rfind("illegal memory access", 0), 0u) << s;
  EXPECT_NE(s.find("bounds"), std::string::npos) << s;
}

}  // namespace
}  // namespace grader
