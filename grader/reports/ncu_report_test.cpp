// ncu's CSV logs recorded on the H100 (grader/reports/testdata/h100-ncu-*.csv): the
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
  EXPECT_TRUE(log.measured());
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
  // Where to look: the conflicts are the loads', so the lines of the kernel's shared loads.
  EXPECT_EQ(unpadded.look_at, std::vector<std::string>{"ld.shared"});
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
  // Both sides are worse than a warp of consecutive floats (12.3 and 32 sectors per request).
  EXPECT_EQ(walk.look_at, (std::vector<std::string>{"ld.global", "ld.global.nc", "st.global"}));
}

TEST(NcuReport, LocalMemoryBytesAreCounted) {
  const auto ring = measure("h100-ncu-l01-ring.csv", "local_memory_bytes");
  EXPECT_EQ(ring.value, 33554432.0 + 1572864.0);
  EXPECT_EQ(ring.summary, "35127296 bytes of local-memory traffic");
  EXPECT_EQ(ring.look_at, (std::vector<std::string>{"ld.local", "st.local"}));
}

TEST(NcuReport, NoLaunchOfTheKernelListsTheKernelsThatRan) {
  const NcuLog log = parse_ncu_log(testdata("h100-ncu-ref-lab08-reduction.csv"));
  EXPECT_EQ(log.status, NcuLog::no_kernel);
  EXPECT_EQ(log.launched, (std::vector<std::string>{"dot_shuffle_kernel", "fill_uniform_kernel", "fill_words_kernel"}));
  EXPECT_TRUE(log.measured()) << "the program never launched it: so would the same program again";
}

