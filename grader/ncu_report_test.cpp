// ncu's CSV logs recorded on the H100 (grader/testdata/h100-ncu-*.csv): the
// lab07 transpose with and without the padded tile, lab02's 2-D kernel
// coalesced and not, lab01's window in local memory, and a run that never
// launched the kernel ncu was told to profile.
#include "ncu_report.hpp"

#include <fstream>
#include <gtest/gtest.h>
#include <iterator>

namespace grader {
namespace {

std::string testdata(const std::string& name) {
  std::ifstream in(std::string(GRADER_TESTDATA_DIR) + "/" + name, std::ios::binary);
  EXPECT_TRUE(in) << name;
  return std::string(std::istreambuf_iterator<char>(in), {});
}

NcuValue measure(const std::string& file, const std::string& name) {
  const NcuLog log = parse_ncu_log(testdata(file));
  EXPECT_EQ(log.status, NcuLog::ok) << log.message;
  const auto* m = find_ncu_measure(name);
  EXPECT_NE(m, nullptr);
  const auto v = evaluate(*m, log.metrics);
  EXPECT_TRUE(v.has_value());
  return v.value_or(NcuValue{});
}

TEST(NcuReport, UnpaddedTileHas31ConflictsPerRequestAndThePaddedNone) {
  const auto unpadded = measure("h100-ncu-l07-unpadded.csv", "shared_bank_conflicts_per_request");
  // 32-way conflicts on the column read: 31 extra wavefronts per load, none on the store.
  EXPECT_NEAR(unpadded.value, 31.0, 0.01);  // 1015808 conflicts over 32768 loads
  EXPECT_EQ(unpadded.summary, "31.0 bank conflicts per shared-memory request (loads)");
  ASSERT_FALSE(unpadded.details.empty());
  EXPECT_NE(unpadded.details[0].find("loads: 31.0 conflicts per request"), std::string::npos) << unpadded.details[0];
  EXPECT_NE(unpadded.details[0].find("stores: 0.0"), std::string::npos);
  EXPECT_EQ(measure("h100-ncu-ref-lab07-bank-conflicts.csv", "shared_bank_conflicts_per_request").value, 0);
}

TEST(NcuReport, ProfiledLaunchIsNamed) {
  const NcuLog log = parse_ncu_log(testdata("h100-ncu-l07-unpadded.csv"));
  EXPECT_EQ(log.kernel, "transpose_kernel(float *, const float *, int, int)");
  EXPECT_EQ(log.metrics.at("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"), 1015808);
}

TEST(NcuReport, ColumnWalkNeedsFourTimesTheSectorsOfTheCoalescedKernel) {
  const auto walk = measure("h100-ncu-l02-uncoal.csv", "global_sectors_per_request");
  const auto rows = measure("h100-ncu-ref-lab02-global.csv", "global_sectors_per_request");
  EXPECT_NEAR(rows.value, 3.25, 0.01);   // (294912 + 131072) / (98304 + 32768)
  EXPECT_NEAR(walk.value, 17.25, 0.01);  // (1212416 + 1048576) / (98304 + 32768)
  EXPECT_NE(walk.details[0].find("stores: 32.0"), std::string::npos) << walk.details[0];
}

TEST(NcuReport, LocalMemoryBytesAreCounted) {
  const auto ring = measure("h100-ncu-l01-ring.csv", "local_memory_bytes");
  EXPECT_EQ(ring.value, 33554432.0 + 1572864.0);
  EXPECT_EQ(ring.summary, "35127296 bytes of local-memory traffic");
}

TEST(NcuReport, NoLaunchOfTheKernelListsTheKernelsThatRan) {
  const NcuLog log = parse_ncu_log(testdata("h100-ncu-ref-lab08-reduction.csv"));
  EXPECT_EQ(log.status, NcuLog::no_kernel);
  EXPECT_EQ(log.launched, (std::vector<std::string>{"dot_shuffle_kernel", "fill_uniform_kernel", "fill_words_kernel"}));
}

TEST(NcuReport, PermissionErrorIsRecognised) {
  const NcuLog log = parse_ncu_log(
      "==PROF== Connected to process 1 (runner)\n"
      "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters on "
      "the target device 0.\n");
  EXPECT_EQ(log.status, NcuLog::not_permitted);
  EXPECT_NE(log.message.find("ERR_NVGPUCTRPERM"), std::string::npos);
}

TEST(NcuReport, EmptyOrBrokenLogIsAFailureNotACrash) {
  EXPECT_EQ(parse_ncu_log("").status, NcuLog::failed);
  const NcuLog broken = parse_ncu_log("==ERROR== The application returned an error code (1).\n\"ID\",\"x\"\n");
  EXPECT_EQ(broken.status, NcuLog::failed);
  EXPECT_EQ(broken.message, "The application returned an error code (1).");
}

TEST(NcuReport, MissingMetricGivesNoValue) {
  const auto* m = find_ncu_measure("local_memory_bytes");
  ASSERT_NE(m, nullptr);
  EXPECT_FALSE(evaluate(*m, {{"l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum", 4}}).has_value());
  EXPECT_EQ(find_ncu_measure("bank_conflicts"), nullptr);
}

TEST(NcuReport, ArgumentsProfileOneLaunchWithUnmodifiedClocks) {
  const auto args = ncu_arguments("/opt/ncu", *find_ncu_measure("local_memory_bytes"), "k", "/tmp/log.csv");
  const std::string all = [&] { std::string s; for (const auto& a : args) s += a + " "; return s; }();
  EXPECT_NE(all.find("--clock-control none"), std::string::npos);
  EXPECT_NE(all.find("--kernel-name k --launch-count 1"), std::string::npos);
  EXPECT_NE(all.find("--log-file /tmp/log.csv"), std::string::npos);
}

}  // namespace
}  // namespace grader
