#include "todo_regions.hpp"

#include <gtest/gtest.h>

using namespace grader;

namespace {
const std::string kSkeleton =
    "#include \"lab.cuh\"\n"
    "__global__ void k(float* out) {\n"
    "  // TODO(step 2): pad the tile (~1 line)\n"
    "  // TODO(step 1): stage through shared memory (~3 lines)\n"
    "  out[0] = 1;\n"
    "  out[1] = 2;\n"
    "}\n"
    "\n"
    "void launch(float* out) { k<<<1, 1>>>(out); }\n";
}

TEST(TodoRegions, RegionRunsToTheEndOfTheBlock) {
  const auto in = todo_region_lines(split_lines(kSkeleton));
  const std::vector<bool> want = {false, false, true, true, true, true, false, false, false};
  EXPECT_EQ(in, want);
}

TEST(TodoRegions, FillingTheRegionsIsClean) {
  const std::string solution =
      "#include \"lab.cuh\"\n"
      "__global__ void k(float* out) {\n"
      "  __shared__ float tile[33];\n"
      "  tile[0] = 1;\n"
      "  __syncthreads();\n"
      "  out[0] = tile[0];\n"
      "  out[1] = 2;\n"
      "}\n"
      "\n"
      "void launch(float* out) { k<<<1, 1>>>(out); }\n";
  EXPECT_TRUE(stray_hunks(kSkeleton, solution).empty());
}

TEST(TodoRegions, AChangeOutsideARegionIsReported) {
  std::string solution = kSkeleton;
  solution.replace(solution.find("k<<<1, 1>>>"), 11, "k<<<2, 1>>>");
  const auto stray = stray_hunks(kSkeleton, solution);
  ASSERT_EQ(stray.size(), 1u);
  EXPECT_EQ(stray[0].skeleton_line, 9);
  ASSERT_EQ(stray[0].added.size(), 1u);
  EXPECT_NE(stray[0].added[0].find("k<<<2, 1>>>"), std::string::npos);
}

TEST(TodoRegions, AnInsertionFarFromARegionIsReported) {
  const std::string solution = "// a new first line\n" + kSkeleton;
  const auto stray = stray_hunks(kSkeleton, solution);
  ASSERT_EQ(stray.size(), 1u);
  EXPECT_EQ(stray[0].skeleton_line, 1);
  EXPECT_TRUE(stray[0].removed.empty());
}

TEST(TodoRegions, IdenticalFilesHaveNoHunks) {
  EXPECT_TRUE(diff_lines(split_lines(kSkeleton), split_lines(kSkeleton)).empty());
}
