#include "symptoms.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace grader {
namespace {

TEST(Symptoms, EachNameOnceEachRankOnce) {
  std::set<std::string> names;
  std::set<int> ranks;
  for (const auto& s : symptom_table()) {
    EXPECT_TRUE(names.insert(s.name).second) << s.name << " is listed twice";
    if (s.rank > 0) EXPECT_TRUE(ranks.insert(s.rank).second) << s.name << " shares its rank";
  }
  EXPECT_EQ(known_symptoms().size(), symptom_table().size());
}

TEST(Symptoms, PriorityPutsCausesBeforeWhatTheyCause) {
  const auto& p = symptom_priority();
  const auto at = [&](const std::string& s) { return std::find(p.begin(), p.end(), s) - p.begin(); };
  ASSERT_FALSE(p.empty());
  EXPECT_EQ(p.front(), "race");
  EXPECT_EQ(p.back(), "interference");
  EXPECT_LT(at("out_of_bounds"), at("canary"));
  EXPECT_LT(at("nondeterministic"), at("edge_mismatch"));
  EXPECT_LT(at("unwritten"), at("timed_mismatch"));
  EXPECT_LT(at("memory_space"), at("implausibly_fast"));
  EXPECT_LT(at("not_your_kernel"), at("not_the_named_kernel"));
  EXPECT_LT(at("early_reply"), at("implausibly_fast"));
  // Symptoms that explain nothing else are not ranked: a plain mismatch, a timeout.
  EXPECT_EQ(std::find(p.begin(), p.end(), "mismatch"), p.end());
  EXPECT_EQ(std::find(p.begin(), p.end(), "timeout"), p.end());
  const auto& known = known_symptoms();
  for (const auto& s : p) EXPECT_NE(std::find(known.begin(), known.end(), s), known.end()) << s;
}

}  // namespace
}  // namespace grader