TEST(NcuReport, PermissionErrorIsRecognised) {
  const NcuLog log = parse_ncu_log(
      "==PROF== Connected to process 1 (runner)\n"
      "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters on "
      "the target device 0.\n");
  EXPECT_EQ(log.status, NcuLog::not_permitted);
  EXPECT_NE(log.message.find("ERR_NVGPUCTRPERM"), std::string::npos);
  EXPECT_FALSE(log.measured()) << "the machine's state, not the program's: never kept for the next grade";
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

TEST(NcuReport, ArgumentsProfileEveryLaunchOfEveryKernelUpToTheLimitWithUnmodifiedClocks) {
  const auto args = ncu_arguments("/opt/ncu", find_ncu_measure("local_memory_bytes")->metrics, "/tmp/log.csv");
  const std::string all = [&] {
    std::string s;
    for (const auto& a : args) s += a + " ";
    return s;
  }();
  EXPECT_NE(all.find("--clock-control none"), std::string::npos);
  // No kernel filter: the harness's marker and any kernel not in kernel.cu must show (launch_record.hpp).
  EXPECT_EQ(all.find("--kernel-name"), std::string::npos);
  EXPECT_NE(all.find("--print-kernel-base mangled --launch-count " + std::to_string(kMaxLaunchesInARun + 1)),
            std::string::npos);
  EXPECT_NE(all.find("--log-file /tmp/log.csv"), std::string::npos);
}

// A launch of `blocks` blocks with the given counters (warp instructions, store sectors).
NcuLaunch launch_with(double shared_ld, double global_ld, double store_sectors, double shared_st = 0) {
  NcuLaunch l;
  l.blocks = 1024;
  l.metrics = {{"sm__sass_inst_executed_op_shared_ld.sum", shared_ld},
               {"sm__sass_inst_executed_op_shared_st.sum", shared_st},
               {"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", global_ld},
               {"l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", store_sectors}};
  return l;
}

TEST(NcuReport, TileLoadsAreCountedPerValueEachLaunchStored) {
  const auto* shared = find_ncu_measure("shared_loads_per_output");
  const auto* global = find_ncu_measure("global_loads_per_output");
  ASSERT_NE(shared, nullptr);
  ASSERT_NE(global, nullptr);
  EXPECT_EQ(shared->rule, NcuMeasure::at_least);
  EXPECT_EQ(global->rule, NcuMeasure::at_most);
  // lab09's box at 1024 x 1024 from a 48 x 48 tile, 4 rows a thread: 1024 blocks of
  // 1024 outputs; per block 72 global load warp-instructions (2304 values) and
  // 8 warps x 340 shared loads; 128 store sectors a block.
  const NcuLaunch tile = launch_with(1024 * 8 * 340, 1024 * 72, 1024 * 128);
  EXPECT_NEAR(evaluate(*shared, tile)->value, 85.0, 1e-9);
  EXPECT_NEAR(evaluate(*global, tile)->value, 2.25, 1e-9);
  EXPECT_EQ(evaluate(*shared, tile)->summary, "85.0 shared-memory loads per output value stored");
  // Plain loads with one shared load a warp for show: 289 global loads per output, 1 shared.
  const NcuLaunch plain = launch_with(1024 * 32, 1024 * 32 * 289, 1024 * 128);
  EXPECT_EQ(judge_launches(*shared, {plain}, 8, 0).status, NcuJudgement::fails);
  EXPECT_EQ(judge_launches(*global, {plain}, 24, 0).status, NcuJudgement::fails);
  EXPECT_NEAR(judge_launches(*global, {plain}, 24, 0).worst.value, 289.0, 1e-9);
  // Each launch on its own: the tile on a quarter of the image does not speak
  // for the plain launch that wrote the rest.
  const NcuLaunch quarter = launch_with(256 * 8 * 340, 256 * 72, 256 * 128);
  const NcuLaunch rest = launch_with(0, 768 * 32 * 289, 768 * 128);
  const NcuJudgement both = judge_launches(*shared, {quarter, rest}, 8, 0);
  EXPECT_EQ(both.status, NcuJudgement::fails);
  EXPECT_EQ(both.judged, 2u);
  EXPECT_EQ(both.worst_launch, 1u);
  // A launch that stores nothing is not judged; when none stores, the first reads 0.
  const NcuLaunch idle = launch_with(0, 1000, 0);
  const NcuJudgement with_idle = judge_launches(*shared, {idle, tile}, 8, 0);
  EXPECT_EQ(with_idle.status, NcuJudgement::ok);
  EXPECT_EQ(with_idle.judged, 1u);
  const NcuJudgement none = judge_launches(*shared, {idle}, 8, 0);
  EXPECT_EQ(none.status, NcuJudgement::fails);
  EXPECT_NE(none.worst.details.back().find("stored nothing"), std::string::npos);
}

TEST(NcuReport, StoringTheOutputManyTimesDoesNotThinTheLoads) {
  const auto* global = find_ncu_measure("global_loads_per_output");
  // Plain loads, 289 per output, with every output stored 20 times over: per
  // sector stored that is 14.45, but the case has only 1,048,576 outputs.
  const NcuLaunch repeated = launch_with(0, 1024 * 32 * 289, 20 * 1024 * 128);
  EXPECT_NEAR(evaluate(*global, repeated)->value, 289.0 / 20, 1e-9);
  const auto capped = evaluate(*global, repeated, 1024.0 * 1024);
  EXPECT_NEAR(capped->value, 289.0, 1e-9);
  EXPECT_NE(capped->details.back().find("counted as the case's 1048576 outputs"), std::string::npos)
      << capped->details.back();
  // A launch that writes a quarter of the output is judged by its quarter.
  const NcuLaunch quarter = launch_with(0, 256 * 72, 256 * 128);
  EXPECT_NEAR(evaluate(*global, quarter, 1024.0 * 1024)->value, 2.25, 1e-9);
}

TEST(NcuReport, ABoundReadsTheSameInAFailureAndInGraderCheck) {
  EXPECT_EQ(ncu_bound_in_words(*find_ncu_measure("shared_loads_per_output"), 8), "at least 8.0");
  EXPECT_EQ(ncu_bound_in_words(*find_ncu_measure("shared_bank_conflicts_per_request"), 0.05), "at most 0.050");
  EXPECT_EQ(ncu_bound_in_words(*find_ncu_measure("shared_memory_instructions"), 0), "0");
  const auto shared = evaluate(*find_ncu_measure("shared_loads_per_output"), launch_with(8, 0, 4));
  EXPECT_EQ(shared->details.front().rfind("8 shared-memory load instructions", 0), 0u) << shared->details.front();
  const auto global = evaluate(*find_ncu_measure("global_loads_per_output"), launch_with(0, 8, 4));
  EXPECT_EQ(global->details.front().rfind("8 global-memory load instructions", 0), 0u) << global->details.front();
}

// A launch's bytes: read from shared memory, and asked of global memory by loads.
NcuLaunch launch_with_bytes(double shared_bytes, double global_bytes) {
  NcuLaunch l;
  l.blocks = 1024;
  l.metrics = {{"sm__sass_data_bytes_mem_shared_op_ld.sum", shared_bytes},
               {"l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum", global_bytes}};
  return l;
}

// The tile is where the taps come from, in bytes: what float4 loads or a thread's
// patch of outputs do to an instruction count, they do not do to the bytes.
TEST(NcuReport, ATileReadsMoreFromSharedMemoryThanItLoadsFromGlobal) {
  const auto* m = find_ncu_measure("shared_bytes_per_global_byte");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->rule, NcuMeasure::at_least);
  const double outputs = 1024.0 * 1024;
  // lab09's reference on the H200: 340 bytes from its tile and 8.98 from global memory per output.
  const NcuJudgement tile = judge_launches(*m, {launch_with_bytes(340 * outputs, 8.98 * outputs)}, 2, 0);
  EXPECT_EQ(tile.status, NcuJudgement::ok);
  EXPECT_NEAR(tile.worst.value, 340 / 8.98, 1e-9);
  // Taps from float4 patches of global memory (36 bytes an output), a shared load for show (4).
  const NcuJudgement token = judge_launches(*m, {launch_with_bytes(4 * outputs, 36 * outputs)}, 2, 0);
  EXPECT_EQ(token.status, NcuJudgement::fails);
  EXPECT_NE(token.worst.details.front().find("bytes read from shared memory"), std::string::npos);
  // Every launch is judged: an honest one cannot speak for one that takes its taps elsewhere.
  const NcuJudgement mixed =
      judge_launches(*m, {launch_with_bytes(340 * outputs, 9 * outputs), launch_with_bytes(0, 1392 * outputs)}, 2, 0);
  EXPECT_EQ(mixed.status, NcuJudgement::fails);
  EXPECT_EQ(mixed.worst_launch, 1u);
  // A tile filled without global loads at all (a tensor-memory copy) passes on its shared bytes.
  EXPECT_EQ(judge_launches(*m, {launch_with_bytes(340 * outputs, 0)}, 2, 0).status, NcuJudgement::ok);
  // Nothing read from either: nothing shows a tile.
  EXPECT_EQ(judge_launches(*m, {launch_with_bytes(0, 0)}, 2, 0).status, NcuJudgement::fails);
}

