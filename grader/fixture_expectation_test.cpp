#include "fixture_expectation.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace grader {
namespace {

using nlohmann::json;

Manifest lab() {
  return parse_manifest(json::parse(R"({
    "format_version": 1, "id": "lab07", "title": "t",
    "steps": [
      { "id": 1, "title": "a", "checks": [ { "kind": "ptx", "kernel": "k", "must_contain": ["bar.sync"] },
                                         { "kind": "correct", "cases": ["1x1"] } ] },
      { "id": 2, "title": "b", "checks": [ { "kind": "speedup", "case": "1x1", "min": 2.5 } ] }
    ]})"),
                        "lab.json");
}

TEST(FixtureExpectation, ReadsEveryForm) {
  auto e = parse_expectation("// a fixture\n// expect: build fails\n__global__ void k() {}\n", "f.cu");
  EXPECT_EQ(e.kind, FixtureExpectation::build_fails);
  EXPECT_TRUE(e.is_static());
  e = parse_expectation("// expect: all pass\n", "f.cu");
  EXPECT_EQ(e.kind, FixtureExpectation::all_pass);
  EXPECT_FALSE(e.is_static());
  e = parse_expectation("// expect: step 2 fails: correct (canary)\r\n", "f.cu");
  EXPECT_EQ(e.kind, FixtureExpectation::step_fails);
  EXPECT_EQ(e.step, 2);
  EXPECT_EQ(e.check, "correct");
  EXPECT_EQ(e.symptom, "canary");
  EXPECT_FALSE(e.is_static());
  e = parse_expectation("// expect: step 1 fails: ptxas\n", "f.cu");
  EXPECT_EQ(e.symptom, "");
  EXPECT_TRUE(e.is_static());
}

TEST(FixtureExpectation, RejectsAMissingOrMalformedHeader) {
  EXPECT_THROW(parse_expectation("__global__ void k() {}\n", "f.cu"), ExpectationError);
  for (const char* bad : {"// expect: step one fails: ptx", "// expect: step 1 fails ptx", "// expect: builds fail",
                          "// expect: step 1 fails: correct (Canary)", "// expect: step 1 fails: correct canary"}) {
    try {
      parse_expectation(std::string(bad) + "\n", "tests/fixtures/lab07/x.cu");
      ADD_FAILURE() << bad << " was accepted";
    } catch (const ExpectationError& e) {
      EXPECT_NE(std::string(e.what()).find("tests/fixtures/lab07/x.cu: cannot read the expectation"), std::string::npos)
          << e.what();
    }
  }
}

TEST(FixtureExpectation, MustFitTheLab) {
  const Manifest m = lab();
  EXPECT_EQ(expectation_problem(parse_expectation("// expect: step 2 fails: speedup\n", "f"), m), "");
  EXPECT_EQ(expectation_problem(parse_expectation("// expect: build fails\n", "f"), m), "");
  EXPECT_NE(expectation_problem(parse_expectation("// expect: step 3 fails: speedup\n", "f"), m).find("steps are 1, 2"),
            std::string::npos);
  EXPECT_NE(
      expectation_problem(parse_expectation("// expect: step 2 fails: ptx\n", "f"), m).find("checks only speedup"),
      std::string::npos);
  EXPECT_NE(
      expectation_problem(parse_expectation("// expect: step 1 fails: correct (wobbly)\n", "f"), m).find("wobbly"),
      std::string::npos);
}

json report(std::vector<std::pair<int, std::vector<json>>> steps) {
  json r = {{"steps", json::array()}};
  for (auto& [id, checks] : steps) {
    bool fail = false;
    for (const auto& c : checks) fail = fail || c["status"] == "fail";
    r["steps"].push_back({{"id", id}, {"status", fail ? "fail" : "pass"}, {"checks", checks}});
  }
  return r;
}

json check(const std::string& kind, const std::string& status, const std::string& symptom = "") {
  return {{"kind", kind}, {"status", status}, {"symptom", symptom}};
}

TEST(FixtureExpectation, JudgesAReport) {
  const auto e = parse_expectation("// expect: step 2 fails: correct (canary)\n", "f");
  const json good = report({{1, {check("ptx", "pass")}}, {2, {check("correct", "fail", "canary")}}});
  EXPECT_EQ(verdict_mismatch(good, 1, e), "");
  EXPECT_NE(verdict_mismatch(good, 0, e), "");
  const json other_symptom = report({{1, {check("ptx", "pass")}}, {2, {check("correct", "fail", "mismatch")}}});
  EXPECT_NE(verdict_mismatch(other_symptom, 1, e).find("not with correct (canary)"), std::string::npos);
  const json earlier = report({{1, {check("ptx", "fail")}}});
  EXPECT_NE(verdict_mismatch(earlier, 1, e).find("expected step 2 to fail first"), std::string::npos);
  EXPECT_EQ(verdict_mismatch(report({}), 3, parse_expectation("// expect: build fails\n", "f")), "");
  EXPECT_EQ(verdict_mismatch(report({{1, {check("ptx", "pass")}}}), 0, FixtureExpectation{}), "");
}

TEST(FixtureExpectation, JudgesAStaticReport) {
  const auto gpu_only = parse_expectation("// expect: step 2 fails: correct (canary)\n", "f");
  // Without a GPU: nothing fails, the GPU checks were skipped.
  EXPECT_EQ(static_verdict_mismatch(report({{1, {check("ptx", "pass")}}}), 4, gpu_only), "");
  // A static failure before the expected step contradicts it.
  EXPECT_NE(static_verdict_mismatch(report({{1, {check("ptx", "fail")}}}), 1, gpu_only), "");
  EXPECT_NE(static_verdict_mismatch(report({}), 3, gpu_only).find("does not"), std::string::npos);
  const auto ptx = parse_expectation("// expect: step 1 fails: ptx\n", "f");
  EXPECT_EQ(static_verdict_mismatch(report({{1, {check("ptx", "fail")}}}), 1, ptx), "");
  EXPECT_NE(static_verdict_mismatch(report({{1, {check("ptx", "pass")}}}), 4, ptx), "");
  EXPECT_NE(static_verdict_mismatch(report({{1, {check("ptx", "fail")}}}), 1, FixtureExpectation{}), "");
}

}  // namespace
}  // namespace grader
