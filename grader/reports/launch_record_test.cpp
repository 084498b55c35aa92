#include "launch_record.hpp"

#include <gtest/gtest.h>

#include "protocol/candidate_marker.hpp"

namespace grader {
namespace {

NcuLaunch launch_of(const std::string& mangled) {
  NcuLaunch l;
  l.kernel = mangled;
  return l;
}

const std::vector<std::string> kOwn = {"_Z16transpose_kernelPfPKfii", "_Z6helperPf"};
const std::string kHarnessFill =
    "_ZN7memlabs39_GLOBAL__N__0a1b2c3d_18support_kernels_cu17fill_words_kernelIjEEvPT_mS2_";
const std::string kBaseline = "_ZN41_GLOBAL__N__ce31a14e_9_driver_cu_755de82115transpose_naiveEPfPKfii";

TEST(LaunchRecord, TheNamedKernelsLaunchesAfterTheMarkerAreTheEvidence) {
  const auto r = read_launch_record({launch_of(kHarnessFill), launch_of(memlabs::kCandidateMarkerKernel),
                                     launch_of(kOwn[0]), launch_of(kOwn[1]), launch_of(kOwn[0])},
                                    kOwn, "transpose_kernel");
  EXPECT_EQ(r.markers, 1);
  EXPECT_EQ(r.named.size(), 2u);
  EXPECT_EQ(r.own, (std::vector<std::string>{"transpose_kernel", "helper"}));
  EXPECT_TRUE(r.others.empty());
  EXPECT_EQ(launch_record_problem(r, "1024x1024"), "");
}

TEST(LaunchRecord, TheHarnessesLaunchesBeforeTheMarkerDoNotCount) {
  // The named kernel's name on a launch before the marker is not the candidate's: not evidence.
  const auto r = read_launch_record(
      {launch_of(kOwn[0]), launch_of(kBaseline), launch_of(memlabs::kCandidateMarkerKernel)}, kOwn, "transpose_kernel");
  EXPECT_TRUE(r.named.empty());
  EXPECT_TRUE(r.others.empty());
}

TEST(LaunchRecord, TheBaselineOrALibraryAfterTheMarkerFails) {
  const auto r = read_launch_record({launch_of(memlabs::kCandidateMarkerKernel), launch_of(kOwn[0]),
                                     launch_of(kBaseline), launch_of("sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n")},
                                    kOwn, "transpose_kernel");
  EXPECT_EQ(r.others, (std::vector<std::string>{"(anonymous namespace)::transpose_naive",
                                                "sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n"}));
  const std::string why = launch_record_problem(r, "8192x8192");
  EXPECT_NE(why.find("not in your kernel.cu"), std::string::npos) << why;
  EXPECT_NE(why.find("transpose_naive"), std::string::npos) << why;
  EXPECT_NE(why.find("sm90_xmma_gemm"), std::string::npos) << why;
}

TEST(LaunchRecord, AKernelNamedLikeYoursButNotInYourPtxIsNotYours) {
  // Same plain name, another mangled name (another parameter list): not the entry kernel.cu compiled.
  const auto r = read_launch_record(
      {launch_of(memlabs::kCandidateMarkerKernel), launch_of("_Z16transpose_kernelPfPKfi")}, kOwn, "transpose_kernel");
  EXPECT_TRUE(r.named.empty());
  EXPECT_EQ(r.others, (std::vector<std::string>{"transpose_kernel"}));
}

TEST(LaunchRecord, AMissingOrRepeatedMarkerIsThePrograms) {
  const auto none = read_launch_record({launch_of(kOwn[0])}, kOwn, "transpose_kernel");
  EXPECT_EQ(none.markers, 0);
  EXPECT_NE(launch_record_problem(none, "c").find("never ran"), std::string::npos);
  const auto twice = read_launch_record(
      {launch_of(memlabs::kCandidateMarkerKernel), launch_of(kOwn[0]), launch_of(memlabs::kCandidateMarkerKernel)},
      kOwn, "transpose_kernel");
  EXPECT_EQ(twice.markers, 2);
  EXPECT_NE(launch_record_problem(twice, "c").find("2 times"), std::string::npos);
}

TEST(LaunchRecord, ANameKernelCuSharesWithTheLabsOwnKernelIsNoEvidence) {
  // kernel.cu rebuilt the driver's anonymous namespace by name: its PTX lists the baseline's name.
  std::vector<std::string> own = kOwn;
  own.push_back(kBaseline);
  const auto r =
      read_launch_record({launch_of(memlabs::kCandidateMarkerKernel), launch_of(kOwn[0]), launch_of(kBaseline)}, own,
                         "transpose_kernel", {kBaseline});
  EXPECT_EQ(r.shared, (std::vector<std::string>{"(anonymous namespace)::transpose_naive"}));
  const std::string why = launch_record_problem(r, "8192x8192");
  EXPECT_NE(why.find("very name of a kernel of the lab's own code"), std::string::npos) << why;
}

}  // namespace
}  // namespace grader
