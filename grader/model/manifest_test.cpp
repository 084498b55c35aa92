#include "manifest.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "protocol/referee_protocol.hpp"

namespace grader {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

const char* kSource = "labs/x/lab.json";

// Every field and every check kind, so one parse exercises the whole format.
json full_manifest() {
  return json::parse(R"({
    "$schema": "ignored",
    "format_version": 1,
    "id": "lab07",
    "title": "Bank conflicts: a shared-memory transpose",
    "student_file": "transpose.cu",
    "timeout_s": 45.5,
    "link": ["cublas", "cublasLt"],
    "kernels": { "candidate": "transpose_kernel", "baseline": "transpose_naive" },
    "steps": [
      { "id": 1, "title": "Transpose through a shared tile", "points": 3, "_note": "comment",
        "checks": [
          { "kind": "ptx", "kernel": "transpose_kernel", "must_contain": ["ld.shared", "bar.sync"],
            "must_not_contain": ["ld.local"] },
          { "kind": "correct", "cases": ["1000x777", "33x4097"] },
          { "kind": "ptxas", "kernel": "k", "max_stack_frame": 0, "max_spill_bytes": 0,
            "max_registers": 128 }
        ],
        "hints": ["concept first", "then location", "then code"],
        "symptom_hints": { "mismatch_at_edges": "Guard both loads and stores." }
      },
      { "id": 2, "title": "Fast", "checks": [
          { "kind": "speedup", "case": "8192x8192", "min": 2.5, "over": "baseline" },
          { "kind": "fraction_of_peak", "case": "8192x8192", "min": 0.75 },
          { "kind": "correct", "cases": ["33x4097", "8192x8192", "1x1"] }
        ]
      }
    ]
  })");
}

TEST(Manifest, ParsesEveryField) {
  Manifest m = parse_manifest(full_manifest(), kSource);
  EXPECT_EQ(m.format_version, 1);
  EXPECT_EQ(m.id, "lab07");
  EXPECT_EQ(m.title, "Bank conflicts: a shared-memory transpose");
  EXPECT_EQ(m.student_file, "transpose.cu");
  EXPECT_DOUBLE_EQ(m.timeout_s, 45.5);
  EXPECT_EQ(m.link, (std::vector<std::string>{"cublas", "cublasLt"}));
  ASSERT_EQ(m.steps.size(), 2u);

  const Step& s1 = m.steps[0];
  EXPECT_EQ(s1.id, 1);
  EXPECT_EQ(s1.title, "Transpose through a shared tile");
  EXPECT_EQ(s1.points, 3);
  EXPECT_EQ(s1.hints, (std::vector<std::string>{"concept first", "then location", "then code"}));
  EXPECT_EQ(s1.symptom_hints,
            (std::map<std::string, std::string>{{"mismatch_at_edges", "Guard both loads and stores."}}));
  ASSERT_EQ(s1.checks.size(), 3u);

  const Check& ptx = s1.checks[0];
  EXPECT_EQ(name_of(ptx.kind), "ptx");
  EXPECT_EQ(ptx.kernel, "transpose_kernel");
  EXPECT_EQ(ptx.must_contain, (std::vector<std::string>{"ld.shared", "bar.sync"}));
  EXPECT_EQ(ptx.must_not_contain, (std::vector<std::string>{"ld.local"}));
  EXPECT_TRUE(ptx.is_static());

  const Check& correct = s1.checks[1];
  EXPECT_EQ(name_of(correct.kind), "correct");
  EXPECT_EQ(correct.cases, (std::vector<std::string>{"1000x777", "33x4097"}));
  EXPECT_FALSE(correct.is_static());

  const Check& ptxas = s1.checks[2];
  EXPECT_EQ(name_of(ptxas.kind), "ptxas");
  EXPECT_EQ(ptxas.kernel, "k");
  EXPECT_EQ(ptxas.max_stack_frame, 0);
  EXPECT_EQ(ptxas.max_spill_bytes, 0);
  EXPECT_EQ(ptxas.max_registers, 128);
  EXPECT_TRUE(ptxas.is_static());

  const Step& s2 = m.steps[1];
  EXPECT_EQ(s2.id, 2);
  EXPECT_EQ(s2.points, 1);
  EXPECT_TRUE(s2.hints.empty());
  EXPECT_TRUE(s2.symptom_hints.empty());
  const Check& speedup = s2.checks[0];
  EXPECT_EQ(name_of(speedup.kind), "speedup");
  EXPECT_EQ(speedup.case_name, "8192x8192");
  EXPECT_DOUBLE_EQ(speedup.min, 2.5);
  EXPECT_EQ(speedup.over, "baseline");
  EXPECT_FALSE(speedup.is_static());
  const Check& peak = s2.checks[1];
  EXPECT_EQ(name_of(peak.kind), "fraction_of_peak");
  EXPECT_EQ(peak.case_name, "8192x8192");
  EXPECT_DOUBLE_EQ(peak.min, 0.75);
}