// A launch's global-memory bytes by how they came: by cp.async, by loads into
// registers, by bulk copies (the TMA).
NcuLaunch launch_reading(double async_bytes, double loaded_bytes, double bulk_bytes) {
  NcuLaunch l;
  l.blocks = 256;
  l.metrics = {{"sm__sass_data_bytes_mem_global_op_ldgsts.sum", async_bytes},
               {"sm__sass_data_bytes_mem_global_op_ld.sum", loaded_bytes},
               {"l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld.sum", bulk_bytes}};
  return l;
}

// lab11 on the H200 at 512 x 512 x 512: its reference's tiles take 33,554,432
// bytes by cp.async and none by loads; a kernel that copies the tiles for show
// and multiplies A and B read from global memory loads 553,648,128 bytes more;
// the reference's bulk step reads the same 33,554,432 bytes by the TMA alone.
TEST(NcuReport, CopiedFractionsSayHowTheTilesArrived) {
  const auto* async = find_ncu_measure("async_copied_fraction");
  const auto* bulk = find_ncu_measure("bulk_copied_fraction");
  ASSERT_NE(async, nullptr);
  ASSERT_NE(bulk, nullptr);
  EXPECT_EQ(async->rule, NcuMeasure::at_least);
  EXPECT_EQ(bulk->rule, NcuMeasure::at_least);
  const NcuJudgement reference = judge_launches(*async, {launch_reading(33554432, 0, 0)}, 0.9, 0);
  EXPECT_EQ(reference.status, NcuJudgement::ok);
  EXPECT_DOUBLE_EQ(reference.worst.value, 1.0);
  const NcuJudgement for_show = judge_launches(*async, {launch_reading(33554432, 553648128, 0)}, 0.9, 0);
  EXPECT_EQ(for_show.status, NcuJudgement::fails);
  EXPECT_NEAR(for_show.worst.value, 33554432.0 / (33554432.0 + 553648128.0), 1e-9);
  EXPECT_EQ(for_show.worst.summary, "0.057 of the bytes it reads from global memory arriving by cp.async");
  EXPECT_EQ(for_show.worst.look_at, (std::vector<std::string>{"ld.global", "ld.global.nc"}));
  // cp.async written in a branch that never runs: the tiles come through registers.
  EXPECT_EQ(judge_launches(*async, {launch_reading(0, 33554432, 0)}, 0.9, 0).status, NcuJudgement::fails);
  // Nothing read at all is no evidence either.
  const NcuJudgement nothing = judge_launches(*async, {launch_reading(0, 0, 0)}, 0.9, 0);
  EXPECT_EQ(nothing.status, NcuJudgement::fails);
  EXPECT_NE(nothing.worst.details.back().find("read nothing"), std::string::npos);
  // Bulk copies: all of the reference's bytes; one 16-byte copy a block for show (a 32-byte
  // sector each of 256 blocks) beside cp.async tiles, almost none.
  EXPECT_EQ(judge_launches(*bulk, {launch_reading(0, 0, 33554432)}, 0.9, 0).status, NcuJudgement::ok);
  const NcuJudgement bulk_for_show = judge_launches(*bulk, {launch_reading(33554432, 0, 8192)}, 0.9, 0);
  EXPECT_EQ(bulk_for_show.status, NcuJudgement::fails);
  EXPECT_EQ(bulk_for_show.worst.look_at, std::vector<std::string>{"cp.async"});
  EXPECT_EQ(ncu_bound_in_words(*async, 0.9), "at least 0.9");
}

