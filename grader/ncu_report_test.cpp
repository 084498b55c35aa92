// ncu's CSV logs recorded on the H100 (grader/testdata/h100-ncu-*.csv): the
// lab07 transpose with and without the padded tile, lab02's 2-D kernel
// coalesced and not, lab01's window in local memory, and a run that never
// launched the kernel ncu was told to profile.
#include "ncu_report.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <sstream>

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
  EXPECT_EQ(log.launches.size(), 1u);
  const auto v = evaluate(*m, log.launches.at(0));
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

TEST(NcuReport, ProfiledLaunchIsNamedAndItsGridCounted) {
  const NcuLog log = parse_ncu_log(testdata("h100-ncu-l07-unpadded.csv"));
  ASSERT_EQ(log.launches.size(), 1u);
  EXPECT_EQ(log.launches[0].kernel, "transpose_kernel(float *, const float *, int, int)");
  EXPECT_EQ(log.launches[0].blocks, 32 * 32);  // "Grid Size" (32, 32, 1)
  EXPECT_EQ(log.launches[0].metrics.at("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"), 1015808);
}

// A log of two launches: the header and units of the recorded one, then a
// launch that moves nothing through shared memory and the recorded launch.
std::string two_launches() {
  const std::string recorded = testdata("h100-ncu-l07-unpadded.csv");
  std::vector<std::string> lines;
  std::istringstream in(recorded);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::string header, units, row;
  for (const auto& l : lines)
    if (!l.empty() && l[0] == '"') (header.empty() ? header : units.empty() ? units : row) = l;
  std::string harmless = row;
  for (const char* counter : {"\"1,015,808\"", "\"32,768\""})
    for (std::size_t at; (at = harmless.find(counter)) != std::string::npos;)
      harmless.replace(at, std::string(counter).size(), "\"0\"");
  return header + "\n" + units + "\n" + harmless + "\n" + row + "\n";
}

TEST(NcuReport, EveryLaunchIsReadInOrder) {
  const NcuLog log = parse_ncu_log(two_launches());
  ASSERT_EQ(log.status, NcuLog::ok);
  ASSERT_EQ(log.launches.size(), 2u);
  const auto* m = find_ncu_measure("shared_bank_conflicts_per_request");
  EXPECT_EQ(evaluate(*m, log.launches[0])->value, 0);  // the harmless launch first
  EXPECT_NEAR(evaluate(*m, log.launches[1])->value, 31.0, 0.01);
  // Judged one by one, so the harmless launch cannot stand for the other.
  EXPECT_EQ(judged_launches(*m, log.launches).size(), 2u);
}

TEST(NcuReport, EveryLaunchMustMeetTheBound) {
  const NcuLog log = parse_ncu_log(two_launches());
  const auto* conflicts = find_ncu_measure("shared_bank_conflicts_per_request");
  const NcuJudgement c = judge_launches(*conflicts, log.launches, 0.05, 0);
  EXPECT_EQ(c.status, NcuJudgement::fails);  // the harmless first launch does not speak for the second
  EXPECT_EQ(c.judged, 2u);
  EXPECT_EQ(c.failing, 1u);
  EXPECT_EQ(c.worst_launch, 1u);
  EXPECT_NEAR(c.worst.value, 31.0, 0.01);
  // Evidence the other way round: the launch with no shared loads fails "at least one per block".
  const auto* shared = find_ncu_measure("shared_loads_per_block");
  const NcuJudgement s = judge_launches(*shared, log.launches, 1, 0);
  EXPECT_EQ(s.status, NcuJudgement::fails);
  EXPECT_EQ(s.worst_launch, 0u);
  EXPECT_EQ(s.values, (std::vector<double>{0, 32}));
  EXPECT_EQ(judge_launches(*shared, {log.launches[1]}, 1, 0).status, NcuJudgement::ok);
  // One stray conflict in 32,768 requests is within 0.05 per request.
  NcuLaunch stray = log.launches[1];
  stray.metrics["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"] = 1;
  const NcuJudgement one = judge_launches(*conflicts, {stray}, 0.05, 0);
  EXPECT_EQ(one.status, NcuJudgement::ok);
  EXPECT_EQ(one.worst.summary, "0.000031 bank conflicts per shared-memory request (loads)");
}

TEST(NcuReport, TooManyLaunchesOrAMissingCounterAreSaid) {
  const NcuLog log = parse_ncu_log(two_launches());
  const auto* m = find_ncu_measure("shared_bank_conflicts_per_request");
  const std::vector<NcuLaunch> many(kMaxProfiledLaunches + 1, log.launches[0]);
  EXPECT_EQ(judge_launches(*m, many, 0.05, 0).status, NcuJudgement::too_many_launches);
  NcuLaunch partial;
  partial.metrics = {{"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", 1}};
  EXPECT_EQ(judge_launches(*m, {partial}, 0.05, 0).status, NcuJudgement::not_measured);
}