TEST(Manifest, NcuEvidenceAndPerElementMeasures) {
  json j = full_manifest();
  j["steps"][1]["checks"].push_back(json::parse(R"({ "kind": "ncu", "kernel": "transpose_kernel", "case": "1024x1024",
      "metric": "shared_loads_per_block", "min": 1 })"));
  // Per element of a case: the correctness run counts its outputs, or the referee counts
  // those of a case no correct check runs (a timed size: referee run --count).
  j["steps"][1]["checks"].push_back(json::parse(R"({ "kind": "ncu", "kernel": "transpose_kernel", "case": "8192x8192",
      "metric": "stored_bytes_per_element", "min": 3.9 })"));
  const Manifest m = parse_manifest(j, kSource);
  const auto& checks = m.steps[1].checks;
  EXPECT_EQ(checks[checks.size() - 2].ncu_min, 1);
  EXPECT_DOUBLE_EQ(checks.back().ncu_min, 3.9);
}

TEST(Manifest, AStepTimesOneKindAtOneCaseWithOneThreshold) {
  json j = full_manifest();
  // A fallback asking what the step's own speedup check asks is the same threshold: calibrated once.
  j["steps"][1]["checks"].push_back(json::parse(R"({ "kind": "ncu", "kernel": "transpose_kernel", "case": "33x4097",
      "metric": "shared_bank_conflicts_per_request", "max": 0.05,
      "fallback": { "kind": "speedup", "case": "8192x8192", "min": 2.5 } })"));
  EXPECT_NO_THROW(parse_manifest(j, kSource));
  j["steps"][1]["checks"].back()["fallback"]["min"] = 5;
  try {
    parse_manifest(j, kSource);
    FAIL() << "accepted two speedup thresholds at one case of one step";
  } catch (const ManifestError& e) {
    EXPECT_NE(
        std::string(e.what()).find("two speedup checks at case \"8192x8192\" ask different thresholds (2.5 and 5"),
        std::string::npos)
        << e.what();
  }
}

TEST(Manifest, NcuAndSanitizerChecks) {
  json j = full_manifest();
  j["symptom_hints"] = {{"race", "Add a barrier."}};
  j["steps"][1]["checks"].push_back(json::parse(R"({ "kind": "ncu", "kernel": "transpose_kernel", "case": "1024x1024",
      "metric": "shared_bank_conflicts_per_request", "max": 0,
      "fallback": { "kind": "speedup", "case": "4096x4096", "min": 5 } })"));
  j["steps"][1]["checks"].push_back(json::parse(R"({ "kind": "sanitizer", "cases": ["1x1"] })"));
  j["steps"][1]["checks"].push_back(
      json::parse(R"({ "kind": "sanitizer", "cases": ["1x1"], "tools": ["racecheck"] })"));
  const Manifest m = parse_manifest(j, kSource);
  EXPECT_EQ(m.symptom_hints.at("race"), "Add a barrier.");
  const auto& checks = m.steps[1].checks;
  const Check& ncu = checks[3];
  EXPECT_EQ(ncu.metric, "shared_bank_conflicts_per_request");
  EXPECT_EQ(ncu.max, 0);
  ASSERT_EQ(ncu.fallback.size(), 1u);
  EXPECT_EQ(name_of(ncu.fallback[0].kind), "speedup");
  EXPECT_EQ(ncu.fallback[0].min, 5);
  EXPECT_FALSE(ncu.is_static());
  EXPECT_EQ(checks[4].tools, (std::vector<std::string>{"memcheck", "racecheck", "synccheck", "initcheck"}));
  EXPECT_EQ(checks[5].tools, (std::vector<std::string>{"racecheck"}));
  // The fallback's case is a case the lab must have, like any other.
  const auto cases = m.all_cases();
  EXPECT_NE(std::find(cases.begin(), cases.end(), "4096x4096"), cases.end());
}

TEST(Manifest, OptionalFieldsTakeDefaults) {
  Manifest m = parse_manifest(json::parse(R"({
    "format_version": 1, "id": "lab00", "title": "t",
    "steps": [ { "id": 1, "title": "s", "checks": [
      { "kind": "speedup", "case": "big", "min": 1.5 },
      { "kind": "ptxas", "kernel": "k", "max_registers": 32 } ] } ]
  })"),
                              kSource);
  EXPECT_EQ(m.student_file, "kernel.cu");
  EXPECT_DOUBLE_EQ(m.timeout_s, 60);
  EXPECT_TRUE(m.link.empty());
  EXPECT_EQ(m.steps[0].points, 1);
  EXPECT_EQ(m.steps[0].checks[0].over, "baseline");
  const Check& ptxas = m.steps[0].checks[1];
  EXPECT_FALSE(ptxas.max_stack_frame.has_value());
  EXPECT_FALSE(ptxas.max_spill_bytes.has_value());
  EXPECT_EQ(ptxas.max_registers, 32);
}

