#include "fixture_expectation.hpp"

#include <gtest/gtest.h>

#include <algorithm>
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

json check(const std::string& kind, const std::string& status, const std::string& symptom = "",
           const std::string& summary = "", std::vector<std::string> details = {}) {
  return {{"kind", kind}, {"status", status}, {"symptom", symptom}, {"summary", summary}, {"details", details}};
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

TEST(FixtureExpectation, MessagesMustAppearInTheFailingCheck) {
  const auto e = parse_expectation(
      "// expect: step 1 fails: correct (cuda_error)\n// message: illegal memory access\n// message: (case 1x1)\n",
      "f");
  const auto with = [](const std::string& summary, std::vector<std::string> details = {}) {
    return report({{1, {check("ptx", "pass"), check("correct", "fail", "cuda_error", summary, details)}}});
  };
  EXPECT_EQ(verdict_mismatch(with("illegal memory access in your kernel (case 1x1): a thread ..."), 1, e), "");
  // Split between the summary and a detail is fine: both are what the student reads.
  EXPECT_EQ(verdict_mismatch(with("illegal memory access", {"first seen in (case 1x1)"}), 1, e), "");
  const std::string why = verdict_mismatch(with("illegal memory access (case 33x4097)"), 1, e);
  EXPECT_NE(why.find("does not say \"(case 1x1)\""), std::string::npos) << why;
  EXPECT_NE(why.find("case 33x4097"), std::string::npos) << why;  // shows what it did say
  // Case matters: a message is an exact substring.
  EXPECT_NE(verdict_mismatch(with("Illegal memory access (case 1x1)"), 1, e), "");
  // Another check of the step saying it does not count.
  const json elsewhere = report({{1,
                                  {check("ptx", "fail", "", "illegal memory access (case 1x1)"),
                                   check("correct", "fail", "cuda_error", "a crash")}}});
  EXPECT_NE(verdict_mismatch(elsewhere, 1, e), "");
  // Any one of two checks of the verdict may show them.
  const json two = report({{1,
                            {check("correct", "fail", "cuda_error", "nothing useful"),
                             check("correct", "fail", "cuda_error", "illegal memory access (case 1x1)")}}});
  EXPECT_EQ(verdict_mismatch(two, 1, e), "");
}

TEST(FixtureExpectation, BuildMessagesMustAppearInTheDiagnostics) {
  const auto e = parse_expectation("// expect: build fails\n// message: launch_dot(float*\n", "f");
  json r = report({});
  r["build"] = {
      {"student", {{"ok", false}, {"diagnostics", "launch_dot(float*, float const*) is called but never defined"}}}};
  EXPECT_EQ(verdict_mismatch(r, 3, e), "");
  r["build"]["student"]["diagnostics"] = "kernel.cu(3): error: expected a \";\"";
  EXPECT_NE(verdict_mismatch(r, 3, e).find("do not contain \"launch_dot(float*\""), std::string::npos);
  EXPECT_NE(verdict_mismatch(report({}), 3, e), "");  // no diagnostics at all
}

TEST(FixtureExpectation, StaticGradesCheckMessagesOnlyForStaticVerdicts) {
  const auto ptx = parse_expectation("// expect: step 1 fails: ptx\n// message: no bar.sync\n", "f");
  EXPECT_EQ(static_verdict_mismatch(report({{1, {check("ptx", "fail", "", "k PTX: no bar.sync")}}}), 1, ptx), "");
  EXPECT_NE(static_verdict_mismatch(report({{1, {check("ptx", "fail", "", "k PTX: no ld.shared")}}}), 1, ptx), "");
  // A GPU verdict's messages cannot show without a GPU: only the static checks are judged.
  const auto gpu = parse_expectation("// expect: step 1 fails: sanitizer (race)\n// message: racecheck\n", "f");
  EXPECT_EQ(static_verdict_mismatch(report({{1, {check("ptx", "pass"), check("sanitizer", "skipped")}}}), 4, gpu), "");
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

TEST(FixtureExpectation, MismatchFitsItsRefinementsButNotTheOtherWayRound) {
  const auto report = [](const std::string& symptom) {
    return json{{"steps", json::array({{{"id", 1},
                                        {"status", "fail"},
                                        {"checks", json::array({{{"kind", "correct"},
                                                                 {"status", "fail"},
                                                                 {"symptom", symptom},
                                                                 {"summary", "s"},
                                                                 {"details", json::array()}}})}}})}};
  };
  const auto mismatch = parse_expectation("// expect: step 1 fails: correct (mismatch)\n", "f.cu");
  EXPECT_EQ(verdict_mismatch(report("edge_mismatch"), 1, mismatch), "");
  EXPECT_EQ(verdict_mismatch(report("nondeterministic"), 1, mismatch), "");
  EXPECT_NE(verdict_mismatch(report("canary"), 1, mismatch), "");
  const auto edge = parse_expectation("// expect: step 1 fails: correct (edge_mismatch)\n", "f.cu");
  EXPECT_NE(verdict_mismatch(report("mismatch"), 1, edge), "");
}

}  // namespace
}  // namespace grader
