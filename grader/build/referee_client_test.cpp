#include "referee_client.hpp"

#include <gtest/gtest.h>

namespace grader {
namespace {

// One definition of a timing session for a grade, `grader bench` and the margins.
TEST(TimingCall, NamesTheCaseTheSeedAndTheCapAndLeavesRoomForTheRounds) {
  RefereeCall call;
  call.who = "the reference";
  make_timing_call(call, "8192x8192", 42, 3.0, 60);
  EXPECT_EQ(call.args, (std::vector<std::string>{"time", "--case", "8192x8192", "--seed", "42", "--cap-s", "3.000"}));
  EXPECT_EQ(call.request_timeout_s, 60);
  EXPECT_GT(call.timeout_s, 3 * 60 + 3.0);  // a few requests and the rounds
  EXPECT_EQ(call.who, "the reference");     // what the caller set stays
}

// The sentence for a CUDA error says what the error means for a kernel.
TEST(CudaErrorSentence, SaysWhatAnIllegalAddressMeans) {
  const std::string s = explain_cuda_error(nlohmann::json{{"name", "cudaErrorIllegalAddress"}}, "your program");
  EXPECT_EQ(s.rfind("illegal memory access", 0), 0u) << s;
  EXPECT_NE(s.find("bounds"), std::string::npos) << s;
}

}  // namespace
}  // namespace grader