// A step whose technique needs a newer GPU says which, as nvcc's arch names
// write a compute capability; a step without the key runs on any GPU.
TEST(Manifest, AStepMayNeedAComputeCapability) {
  json j = full_manifest();
  j["steps"][1]["min_compute_capability"] = 90;
  const Manifest m = parse_manifest(j, kSource);
  EXPECT_FALSE(m.steps[0].min_compute_capability.has_value());
  EXPECT_EQ(m.steps[1].min_compute_capability, 90);
  j["steps"][1]["min_compute_capability"] = 100;  // 10.0: a major version of two digits
  EXPECT_EQ(parse_manifest(j, kSource).steps[1].min_compute_capability, 100);
}

TEST(Manifest, AllCasesAreUniqueInOrderOfFirstUse) {
  Manifest m = parse_manifest(full_manifest(), kSource);
  EXPECT_EQ(m.all_cases(), (std::vector<std::string>{"1000x777", "33x4097", "8192x8192", "1x1"}));
}

// A program that hung in a case hangs the runs of the steps that name it; a
// case only a later step names leaves the earlier steps' runs to go on.
TEST(Manifest, TheCasesOfTheStepsThatNameACase) {
  Manifest m = parse_manifest(full_manifest(), kSource);
  EXPECT_EQ(m.cases_of_steps_naming("8192x8192"), (std::vector<std::string>{"8192x8192", "33x4097", "1x1"}));
  EXPECT_EQ(m.cases_of_steps_naming("1000x777"), (std::vector<std::string>{"1000x777", "33x4097"}));
  // 33x4097 is in both steps: both steps' cases.
  EXPECT_EQ(m.cases_of_steps_naming("33x4097"), (std::vector<std::string>{"1000x777", "33x4097", "8192x8192", "1x1"}));
  EXPECT_TRUE(m.cases_of_steps_naming("no such case").empty());
}

TEST(Manifest, FindStep) {
  Manifest m = parse_manifest(full_manifest(), kSource);
  ASSERT_NE(m.find_step(2), nullptr);
  EXPECT_EQ(m.find_step(2)->title, "Fast");
  EXPECT_EQ(m.find_step(0), nullptr);
  EXPECT_EQ(m.find_step(3), nullptr);
}

// One malformed manifest: a change to the valid one, and the pieces its error must name.
struct BadCase {
  std::string name;
  std::function<void(json&)> change;
  std::vector<std::string> message_has;
};

void PrintTo(const BadCase& c, std::ostream* os) { *os << c.name; }

json& check(json& m, int step, int index) { return m["steps"][step]["checks"][index]; }

