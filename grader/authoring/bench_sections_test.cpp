#include "bench_sections.hpp"

#include <gtest/gtest.h>

namespace grader {
namespace {

TEST(BenchSections, WhatIsWrittenIsReadBackAndTheOtherLabsStay) {
  std::string file = with_bench_section("", "lab01-a", "table one\n");
  file = with_bench_section(file, "lab02-b", "table two\n");
  EXPECT_EQ(bench_section(file, "lab01-a"), "table one\n");
  EXPECT_EQ(bench_section(file, "lab02-b"), "table two\n");
  const std::string again = with_bench_section(file, "lab01-a", "table one, run again\n");
  EXPECT_EQ(bench_section(again, "lab01-a"), "table one, run again\n");
  EXPECT_EQ(bench_section(again, "lab02-b"), "table two\n");
  EXPECT_EQ(again.size(), file.size() + std::string(", run again").size());  // replaced, not appended
  EXPECT_EQ(again.rfind("# Measurements", 0), 0u);
}

TEST(BenchSections, ALabWithNoSectionOrAnUnclosedOneHasNone) {
  EXPECT_FALSE(bench_section("# Measurements\n", "lab01-a"));
  EXPECT_FALSE(bench_section("<!-- bench:lab01-a -->\ntable\n", "lab01-a"));
}

}  // namespace
}  // namespace grader