TEST(NcuReport, StoredBytesShowWhetherTheNamedKernelWroteTheOutput) {
  const auto* m = find_ncu_measure("stored_bytes_per_element");
  ASSERT_NE(m, nullptr);
  const NcuLog log = parse_ncu_log(testdata("h100-ncu-ref-lab02-global.csv"));
  ASSERT_EQ(log.launches.size(), 1u);
  // lab02's coalesced 1024 x 1024 kernel: 131,072 sectors, 4 bytes for each of its floats.
  const NcuJudgement whole = judge_launches(*m, log.launches, 3.9, 1024.0 * 1024);
  EXPECT_EQ(whole.status, NcuJudgement::ok);
  EXPECT_NEAR(whole.worst.value, 4.0, 1e-9);
  // The same stores against an output four times larger: a quarter of it came from elsewhere.
  EXPECT_EQ(judge_launches(*m, log.launches, 3.9, 4 * 1024.0 * 1024).status, NcuJudgement::fails);
  const auto* stores = find_ncu_measure("global_store_sectors_per_request");
  EXPECT_NEAR(judge_launches(*stores, log.launches, 16, 0).worst.value, 4.0, 1e-9);
  const NcuLog walk = parse_ncu_log(testdata("h100-ncu-l02-uncoal.csv"));
  EXPECT_EQ(judge_launches(*stores, walk.launches, 16, 0).status, NcuJudgement::fails);  // 32 per request
}

TEST(NcuReport, SharedLoadsPerBlockAreEvidenceTheTileRan) {
  const auto unpadded = measure("h100-ncu-l07-unpadded.csv", "shared_loads_per_block");
  EXPECT_EQ(unpadded.value, 32);  // 8 warps a block, 4 tile rows each
  EXPECT_EQ(unpadded.summary, "32.0 shared-memory loads executed per block");
  const NcuLog log = parse_ncu_log(two_launches());
  const auto* m = find_ncu_measure("shared_loads_per_block");
  EXPECT_EQ(m->rule, NcuMeasure::at_least);
  const auto dead = evaluate(*m, log.launches[0]);
  ASSERT_TRUE(dead.has_value());
  EXPECT_EQ(dead->value, 0);
  EXPECT_NE(dead->details.back().find("never ran"), std::string::npos);
}

TEST(NcuReport, NonConstantLoadsAreCountedPerElementOverEveryLaunch) {
  const auto* m = find_ncu_measure("non_constant_loads_per_element");
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(m->per_element);
  NcuLaunch half;
  half.blocks = 10;
  half.metrics = {{"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", 500},
                  {"sm__sass_inst_executed_op_local_ld.sum", 0},
                  {"sm__sass_inst_executed_op_shared_ld.sum", 0}};
  // Two launches of 16,000 elements' loads each: one load per element over 32,000.
  const auto judged = judged_launches(*m, {half, half});
  ASSERT_EQ(judged.size(), 1u);
  const auto v = evaluate(*m, judged[0], 32000);
  ASSERT_TRUE(v.has_value());
  EXPECT_NEAR(v->value, 1.0, 1e-9);
  // 64 coefficients from global memory as well: 65 per element.
  half.metrics["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"] = 65 * 500;
  EXPECT_NEAR(evaluate(*m, half, 16000)->value, 65.0, 1e-9);
  EXPECT_FALSE(evaluate(*m, half, 0).has_value());  // no element count, no value
}

TEST(NcuReport, SmallValuesShowTheirDigits) {
  EXPECT_EQ(readable_amount(1.0 / 32768), "0.000031");
  EXPECT_EQ(readable_amount(0), "0.0");
  EXPECT_EQ(readable_amount(31), "31.0");
  EXPECT_EQ(readable_amount(0.05), "0.050");
  EXPECT_EQ(readable_amount(2.5), "2.5");
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
  NcuLaunch partial;
  partial.metrics = {{"l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum", 4}};
  EXPECT_FALSE(evaluate(*m, partial).has_value());
  EXPECT_EQ(find_ncu_measure("bank_conflicts"), nullptr);
}

TEST(NcuReport, ArgumentsProfileEveryLaunchUpToTheLimitWithUnmodifiedClocks) {
  const auto args = ncu_arguments("/opt/ncu", find_ncu_measure("local_memory_bytes")->metrics, "k", "/tmp/log.csv");
  const std::string all = [&] {
    std::string s;
    for (const auto& a : args) s += a + " ";
    return s;
  }();
  EXPECT_NE(all.find("--clock-control none"), std::string::npos);
  EXPECT_NE(all.find("--kernel-name k --launch-count " + std::to_string(kMaxProfiledLaunches + 1)), std::string::npos);
  EXPECT_NE(all.find("--log-file /tmp/log.csv"), std::string::npos);
}

}  // namespace
}  // namespace grader