const std::vector<BadCase> kBadCases = {
    {"ApiWithoutCase",
     [](json& m) {
       check(m, 0, 0) = {{"kind", "api"}, {"facts", {"managed"}}};
     },
     {"steps[0].checks[0]", "case: required key is missing"}},
    {"ApiEmptyFacts",
     [](json& m) {
       check(m, 0, 0) = {{"kind", "api"}, {"case", "c"}, {"facts", json::array()}};
     },
     {"steps[0].checks[0].facts", "non-empty array of fact names"}},
    {"NcuUnknownMeasure",
     [](json& m) {
       check(m, 0, 0) = {
           {"kind", "ncu"}, {"kernel", "k"}, {"case", "c"}, {"metric", "shared_bank_conflict_per_request"}, {"max", 0}};
     },
     {"steps[0].checks[0].metric: unknown measure", "did you mean \"shared_bank_conflicts_per_request\"?"}},
    {"NcuNegativeMax",
     [](json& m) {
       check(m, 0, 0) = {
           {"kind", "ncu"}, {"kernel", "k"}, {"case", "c"}, {"metric", "local_memory_bytes"}, {"max", -1}};
     },
     {"steps[0].checks[0].max: expected a number >= 0, got -1"}},
    {"NcuWithoutMax",
     [](json& m) {
       check(m, 0, 0) = {{"kind", "ncu"}, {"kernel", "k"}, {"case", "c"}, {"metric", "local_memory_bytes"}};
     },
     {"steps[0].checks[0].max: required key is missing"}},
    {"NcuEvidenceTakesMin",
     [](json& m) {
       check(m, 0, 0) = {
           {"kind", "ncu"}, {"kernel", "k"}, {"case", "c"}, {"metric", "shared_loads_per_block"}, {"max", 1}};
     },
     {"steps[0].checks[0].min: required key is missing"}},
    {"NcuCostRefusesMin",
     [](json& m) {
       check(m, 0, 0) = {{"kind", "ncu"}, {"kernel", "k"}, {"case", "c"}, {"metric", "local_memory_bytes"},
                         {"max", 0},      {"min", 1}};
     },
     {"steps[0].checks[0].min: measure \"local_memory_bytes\" takes \"max\", not \"min\""}},
    {"NcuFallbackIsNcu",
     [](json& m) {
       const json n = {{"kind", "ncu"}, {"kernel", "k"}, {"case", "c"}, {"metric", "local_memory_bytes"}, {"max", 0}};
       check(m, 0, 0) = n;
       check(m, 0, 0)["fallback"] = n;
     },
     {"steps[0].checks[0].fallback.kind: a fallback stands in for ncu"}},
    {"NcuFallbackBroken",
     [](json& m) {
       check(m, 0, 0) = {{"kind", "ncu"}, {"kernel", "k"},
                         {"case", "c"},   {"metric", "local_memory_bytes"},
                         {"max", 0},      {"fallback", {{"kind", "speedup"}, {"case", "c"}}}};
     },
     {"steps[0].checks[0].fallback.min: required key is missing"}},
    {"SanitizerUnknownTool",
     [](json& m) {
       check(m, 0, 0) = {{"kind", "sanitizer"}, {"cases", {"c"}}, {"tools", {"memcheck", "leakcheck"}}};
     },
     {"steps[0].checks[0].tools[1]: unknown tool \"leakcheck\"; known: memcheck, racecheck, synccheck, initcheck"}},
    {"SanitizerToolTwice",
     [](json& m) {
       check(m, 0, 0) = {{"kind", "sanitizer"}, {"cases", {"c"}}, {"tools", {"racecheck", "racecheck"}}};
     },
     {"steps[0].checks[0].tools[1]: tool \"racecheck\" is listed twice"}},
    {"SanitizerWithoutCases",
     [](json& m) {
       check(m, 0, 0) = {{"kind", "sanitizer"}};
     },
     {"steps[0].checks[0].cases: required key is missing"}},
    {"TopSymptomHintsNotStrings",
     [](json& m) {
       m["symptom_hints"] = {{"race", 1}};
     },
     {"symptom_hints.race: expected a non-empty string, got 1"}},
    {"TopLevelNotObject",
     [](json& m) { m = json::array(); },
     {"labs/x/lab.json: ", "expected a JSON object at the top level, got an array"}},
    {"MissingFormatVersion",
     [](json& m) { m.erase("format_version"); },
     {"format_version: required key is missing", "reads format_version 1"}},
    {"FormatVersionTypo",
     [](json& m) {
       m["format-version"] = m["format_version"];
       m.erase("format_version");
     },
     {"unknown key \"format-version\" in the manifest (did you mean \"format_version\"?)"}},
    {"FormatVersionNotInteger",
     [](json& m) { m["format_version"] = "1"; },
     {"format_version: expected an integer", "got \"1\""}},
    {"UnsupportedFormatVersion",
     [](json& m) { m["format_version"] = 2; },
     {"format_version: unsupported format_version 2", "this grader reads format_version 1"}},
    {"MissingId", [](json& m) { m.erase("id"); }, {"id: required key is missing"}},
    {"EmptyTitle", [](json& m) { m["title"] = ""; }, {"title: expected a non-empty string, got \"\""}},
    {"MissingSteps",
     [](json& m) { m.erase("steps"); },
     {"steps: required key is missing (expected a non-empty array of steps)"}},
    {"StepsNotArray",
     [](json& m) { m["steps"] = json::object(); },
     {"steps: expected a non-empty array of steps, got an object"}},
    {"EmptySteps", [](json& m) { m["steps"] = json::array(); }, {"steps: expected at least one step"}},
    {"TimeoutZero",
     [](json& m) { m["timeout_s"] = 0; },
     {"timeout_s: expected a number of seconds in (0, 3600], got 0"}},
    {"TimeoutTooLong", [](json& m) { m["timeout_s"] = 3601; }, {"timeout_s:", "(0, 3600]", "got 3601"}},
    {"TimeoutString", [](json& m) { m["timeout_s"] = "60"; }, {"timeout_s:", "got \"60\""}},
    {"StudentFileIsPath",
     [](json& m) { m["student_file"] = "../other/kernel.cu"; },
     {"student_file: expected a file name inside the lab folder"}},
    {"LinkWithFlag",
     [](json& m) {
       m["link"] = {"cublas", "-lcurand"};
     },
     {"link[1]: expected a library name", "\"-lcurand\""}},
    {"LinkNotStrings", [](json& m) { m["link"] = {1}; }, {"link[0]: expected a non-empty string, got 1"}},
    {"KernelsNotStrings",
     [](json& m) {
       m["kernels"] = {{"candidate", 3}};
     },
     {"kernels.candidate: expected a non-empty string, got 3"}},
    {"UnknownTopLevelKeyTypo",
     [](json& m) { m["titel"] = "x"; },
     {"unknown key \"titel\" in the manifest (did you mean \"title\"?)"}},
    {"UnknownTopLevelKeyFar",
     [](json& m) { m["colour_scheme"] = "x"; },
     {"unknown key \"colour_scheme\"", "known keys: format_version, id, title"}},
    {"StepNotObject",
     [](json& m) { m["steps"][1] = "step two"; },
     {"steps[1]: expected a step object, got \"step two\""}},
    {"StepIdsOutOfOrder", [](json& m) { m["steps"][1]["id"] = 3; }, {"steps[1].id: expected 2", "got 3"}},
    {"DuplicateStepIds",
     [](json& m) { m["steps"][1]["id"] = 1; },
     {"steps[1].id: duplicate step id 1 (steps[0] already uses it)"}},
    {"StepIdHuge",
     [](json& m) { m["steps"][0]["id"] = std::numeric_limits<std::uint64_t>::max(); },
     {"steps[0].id: expected an integer >= 1"}},
    {"StepIdZero", [](json& m) { m["steps"][0]["id"] = 0; }, {"steps[0].id: expected an integer >= 1, got 0"}},
    {"StepMissingTitle", [](json& m) { m["steps"][1].erase("title"); }, {"steps[1].title: required key is missing"}},
    {"StepMissingChecks", [](json& m) { m["steps"][0].erase("checks"); }, {"steps[0].checks: required key is missing"}},
    {"StepEmptyChecks",
     [](json& m) { m["steps"][0]["checks"] = json::array(); },
     {"steps[0].checks: expected at least one check"}},
    {"NegativePoints",
     [](json& m) { m["steps"][0]["points"] = -1; },
     {"steps[0].points: expected an integer >= 0, got -1"}},
    {"UnknownStepKey",
     [](json& m) { m["steps"][0]["hint"] = json::array(); },
     {"steps[0]: unknown key \"hint\" in a step (did you mean \"hints\"?)"}},
    {"HintNotString",
     [](json& m) { m["steps"][0]["hints"][1] = json::object(); },
     {"steps[0].hints[1]: expected a non-empty string, got an object"}},
    {"SymptomHintNotString",
     [](json& m) { m["steps"][0]["symptom_hints"]["mismatch_at_edges"] = 5; },
     {"steps[0].symptom_hints.mismatch_at_edges: expected a non-empty string, got 5"}},
    {"CheckNotObject",
     [](json& m) { check(m, 0, 1) = json::array(); },
     {"steps[0].checks[1]: expected a check object, got an array"}},
    {"CheckMissingKind",
     [](json& m) { check(m, 0, 1).erase("kind"); },
     {"steps[0].checks[1].kind: required key is missing", "correct, speedup, fraction_of_peak, ptxas, ptx"}},
    {"CheckKindTypo",
     [](json& m) {
       auto& c = check(m, 0, 1);
       c["knd"] = c["kind"];
       c.erase("kind");
     },
     {"steps[0].checks[1]: unknown key \"knd\" in a check (did you mean \"kind\"?)"}},
    {"UnknownKindNear",
     [](json& m) { check(m, 0, 0)["kind"] = "ptxx"; },
     {"steps[0].checks[0].kind: unknown check kind \"ptxx\"",
      "known kinds: correct, speedup, fraction_of_peak, ptxas, ptx"}},
    {"UnknownKindFar",
     [](json& m) { check(m, 0, 0)["kind"] = "nsight"; },
     {"steps[0].checks[0].kind: unknown check kind \"nsight\"; known kinds: correct, speedup"}},
    {"KeyTypoInCheck",
     [](json& m) {
       auto& c = check(m, 0, 0);
       c["must_contian"] = c["must_contain"];
       c.erase("must_contain");
     },
     {"steps[0].checks[0]: unknown key \"must_contian\" in a \"ptx\" check (did you mean \"must_contain\"?)"}},
    {"KeyOfAnotherKind",
     [](json& m) { check(m, 0, 0)["min"] = 2; },
     {"steps[0].checks[0]: unknown key \"min\" in a \"ptx\" check",
      "known keys: kind, kernel, must_contain, must_not_contain"}},
    {"PtxNoLists",
     [](json& m) {
       auto& c = check(m, 0, 0);
       c.erase("must_contain");
       c["must_not_contain"] = json::array();
     },
     {"steps[0].checks[0]: a \"ptx\" check needs a non-empty \"must_contain\" or \"must_not_contain\""}},
    {"PtxMissingKernel",
     [](json& m) { check(m, 0, 0).erase("kernel"); },
     {"steps[0].checks[0].kernel: required key is missing"}},
    {"PtxListNotArray",
     [](json& m) { check(m, 0, 0)["must_contain"] = "ld.shared"; },
     {"steps[0].checks[0].must_contain: expected an array of strings, got \"ld.shared\""}},
    {"PtxasNoLimits",
     [](json& m) {
       auto& c = check(m, 0, 2);
       c.erase("max_stack_frame");
       c.erase("max_spill_bytes");
       c.erase("max_registers");
     },
     {"steps[0].checks[2]: a \"ptxas\" check needs at least one of"}},
    {"PtxasNegative",
     [](json& m) { check(m, 0, 2)["max_spill_bytes"] = -4; },
     {"steps[0].checks[2].max_spill_bytes: expected an integer >= 0, got -4"}},
    {"PtxasFraction",
     [](json& m) { check(m, 0, 2)["max_registers"] = 64.5; },
     {"steps[0].checks[2].max_registers: expected an integer >= 0, got 64.5"}},
    {"CorrectMissingCases",
     [](json& m) { check(m, 0, 1).erase("cases"); },
     {"steps[0].checks[1].cases: required key is missing (expected a non-empty array of case names)"}},
    {"CorrectEmptyCases",
     [](json& m) { check(m, 0, 1)["cases"] = json::array(); },
     {"steps[0].checks[1].cases: expected a non-empty array of case names, got []"}},
    {"CorrectDuplicateCase",
     [](json& m) {
       check(m, 0, 1)["cases"] = {"a", "b", "a"};
     },
     {"steps[0].checks[1].cases[2]: case \"a\" is listed twice"}},
    {"SpeedupMissingCase",
     [](json& m) { check(m, 1, 0).erase("case"); },
     {"steps[1].checks[0].case: required key is missing"}},
    {"SpeedupMissingMin",
     [](json& m) { check(m, 1, 0).erase("min"); },
     {"steps[1].checks[0].min: required key is missing (expected a number > 0)"}},
    {"SpeedupMinZero",
     [](json& m) { check(m, 1, 0)["min"] = 0; },
     {"steps[1].checks[0].min: expected a number > 0, got 0"}},
    {"SpeedupOverUnknown",
     [](json& m) { check(m, 1, 0)["over"] = "cublas"; },
     {"steps[1].checks[0].over: expected \"baseline\"", "got \"cublas\""}},
    {"FractionAsPercent",
     [](json& m) { check(m, 1, 1)["min"] = 75; },
     {"steps[1].checks[1].min: expected a number in (0, 1]", "got 75"}},
    {"ComputeCapabilityDotted",
     [](json& m) { m["steps"][1]["min_compute_capability"] = 9.0; },
     {"steps[1].min_compute_capability: expected an integer such as 90",
      "got 9.0 (write compute capability 9.0 as 90)"}},
    {"ComputeCapabilityMajorOnly",
     [](json& m) { m["steps"][1]["min_compute_capability"] = 9; },
     {"steps[1].min_compute_capability", "got 9 (a major version alone: write compute capability 9.0 as 90)"}},
    {"ComputeCapabilityArchName",
     [](json& m) { m["steps"][1]["min_compute_capability"] = "sm_90"; },
     {"steps[1].min_compute_capability: expected an integer such as 90", "got \"sm_90\""}},
    {"ComputeCapabilityNegative",
     [](json& m) { m["steps"][1]["min_compute_capability"] = -90; },
     {"steps[1].min_compute_capability: expected an integer such as 90", "got -90"}},
    {"ComputeCapabilityMisspelt",
     [](json& m) { m["steps"][1]["min_compute_capibility"] = 90; },
     {"steps[1]: unknown key \"min_compute_capibility\" in a step", "did you mean \"min_compute_capability\"?"}},
    {"FractionHasOver",
     [](json& m) { check(m, 1, 1)["over"] = "baseline"; },
     {"steps[1].checks[1]: unknown key \"over\" in a \"fraction_of_peak\" check"}},
};

