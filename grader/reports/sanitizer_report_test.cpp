// compute-sanitizer logs recorded on the H100 (grader/reports/testdata/h100-san-*.txt):
// lab07 and lab08 without __syncthreads() under racecheck, lab07 writing past
// its output under memcheck, and the references' clean logs.
#include "sanitizer_report.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace grader {
namespace {

std::string testdata(const std::string& name) {
  std::ifstream in(std::string(GRADER_TESTDATA_DIR) + "/" + name, std::ios::binary);
  EXPECT_TRUE(in) << name;
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(SanitizerReport, MissingBarrierIsARaceBetweenTheStoreAndTheLoadLines) {
  const auto log = parse_sanitizer_log("racecheck", testdata("h100-san-l07-nosync-racecheck.txt"));
  EXPECT_TRUE(log.summary_seen);
  EXPECT_EQ(log.errors, 4);
  ASSERT_EQ(log.reports.size(), 4u);
  const auto& r = log.reports[0];
  EXPECT_EQ(r.symptom, Symptom::race);
  EXPECT_EQ(r.kernel, "transpose_kernel");
  EXPECT_EQ(r.location, "missing_syncthreads.cu:23");
  EXPECT_EQ(r.headline,
            "a race on shared memory between a read at missing_syncthreads.cu:23 and a write at "
            "missing_syncthreads.cu:16 in transpose_kernel (no __syncthreads() between them)");
  EXPECT_FALSE(r.warning);
}

TEST(SanitizerReport, RacecheckWarningsCountAsReports) {
  const auto log = parse_sanitizer_log("racecheck", testdata("h100-san-l08-nosync-racecheck.txt"));
  EXPECT_EQ(log.errors, 3);  // 2 errors and 1 warning
  ASSERT_EQ(log.reports.size(), 3u);
  EXPECT_TRUE(log.reports[2].warning);
  EXPECT_EQ(log.reports[2].headline.rfind("a possible race", 0), 0u) << log.reports[2].headline;
}

TEST(SanitizerReport, OutOfBoundsWriteNamesTheLineAndDropsHostFrames) {
  const auto log = parse_sanitizer_log("memcheck", testdata("h100-san-l07-wpo-memcheck.txt"));
  EXPECT_EQ(log.errors, 2189);
  ASSERT_GE(log.reports.size(), 2u);
  const auto& r = log.reports[0];
  EXPECT_EQ(r.symptom, Symptom::out_of_bounds);
  EXPECT_EQ(r.location, "write_past_output.cu:24");
  EXPECT_EQ(r.headline, "invalid __global__ write of size 4 bytes at write_past_output.cu:24 in transpose_kernel");
  for (const auto& line : r.lines) EXPECT_EQ(line.find("Host Frame"), std::string::npos) << line;
  EXPECT_NE(std::find(r.lines.begin(), r.lines.end(), "by thread (0,2,0) in block (24,24,0)"), r.lines.end());
}

TEST(SanitizerReport, CleanLogsHaveNoReports) {
  for (const auto& [tool, file] : std::vector<std::pair<std::string, std::string>>{
           {"memcheck", "h100-san-ref-lab07-bank-conflicts-memcheck.txt"},
           {"initcheck", "h100-san-ref-lab07-bank-conflicts-initcheck.txt"},
           {"racecheck", "h100-san-ref-lab06-shared-tiling-racecheck.txt"}}) {
    const auto log = parse_sanitizer_log(tool, testdata(file));
    EXPECT_TRUE(log.summary_seen) << file;
    EXPECT_EQ(log.errors, 0) << file;
    EXPECT_TRUE(log.reports.empty()) << file;
  }
}

TEST(SanitizerReport, LeaksApiErrorsAndOtherToolsGetTheirSymptoms) {
  const auto leak =
      parse_sanitizer_log("memcheck",
                          "========= COMPUTE-SANITIZER\n"
                          "========= Leaked 4096 bytes at 0x7f0000000000\n"
                          "=========     Saved host backtrace up to driver entry point at allocation time\n"
                          "=========         Host Frame: launch_transpose [0x1] in runner\n"
                          "========= \n"
                          "========= LEAK SUMMARY: 4096 bytes leaked in 1 allocations\n"
                          "========= ERROR SUMMARY: 1 error\n");
  ASSERT_EQ(leak.reports.size(), 1u);
  EXPECT_EQ(leak.reports[0].symptom, Symptom::leak);
  EXPECT_EQ(leak.reports[0].lines.size(), 1u);
  const auto api =
      parse_sanitizer_log("memcheck",
                          "========= Program hit cudaErrorInvalidValue (error 1) due to \"invalid "
                          "argument\" on CUDA API call to cudaMemcpy.\n========= ERROR SUMMARY: 1 error\n");
  EXPECT_EQ(api.reports.at(0).symptom, Symptom::api_error);
  const auto init = parse_sanitizer_log("initcheck",
                                        "========= Uninitialized __global__ memory read of size 4 bytes\n"
                                        "=========     at k(float *)+0x80 in /home/s/labs/lab07/kernel.cu:12\n"
                                        "========= ERROR SUMMARY: 1 error\n");
  EXPECT_EQ(init.reports.at(0).symptom, Symptom::uninitialized);
  EXPECT_EQ(init.reports.at(0).location, "kernel.cu:12");
  EXPECT_EQ(init.reports.at(0).kernel, "k");
  EXPECT_EQ(parse_sanitizer_log("synccheck", "========= Barrier error detected. Divergent thread(s) in block\n")
                .reports.at(0)
                .symptom,
            Symptom::divergent_barrier);
}

TEST(SanitizerReport, AProgramThatStoppedEarlyHasNoSummary) {
  const auto log = parse_sanitizer_log("memcheck", "hello from the program\n========= COMPUTE-SANITIZER\n");
  EXPECT_FALSE(log.summary_seen);
  EXPECT_TRUE(log.reports.empty());
}

TEST(SanitizerReport, MemcheckAsksForLeaks) {
  const auto a = sanitizer_arguments("/cs", "memcheck", "/tmp/l", 60);
  EXPECT_NE(std::find(a.begin(), a.end(), "--leak-check"), a.end());
  const auto r = sanitizer_arguments("/cs", "racecheck", "/tmp/l", 60);
  EXPECT_EQ(std::find(r.begin(), r.end(), "--leak-check"), r.end());
  EXPECT_EQ(r[2], "racecheck");
}

// memcheck gets --nvtx and --padding only where the sanitizer's --help lists
// them; an older one would refuse to start.
TEST(SanitizerReport, MemcheckGetsNvtxAndPaddingOnlyWhereTheSanitizerHasThem) {
  const auto dir = std::filesystem::temp_directory_path() / ("sanitizer-nvtx-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto with = dir / "with", without = dir / "without";
  std::ofstream(with) << "#!/bin/sh\necho '  --nvtx arg   Enable NVTX support.'\necho '  --padding arg'\n"
                         "echo '  --launch-timeout arg'\n";
  std::ofstream(without) << "#!/bin/sh\necho '  --leak-check arg'\n";
  const auto on_stderr = dir / "on_stderr";  // the help may go to either stream
  std::ofstream(on_stderr) << "#!/bin/sh\necho '  --nvtx arg' >&2\necho '  --padding arg' >&2\n";
  for (const auto& f : {with, without, on_stderr}) std::filesystem::permissions(f, std::filesystem::perms::owner_all);
  const auto has = [](const std::vector<std::string>& a, const std::string& option, const std::string& value) {
    const auto it = std::find(a.begin(), a.end(), option);
    return it != a.end() && it + 1 != a.end() && it[1] == value;
  };
  const auto memcheck = sanitizer_arguments(with, "memcheck", "/tmp/l", 60);
  EXPECT_TRUE(has(memcheck, "--nvtx", "yes"));
  EXPECT_TRUE(has(memcheck, "--padding", "1048576"));
  EXPECT_FALSE(has(sanitizer_arguments(with, "racecheck", "/tmp/l", 60), "--padding", "1048576"));
  const auto old = sanitizer_arguments(without, "memcheck", "/tmp/l", 60);
  EXPECT_FALSE(has(old, "--nvtx", "yes"));
  EXPECT_FALSE(has(old, "--padding", "1048576"));
  EXPECT_TRUE(has(old, "--leak-check", "full"));
  EXPECT_TRUE(has(sanitizer_arguments(on_stderr, "memcheck", "/tmp/l", 60), "--padding", "1048576"));
  // It waits for the program to connect as long as the run may last (the
  // default, 10 s, failed honest programs under a loaded batch), on every tool.
  EXPECT_TRUE(has(sanitizer_arguments(with, "racecheck", "/tmp/l", 60), "--launch-timeout", "120"));
  EXPECT_FALSE(has(old, "--launch-timeout", "120"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace grader
