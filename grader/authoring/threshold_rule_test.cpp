#include "threshold_rule.hpp"

#include <gtest/gtest.h>

using namespace grader;
using Status = CalibratedCheck::Status;

namespace {
ThresholdEvidence fraction(double design_min, double design_ref, double ref) {
  ThresholdEvidence e;
  e.kind = CheckKind::fraction_of_peak;
  e.design_min = design_min;
  e.design_reference = design_ref;
  e.reference = ref;
  e.honest["solution"] = ref;
  return e;
}
}  // namespace

TEST(ThresholdRule, TheDesignCardKeepsLabJsonsValue) {
  ThresholdEvidence e = fraction(0.55, 0.80, 0.80);
  e.design_card = true;
  e.honest["alt_rows"] = 0.70;
  const CalibratedCheck c = derive_threshold(e);
  EXPECT_EQ(c.status, Status::design);
  EXPECT_DOUBLE_EQ(c.min, 0.55);
}

TEST(ThresholdRule, AnotherCardScalesByTheReferences) {
  // The H200's reference reaches 0.70 of its copy where the H100's reached 0.80.
  const CalibratedCheck c = derive_threshold(fraction(0.56, 0.80, 0.70));
  EXPECT_EQ(c.status, Status::scaled) << c.why;
  EXPECT_NEAR(c.min, 0.49, 1e-9) << "0.56 × 0.70 / 0.80, three digits";
  EXPECT_NE(c.why.find("70.0 %"), std::string::npos) << c.why;
}

TEST(ThresholdRule, AnHonestProgramBelowTheScaledValueMovesItDown) {
  ThresholdEvidence e = fraction(0.55, 0.80, 0.80);
  e.honest["alt_one_d"] = 0.537;  // an honest stencil on the H200
  const CalibratedCheck c = derive_threshold(e);
  EXPECT_EQ(c.status, Status::moved);
  EXPECT_LE(c.min * kHonestRoom, 0.537);
  EXPECT_GT(c.min, 0.48);
  EXPECT_NE(c.why.find("alt_one_d"), std::string::npos) << c.why;
}

TEST(ThresholdRule, AWrongProgramAboveTheScaledValueMovesItUp) {
  ThresholdEvidence e = fraction(0.55, 0.80, 0.80);
  e.failing["uncoalesced"] = 0.54;
  const CalibratedCheck c = derive_threshold(e);
  EXPECT_EQ(c.status, Status::moved);
  EXPECT_GE(c.min, 0.54 * kHonestRoom - 1e-12);
  EXPECT_NE(c.why.find("uncoalesced"), std::string::npos) << c.why;
}

TEST(ThresholdRule, NoValueBetweenHonestAndWrongIsAConflictNeverALoosening) {
  ThresholdEvidence e = fraction(0.55, 0.80, 0.80);
  e.honest["alt_slow"] = 0.50;
  e.failing["naive"] = 0.48;
  const CalibratedCheck c = derive_threshold(e);
  EXPECT_EQ(c.status, Status::conflict);
  EXPECT_DOUBLE_EQ(c.min, 0.55) << "the scaled value stays";
  EXPECT_NE(c.why.find("alt_slow"), std::string::npos);
  EXPECT_NE(c.why.find("naive"), std::string::npos);
}

TEST(ThresholdRule, OnTheDesignCardABrokenRuleIsAConflict) {
  ThresholdEvidence e = fraction(0.55, 0.80, 0.80);
  e.design_card = true;
  e.honest["alt_one_d"] = 0.52;
  const CalibratedCheck c = derive_threshold(e);
  EXPECT_EQ(c.status, Status::conflict);
  EXPECT_DOUBLE_EQ(c.min, 0.55);
}

TEST(ThresholdRule, ASpeedupMustStayAboveTheBaselineItself) {
  ThresholdEvidence e;
  e.kind = CheckKind::speedup;
  e.design_min = 1.5;
  e.design_reference = 10;
  e.reference = 1.05;  // a card where the technique barely helps
  e.honest["solution"] = 1.05;
  const CalibratedCheck c = derive_threshold(e);
  EXPECT_EQ(c.status, Status::conflict) << "1.05 / 1.03 is below 1 × 1.03: nothing tells the baseline apart";
}

TEST(ThresholdRule, WithoutTheDesignCardsReferenceTheDesignValueIsTheTarget) {
  ThresholdEvidence e = fraction(0.55, 0.80, 0.75);
  e.design_reference.reset();
  const CalibratedCheck c = derive_threshold(e);
  EXPECT_EQ(c.status, Status::scaled);
  EXPECT_DOUBLE_EQ(c.min, 0.55);
  EXPECT_NE(c.why.find("calibrate that card first"), std::string::npos);
}

TEST(ThresholdRule, AFractionNeverAsksForMoreThanAll) {
  const CalibratedCheck c = derive_threshold(fraction(0.9, 0.5, 0.99));
  EXPECT_LE(c.min, 1.0);
}