class BadManifest : public testing::TestWithParam<BadCase> {};

TEST_P(BadManifest, IsRejectedWithLocationAndReason) {
  json m = full_manifest();
  GetParam().change(m);
  try {
    parse_manifest(m, kSource);
    FAIL() << "accepted: " << m.dump();
  } catch (const ManifestError& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind(std::string(kSource) + ": ", 0), 0u) << message;
    for (const auto& piece : GetParam().message_has)
      EXPECT_NE(message.find(piece), std::string::npos) << "missing \"" << piece << "\" in: " << message;
  }
}

INSTANTIATE_TEST_SUITE_P(Manifest, BadManifest, testing::ValuesIn(kBadCases),
                         [](const testing::TestParamInfo<BadCase>& info) { return info.param.name; });

TEST(Manifest, MessageReadsWholeForWrongType) {
  json m = full_manifest();
  m["steps"][0]["checks"][1] = {{"kind", "speedup"}, {"case", "big"}, {"min", "fast"}};
  try {
    parse_manifest(m, kSource);
    FAIL() << "accepted a string threshold";
  } catch (const ManifestError& e) {
    EXPECT_STREQ(e.what(), "labs/x/lab.json: steps[0].checks[1].min: expected a number > 0, got \"fast\"");
  }
}

TEST(Manifest, CommentKeysAreAllowedAnywhere) {
  json m = full_manifest();
  m["_comment"] = "top";
  m["steps"][0]["$id"] = "step";
  check(m, 0, 0)["_why"] = "the tile must live in shared memory";
  m["steps"][0]["symptom_hints"]["_note"] = "not a symptom";
  Manifest parsed = parse_manifest(m, kSource);
  EXPECT_EQ(parsed.steps[0].symptom_hints.count("_note"), 0u);
}