TEST(NcuReport, PlainLoadsExecuteNoSharedMemoryInstruction) {
  const auto* m = find_ncu_measure("shared_memory_instructions");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->rule, NcuMeasure::at_most);
  EXPECT_EQ(judge_launches(*m, {launch_with(0, 1000, 128)}, 0, 0).status, NcuJudgement::ok);
  const NcuJudgement tile = judge_launches(*m, {launch_with(4096, 1000, 128, 2048)}, 0, 0);
  EXPECT_EQ(tile.status, NcuJudgement::fails);
  EXPECT_EQ(tile.worst.summary, "6144 shared-memory loads and stores executed");
}

// An ncu run that measured nothing speaks of the machine, of the program, or of
// nobody; only the program's failures fail a check, and ncu's own never pass one.
TEST(NcuReport, WhoseFailureSaysWhoseFactAnEmptyRunIs) {
  const NcuLog not_permitted = parse_ncu_log("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission\n");
  EXPECT_EQ(whose_failure(not_permitted, RunCategory::ok), NcuFailure::machine);
  const NcuLog no_kernel = parse_ncu_log(
      "==PROF== Connected to process 7 (worker)\n==WARNING== No kernels were profiled.\n"
      "Available Kernels:\n1. fill_uniform_kernel\n");
  EXPECT_EQ(whose_failure(no_kernel, RunCategory::ok), NcuFailure::program);
  // No connection, no kernel seen at all: ncu's injection never reached the program
  // (on the H100, bwrap without ncu's libraries): nobody's fact about the program.
  const NcuLog never_connected = parse_ncu_log("==WARNING== No kernels were profiled.\n");
  EXPECT_EQ(never_connected.status, NcuLog::failed);
  EXPECT_NE(never_connected.message.find("never connected"), std::string::npos) << never_connected.message;
  EXPECT_EQ(whose_failure(never_connected, RunCategory::ok), NcuFailure::tool);
  const NcuLog broken =
      parse_ncu_log("==PROF== Connected to process 7 (worker)\n==ERROR== Failed to prepare kernel for profiling\n");
  ASSERT_EQ(broken.status, NcuLog::failed);
  for (RunCategory outcome :
       {RunCategory::timeout, RunCategory::crash, RunCategory::cuda_error, RunCategory::process_limit})
    EXPECT_EQ(whose_failure(broken, outcome), NcuFailure::program) << category_name(outcome);
  // The program ran to its end (or left no clue) while ncu failed: ncu's failure,
  // which a program can provoke, so it must not decide the check either way. An
  // exit code that is not 0 ("error") is ncu's or the program's: no telling which.
  for (RunCategory outcome :
       {RunCategory::ok, RunCategory::error, RunCategory::mismatch, RunCategory::no_result, RunCategory::protocol})
    EXPECT_EQ(whose_failure(broken, outcome), NcuFailure::tool) << category_name(outcome);
  EXPECT_EQ(whose_failure(parse_ncu_log(""), RunCategory::ok), NcuFailure::tool);
}

}  // namespace
}  // namespace grader
