#include "red_flags.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

namespace fs = std::filesystem;

namespace {

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(RedFlags, EachKindOnItsLineAndNothingInComments) {
  const auto flags = grader::red_flags(
      "// cudaStreamCreate in a comment is no red flag, nor /* fork() */ this\n"
      "std::ifstream f(\"/proc/self/cmdline\");\n"
      "/* a block\n   comment with getenv */ int x = 0;\n"
      "const char* s = \"// not a comment: getenv\";\n"
      "std::thread t([] {}); cudaStreamCreate(&s);\n"
      "__attribute__((constructor)) static void early() {}\n"
      "cublasSgemm(h, a, b);\n");
  ASSERT_EQ(flags.size(), 6u);
  EXPECT_EQ(flags[0].line, 2u);
  EXPECT_NE(flags[0].what.find("/proc"), std::string::npos);
  EXPECT_EQ(flags[1].line, 5u);  // inside a string: still read, the text is the program's
  EXPECT_NE(flags[1].what.find("environment"), std::string::npos);
  EXPECT_EQ(flags[2].line, 6u);
  EXPECT_NE(flags[2].what.find("threads"), std::string::npos);
  EXPECT_EQ(flags[3].line, 6u);
  EXPECT_NE(flags[3].what.find("streams"), std::string::npos);
  EXPECT_EQ(flags[4].line, 7u);
  EXPECT_EQ(flags[5].line, 8u);
  EXPECT_NE(flags[5].what.find("library"), std::string::npos);
}

TEST(RedFlags, GpuClocksTheDriverApiTheSocketAndL2Hints) {
  const auto flags = grader::red_flags(
      "long long t = clock64();\n"
      "asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t));\n"
      "cudaGetDriverEntryPointByVersion(\"cuCtxCreate\", &f, 12000, 0, &q);\n"
      "extern \"C\" ssize_t recvmsg(int fd, msghdr* m, int flags) { return 0; }\n"
      "send(3, ok.data(), ok.size(), 0);\n"
      "cuda::apply_access_property(p, n, cuda::access_property::persisting{});\n"
      "float v = in[i]; out[i] = v * clockwise;\n");
  ASSERT_EQ(flags.size(), 6u);
  EXPECT_NE(flags[0].what.find("GPU clock"), std::string::npos);
  EXPECT_NE(flags[1].what.find("GPU clock"), std::string::npos);
  EXPECT_NE(flags[2].what.find("driver API"), std::string::npos);
  EXPECT_NE(flags[3].what.find("descriptor 3"), std::string::npos);
  EXPECT_NE(flags[4].what.find("descriptor 3"), std::string::npos);
  EXPECT_NE(flags[5].what.find("L2"), std::string::npos);
}

// Honest work raises none: every solution and every alt_* fixture of the course.
TEST(RedFlags, APersistingWindowByAnyRoute) {
  for (const char* line : {"attr.id = cudaLaunchAttributeAccessPolicyWindow;\n",
                           "cuda::annotated_ptr<const float, cuda::access_property::persisting> p(in);\n",
                           "asm(\"createpolicy.fractional.L2::evict_last.b64 %0, 1.0;\" : \"=l\"(policy));\n"}) {
    const auto flags = grader::red_flags(line);
    ASSERT_FALSE(flags.empty()) << line;
    EXPECT_NE(flags[0].what.find("L2"), std::string::npos) << line;
  }
}

// What labs/<lab>/lab.json says its technique raises ("teaches"); each must be a kind red_flags knows.
std::vector<std::string> taught_by(const fs::path& lab_json) {
  std::vector<std::string> taught;
  if (!fs::exists(lab_json)) return taught;
  const auto j = nlohmann::json::parse(read(lab_json));
  if (j.contains("teaches")) taught = j.at("teaches").get<std::vector<std::string>>();
  for (const auto& k : taught)
    EXPECT_NE(std::find(grader::red_flag_kinds().begin(), grader::red_flag_kinds().end(), k),
              grader::red_flag_kinds().end())
        << lab_json << " teaches \"" << k << "\", which is no kind of red flag";
  return taught;
}

TEST(RedFlags, NoneInHonestWork) {
  const fs::path root = COURSE_ROOT;
  std::size_t files = 0;
  for (const fs::path dir : {root / "solutions", root / "tests" / "fixtures"}) {
    if (!fs::exists(dir)) continue;
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
      const std::string name = e.path().filename().string();
      if (e.path().extension() != ".cu" || (dir.filename() == "fixtures" && name.rfind("alt_", 0) != 0)) continue;
      ++files;
      const auto taught = taught_by(root / "labs" / e.path().parent_path().filename() / "lab.json");
      for (const auto& f : grader::red_flags(read(e.path()), taught))
        ADD_FAILURE() << e.path() << ":" << f.line << ": " << f.what;
    }
  }
  if (files == 0) GTEST_SKIP() << "no solutions or fixtures (a published copy)";
}

// A lab that teaches a technique does not have it noted; every other lab does.
TEST(RedFlags, WhatALabTeachesIsNoRedFlagThere) {
  const std::string pipeline = "cudaStream_t s;\ncudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);\n";
  ASSERT_EQ(grader::red_flags(pipeline).size(), 1u);
  EXPECT_EQ(grader::red_flags(pipeline).front().kind, "streams");
  EXPECT_TRUE(grader::red_flags(pipeline, {"streams"}).empty());
  EXPECT_EQ(grader::red_flags(pipeline + "std::getenv(\"X\");\n", {"streams"}).size(), 1u);
}

// The attacks that read /proc, start daemons or signal the grader are flagged.
TEST(RedFlags, RaisedByTheAttacksThatNeedThem) {
  const fs::path dir = fs::path(COURSE_ROOT) / "tests" / "adversarial" / "lab07-bank-conflicts";
  if (!fs::exists(dir)) GTEST_SKIP() << "no tests/adversarial (a published copy)";
  for (const char* attack : {"signals_the_grader", "leaves_a_daemon", "tool_run_reads_the_solution", "cuts_ncu_off",
                             "defers_work_to_a_thread", "slow_kernel_on_a_side_stream"})
    EXPECT_FALSE(grader::red_flags(read(dir / (std::string(attack) + ".cu"))).empty()) << attack;
}

}  // namespace