class TempDir {
 public:
  TempDir() {
    static int counter = 0;
    path_ = fs::temp_directory_path() / ("manifest_test." + std::to_string(getpid()) + "." + std::to_string(counter++));
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

void write_file(const fs::path& file, const std::string& text) { std::ofstream(file, std::ios::binary) << text; }

TEST(LoadManifest, ReadsAFile) {
  TempDir dir;
  write_file(dir.path() / "lab.json", full_manifest().dump(2));
  Manifest m = load_manifest(dir.path() / "lab.json");
  EXPECT_EQ(m.id, "lab07");
  EXPECT_EQ(m.steps.size(), 2u);
}

TEST(LoadManifest, TheCoursesSharedHintsComeUnderTheLabsOwn) {
  TempDir dir;
  fs::create_directories(dir.path() / "labs" / "lab07-x");
  json lab = full_manifest();
  lab["symptom_hints"] = {{"race", "The lab's own word on races."}};
  write_file(dir.path() / "labs" / "lab07-x" / "lab.json", lab.dump(2));
  write_file(dir.path() / "labs" / kCourseSymptomHints,
             R"({"format_version": 1, "symptom_hints": {"race": "The course's.", "leak": "Free what you allocate."}})");
  const Manifest m = load_manifest(dir.path() / "labs" / "lab07-x" / "lab.json");
  EXPECT_EQ(m.symptom_hints.at("race"), "The lab's own word on races.");
  EXPECT_EQ(m.symptom_hints.at("leak"), "Free what you allocate.");
  EXPECT_EQ(load_lab_manifest(dir.path() / "labs" / "lab07-x" / "lab.json").symptom_hints.count("leak"), 0u);
  // A broken course file is named, like a broken lab.json.
  write_file(dir.path() / "labs" / kCourseSymptomHints, R"({"format_version": 1, "hints": {}})");
  try {
    load_manifest(dir.path() / "labs" / "lab07-x" / "lab.json");
    FAIL() << "accepted";
  } catch (const ManifestError& e) {
    EXPECT_NE(std::string(e.what()).find(kCourseSymptomHints), std::string::npos) << e.what();
  }
}

TEST(LoadManifest, ValidationErrorsNameTheFile) {
  TempDir dir;
  json m = full_manifest();
  m["steps"][0]["id"] = 2;
  write_file(dir.path() / "lab.json", m.dump());
  try {
    load_manifest(dir.path() / "lab.json");
    FAIL() << "accepted";
  } catch (const ManifestError& e) {
    EXPECT_NE(std::string(e.what()).find((dir.path() / "lab.json").string() + ": steps[0].id"), std::string::npos)
        << e.what();
  }
}

TEST(LoadManifest, SyntaxErrorNamesFileAndPosition) {
  TempDir dir;
  const fs::path file = dir.path() / "lab.json";
  // The stray comma is column 13 of line 2, the 35th byte of the file.
  write_file(file, "{\"format_version\": 1,\n  \"id\": \"x\",,\n}");
  try {
    load_manifest(file);
    FAIL() << "accepted invalid JSON";
  } catch (const ManifestError& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind(file.string() + ": invalid JSON at byte 35 (line 2, column 13): ", 0), 0u) << message;
    EXPECT_EQ(message.find("[json.exception"), std::string::npos) << message;
  }
}

TEST(LoadManifest, MissingFile) {
  TempDir dir;
  const fs::path file = dir.path() / "nope" / "lab.json";
  try {
    load_manifest(file);
    FAIL() << "loaded a file that does not exist";
  } catch (const ManifestError& e) {
    EXPECT_EQ(std::string(e.what()), file.string() + ": cannot read the manifest: no such file");
  }
}

TEST(LoadManifest, FolderInsteadOfFile) {
  TempDir dir;
  EXPECT_THROW(load_manifest(dir.path()), ManifestError);
}

TEST(Manifest, ApiCheckNamesACaseAndOptionallyItsFacts) {
  json m = full_manifest();
  check(m, 0, 0) = {{"kind", "api"}, {"case", "props"}, {"facts", {"sm_count", "warp_size"}}};
  const Manifest parsed = parse_manifest(m, kSource);
  const Check& c = parsed.steps[0].checks[0];
  EXPECT_EQ(name_of(c.kind), "api");
  EXPECT_EQ(c.case_name, "props");
  EXPECT_EQ(c.facts, (std::vector<std::string>{"sm_count", "warp_size"}));
  EXPECT_FALSE(c.is_static());
  check(m, 0, 0).erase("facts");
  EXPECT_TRUE(parse_manifest(m, kSource).steps[0].checks[0].facts.empty());
}

}  // namespace
}  // namespace grader

