#include "phase_log.hpp"

#include <gtest/gtest.h>

#include <thread>

#include "activity.hpp"

using namespace grader;
using namespace std::chrono_literals;

namespace {

const Phase* find(const std::vector<Phase>& phases, const std::string& what) {
  for (const auto& p : phases)
    if (p.what == what) return &p;
  return nullptr;
}

}  // namespace

// Activities are noted (also with the spinner off, as under --json), with
// their nesting, in the order they began, and with plausible durations.
TEST(PhaseLog, ActivitiesAreNotedWithTheirNestingAndDuration) {
  Activity::configure(false);
  {
    Activity outer("outer work");
    std::this_thread::sleep_for(20ms);
    {
      Activity inner("inner work");
      std::this_thread::sleep_for(30ms);
    }
    outer.update("outer, second part");
    std::this_thread::sleep_for(10ms);
  }
  const auto phases = noted_phases();
  const Phase* outer = find(phases, "outer work");
  const Phase* inner = find(phases, "inner work");
  const Phase* second = find(phases, "outer, second part");
  ASSERT_TRUE(outer && inner && second);
  EXPECT_EQ(outer->depth, 0);
  EXPECT_EQ(inner->depth, 1);
  EXPECT_EQ(second->depth, 0);
  EXPECT_GE(outer->seconds, 0.045);  // its first part: 20 ms alone, then the inner 30 ms
  EXPECT_GE(inner->seconds, 0.025);
  EXPECT_LT(inner->seconds, outer->seconds);
  EXPECT_GE(second->seconds, 0.008);
  EXPECT_LE(outer->start_s, inner->start_s);
  EXPECT_LE(inner->start_s + inner->seconds, second->start_s + 1e-6);
  EXPECT_GE(seconds_since_start(), second->start_s + second->seconds);
}

TEST(PhaseLog, TheTableAccountsForTheWholeTime) {
  const std::vector<Phase> phases = {
      {"building kernel.cu", 0.1, 1.5, 0}, {"memcheck", 2.0, 0.7, 1}, {"ncu", 2.0, 2.0, 0}};
  const std::string table = format_phases(phases, 4.0);
  EXPECT_NE(table.find("   1.50 s  building kernel.cu\n"), std::string::npos) << table;
  EXPECT_NE(table.find("   0.70 s    memcheck\n"), std::string::npos) << table;  // nested: indented
  EXPECT_NE(table.find("   0.50 s  other"), std::string::npos) << table;         // 4.0 - 1.5 - 2.0
  EXPECT_NE(table.find("   4.00 s  in all\n"), std::string::npos) << table;
}
