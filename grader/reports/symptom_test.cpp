#include "symptom.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <set>

namespace grader {
namespace {

TEST(Symptoms, EachNameOnceEachRankOnce) {
  std::set<std::string> names;
  std::set<int> ranks;
  for (Symptom s : kEverySymptom) {
    EXPECT_TRUE(names.insert(name_of(s)).second) << name_of(s) << " is listed twice";
    EXPECT_EQ(symptom_named(name_of(s)), s) << name_of(s);
    if (rank_of(s) > 0) EXPECT_TRUE(ranks.insert(rank_of(s)).second) << name_of(s) << " shares its rank";
  }
  EXPECT_EQ(symptom_named("rcae"), std::nullopt);
  // Every value of the enum is listed: they run from 0 to the last, sanitizer.
  EXPECT_EQ(std::size(kEverySymptom), static_cast<std::size_t>(Symptom::sanitizer) + 1);
}

TEST(Symptoms, PriorityPutsCausesBeforeWhatTheyCause) {
  const auto& p = symptoms_closest_to_the_cause_first();
  const auto at = [&](Symptom s) { return std::find(p.begin(), p.end(), s) - p.begin(); };
  ASSERT_FALSE(p.empty());
  EXPECT_EQ(p.front(), Symptom::race);
  EXPECT_EQ(p.back(), Symptom::interference);
  EXPECT_LT(at(Symptom::out_of_bounds), at(Symptom::canary));
  EXPECT_LT(at(Symptom::nondeterministic), at(Symptom::edge_mismatch));
  EXPECT_LT(at(Symptom::unwritten), at(Symptom::timed_mismatch));
  EXPECT_LT(at(Symptom::memory_space), at(Symptom::implausibly_fast));
  EXPECT_LT(at(Symptom::not_your_kernel), at(Symptom::not_the_named_kernel));
  EXPECT_LT(at(Symptom::early_reply), at(Symptom::implausibly_fast));
  // Symptoms that explain nothing else are not ranked: a plain mismatch, a timeout.
  EXPECT_EQ(std::find(p.begin(), p.end(), Symptom::mismatch), p.end());
  EXPECT_EQ(std::find(p.begin(), p.end(), Symptom::timeout), p.end());
}

TEST(Symptoms, TravelInJsonByNameAndNoneAsEmpty) {
  nlohmann::json j = symptom_json(Symptom::bank_conflicts);
  EXPECT_EQ(j, "bank_conflicts");
  EXPECT_EQ(symptom_from_json(j), Symptom::bank_conflicts);
  j = symptom_json(std::nullopt);
  EXPECT_EQ(j, "");
  EXPECT_EQ(symptom_from_json(j), std::nullopt);
  EXPECT_THROW(symptom_from_json("bank_conflict"), std::runtime_error);
}

}  // namespace
}  // namespace grader
