#include "fixture_expectation.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

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
  EXPECT_EQ(e.check, CheckKind::correct);
  EXPECT_EQ(e.symptom, Symptom::canary);
  EXPECT_EQ(e.verdict(), "correct (canary)");
  EXPECT_FALSE(e.is_static());
  e = parse_expectation("// expect: step 1 fails: ptxas\n", "f.cu");
  EXPECT_EQ(e.symptom, std::nullopt);
  EXPECT_EQ(e.verdict(), "ptxas");
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
}

TEST(FixtureExpectation, RefusesAKindOrASymptomNothingKnows) {
  for (const auto& [line, named] : std::vector<std::pair<std::string, std::string>>{
           {"// expect: step 1 fails: correct (wobbly)\n",
            "the symptom wobbly, which no check reports (known: mismatch"},
           {"// expect: step 1 fails: speed\n", "the check kind speed, which no lab has (known: correct, speedup"}}) {
    try {
      parse_expectation(line, "tests/fixtures/lab07/x.cu");
      ADD_FAILURE() << line << " was accepted";
    } catch (const ExpectationError& e) {
      EXPECT_NE(std::string(e.what()).find(named), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).rfind("tests/fixtures/lab07/x.cu: ", 0), 0u) << e.what();
    }
  }
}

TEST(FixtureExpectation, ReadsEveryMessageLine) {
  const auto e = parse_expectation(
      "// fault: a race\n// expect: step 1 fails: sanitizer (race)\n// message: racecheck: a race\r\n"
      "int x;  // message: not at the start of a line, so code\n// message: in matmul_static  \n",
      "f.cu");
  EXPECT_EQ(e.messages, (std::vector<std::string>{"racecheck: a race", "in matmul_static"}));
  EXPECT_TRUE(parse_expectation("// expect: build fails\n", "f.cu").messages.empty());
}

TEST(FixtureExpectation, RejectsAnEmptyMessageOrOneNothingCanShow) {
  for (const char* bad : {"// expect: build fails\n// message: \n", "// expect: all pass\n// message: ok\n"}) {
    try {
      parse_expectation(bad, "tests/faults/lab07/x.cu");
      ADD_FAILURE() << bad << " was accepted";
    } catch (const ExpectationError& e) {
      EXPECT_NE(std::string(e.what()).find("tests/faults/lab07/x.cu: "), std::string::npos) << e.what();
    }
  }
}

TEST(FixtureExpectation, KnowsTheNewSymptoms) {
  const Manifest m = lab();
  for (const char* s : {"modified_input", "edge_mismatch", "nondeterministic"})
    EXPECT_EQ(
        expectation_problem(parse_expectation(std::string("// expect: step 1 fails: correct (") + s + ")\n", "f"), m),
        "")
        << s;
  for (const char* s : {"bank_conflicts", "uncoalesced", "race", "out_of_bounds", "uninitialized", "divergent_barrier",
                        "leak", "api_error"})
    EXPECT_TRUE(symptom_named(s)) << s;
}

}  // namespace
}  // namespace grader
