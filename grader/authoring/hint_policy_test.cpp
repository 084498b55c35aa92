#include "hint_policy.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "publish.hpp"

namespace fs = std::filesystem;
using namespace grader;

TEST(HintPolicy, EachCaseSaysWhatAHintCosts) {
  EXPECT_NE(HintPolicy{}.sentence().find("may take points off"), std::string::npos);
  EXPECT_FALSE(HintPolicy{}.costs_points());
  EXPECT_NE(HintPolicy{0.0}.sentence().find("free"), std::string::npos);
  EXPECT_FALSE(HintPolicy{0.0}.costs_points());
  EXPECT_NE(HintPolicy{0.5}.sentence().find("costs 0.5 points"), std::string::npos) << HintPolicy{0.5}.sentence();
  EXPECT_NE(HintPolicy{1.0}.sentence().find("costs 1 point "), std::string::npos) << HintPolicy{1.0}.sentence();
  EXPECT_TRUE(HintPolicy{0.25}.costs_points());
}

TEST(HintPolicy, ReadFromTheClassCopysManifest) {
  const fs::path dir = fs::temp_directory_path() / ("hint_policy_test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  EXPECT_FALSE(read_hint_policy(dir).penalty) << "no manifest: not stated";
  const auto with = [&](const std::string& text) {
    std::ofstream(dir / kPublishedManifest) << text;
    return read_hint_policy(dir).penalty;
  };
  EXPECT_EQ(with(R"({"schema": "x", "hint_penalty": 0.5})"), 0.5);
  EXPECT_EQ(with(R"({"hint_penalty": 0})"), 0.0);
  EXPECT_FALSE(with(R"({"schema": "x"})"));
  EXPECT_FALSE(with(R"({"hint_penalty": -1})"));
  EXPECT_FALSE(with(R"({"hint_penalty": "lots"})"));
  EXPECT_FALSE(with("not json"));
  fs::remove_all(dir);
}

TEST(HintPolicy, TheReadmeSaysItAtTheEndOfTheStudentsSection) {
  const std::string readme =
      "# Course\n\n## For students\n\nRun it.\n\n```\n## not a heading inside code\n```\n\n## Layout\n\nfiles\n";
  const std::string out = with_hint_policy(readme, HintPolicy{0.5});
  const std::size_t section = out.find("### Hints in this class");
  ASSERT_NE(section, std::string::npos) << out;
  EXPECT_LT(out.find("## not a heading inside code"), section);
  EXPECT_LT(section, out.find("## Layout"));
  EXPECT_NE(out.find("costs 0.5 points", section), std::string::npos);
  // Without a students section it goes at the end.
  const std::string bare = with_hint_policy("# Course\n\ntext", HintPolicy{});
  EXPECT_GT(bare.find("### Hints in this class"), bare.find("text"));
}