namespace grader {
namespace {

TEST(TimedKinds, EachJudgesTheRatioOfItsOwnName) {
  // One name for one quantity: the kind in lab.json, its interval in the
  // referee's result and its threshold in a request (common/protocol/referee_protocol.hpp).
  for (const auto& traits : check_kinds()) {
    if (!traits.ratio) continue;
    EXPECT_EQ(memlabs::name_of(*traits.ratio), traits.name);
    EXPECT_EQ(timed_ratio(traits.kind), *traits.ratio);
  }
  EXPECT_EQ(timed_ratio(CheckKind::fraction_of_library), memlabs::TimedRatio::fraction_of_library);
  memlabs::TimingReport report;
  report.fraction_of_peak = memlabs::RatioInterval{0.9, 0.89, 0.91, 6};
  const nlohmann::json written = report;
  EXPECT_EQ(written.at(name_of(CheckKind::fraction_of_peak)).at("median"), 0.9)
      << "the report's key is the kind's name";
}

TEST(CheckKinds, OneTableSaysEverythingAboutEachKind) {
  std::set<std::string> names;
  for (const auto& t : check_kinds()) {
    EXPECT_TRUE(names.insert(t.name).second) << t.name << " is listed twice";
    EXPECT_NE(t.read, nullptr) << t.name;
    ASSERT_FALSE(t.keys.empty()) << t.name;
    EXPECT_EQ(t.keys.front(), "kind") << t.name;
    EXPECT_FALSE(t.ratio && t.is_static) << t.name << ": a timed check needs a GPU";
    EXPECT_EQ(check_kind_traits(t.name), &t);
    // How a lesson says it: a sentence that starts with the kind's name, even for a check with nothing set.
    ASSERT_NE(t.in_words, nullptr) << t.name;
    Check bare;
    bare.kind = t.kind;
    EXPECT_EQ(check_in_words(bare).rfind("`" + t.name + "`: ", 0), 0u) << check_in_words(bare);
  }
  EXPECT_EQ(names, std::set<std::string>(known_check_kinds().begin(), known_check_kinds().end()));
  // Every kind has its row, and its row names it.
  const std::vector<CheckKind> all = {
      CheckKind::correct,   CheckKind::speedup, CheckKind::fraction_of_peak,    CheckKind::ptxas,
      CheckKind::ptx,       CheckKind::api,     CheckKind::fraction_of_library, CheckKind::ncu,
      CheckKind::sanitizer, CheckKind::overlap};
  EXPECT_EQ(check_kinds().size(), all.size());
  for (CheckKind k : all) {
    EXPECT_EQ(traits_of(k).kind, k) << name_of(k);
    EXPECT_EQ(check_kind_traits(name_of(k)), &traits_of(k)) << name_of(k);
    EXPECT_EQ(nlohmann::json(k), name_of(k)) << "a kind reaches JSON as its name";
  }
  // --first-failure-only's cost ranks agree with what each kind runs.
  for (CheckKind k : all) {
    const CheckKindTraits& t = traits_of(k);
    EXPECT_EQ(t.cost_rank == 0, t.is_static) << name_of(k);
    if (t.ratio) EXPECT_EQ(t.cost_rank, 4) << name_of(k);
    EXPECT_GE(t.cost_rank, 0) << name_of(k);
    EXPECT_LE(t.cost_rank, 4) << name_of(k);
  }
  EXPECT_EQ(traits_of(CheckKind::sanitizer).cost_rank, 2);
  EXPECT_EQ(traits_of(CheckKind::ncu).cost_rank, 3);
  EXPECT_TRUE(is_timed_kind(CheckKind::speedup));
  EXPECT_FALSE(is_timed_kind(CheckKind::ncu));
  EXPECT_EQ(check_kind_traits("spedup"), nullptr);
  EXPECT_THROW(timed_ratio(CheckKind::ncu), std::logic_error);
  Check ptx;
  ptx.kind = CheckKind::ptx;
  EXPECT_TRUE(ptx.is_static());
  Check timed;
  timed.kind = CheckKind::speedup;
  EXPECT_FALSE(timed.is_static());
}

}  // namespace
}  // namespace grader
