#include "counter_access.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

namespace fs = std::filesystem;
using namespace grader;

namespace {
fs::path params_with(const std::string& text) {
  const fs::path p = fs::temp_directory_path() / ("counter_access_test-" + std::to_string(getpid()));
  std::ofstream(p) << "ResmanDebugLevel: 4294967295\n" << text << "EnableMSI: 1\n";
  return p;
}
}  // namespace

TEST(CounterAccess, AnAdminOnlyDriverStopsAnOrdinaryUserAndSaysTheFix) {
  const fs::path p = params_with("RmProfilingAdminOnly: 1\n");
  const CounterAccess a = counter_access(p, 1000);
  EXPECT_TRUE(a.known);
  EXPECT_TRUE(a.restricted);
  EXPECT_NE(a.summary.find("NVreg_RestrictProfilingPermission=0"), std::string::npos) << a.summary;
  EXPECT_NE(a.summary.find("WSL2"), std::string::npos) << a.summary;
  EXPECT_FALSE(counter_access(p, 0).restricted) << "root may read them";
  fs::remove(p);
}

TEST(CounterAccess, AnOpenDriverOrNoneSaysSo) {
  const fs::path p = params_with("RmProfilingAdminOnly: 0\n");
  EXPECT_FALSE(counter_access(p, 1000).restricted);
  EXPECT_TRUE(counter_access(p, 1000).known);
  fs::remove(p);
  const CounterAccess none = counter_access(p, 1000);
  EXPECT_FALSE(none.known);
  EXPECT_FALSE(none.restricted);
}
