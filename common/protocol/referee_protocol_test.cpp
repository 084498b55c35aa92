#include "referee_protocol.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace memlabs {
namespace {

using nlohmann::json;

TimingReport a_report() {
  TimingReport t;
  t.rounds = 6;
  t.batch = 11;
  t.baseline_batch = 2;
  t.warmup_ms = 188.4;
  t.decided_early = true;
  t.bytes_moved = 536870912;
  t.baseline_ms = 1.30;
  t.candidate_ms = 0.195;
  t.baseline_gbps = 412;
  t.candidate_gbps = 2747;
  t.speedup = RatioInterval{6.68, 6.52, 6.85, 6};
  t.aa = RatioInterval{1.02, 0.96, 1.04, 6};
  t.fraction_of_peak = RatioInterval{0.91, 0.906, 0.93, 6};
  t.memcpy_ms = 0.179;
  t.memcpy_gbps = 2990;
  t.speedup_samples = {6.5, 6.7, 6.8};
  t.interference = {1.28, 1.30, 1.016, 1.10, 1.0};
  return t;
}

TEST(RefereeProtocol, ATimingReportReadsBackAsItWasWritten) {
  const TimingReport t = a_report();
  const json j = t;
  const TimingReport back = j.get<TimingReport>();
  EXPECT_EQ(json(back), j);
  EXPECT_EQ(back.rounds, 6u);
  EXPECT_TRUE(back.decided_early);
  ASSERT_TRUE(back.speedup);
  EXPECT_DOUBLE_EQ(back.speedup->lo, 6.52);
  EXPECT_FALSE(back.library) << "no library was timed";
  EXPECT_FALSE(j.contains("fraction_of_library")) << "written only where a library was timed";
  EXPECT_DOUBLE_EQ(back.interference.ratio, 1.016);
}

TEST(RefereeProtocol, WhichCopyTheMemcpyWasTravelsWithIt) {
  TimingReport t = a_report();
  EXPECT_FALSE(json(t).contains("memcpy_over_host_link")) << "device to device, the default, is not written";
  t.memcpy_over_host_link = true;
  const json j = t;
  EXPECT_TRUE(j.at("memcpy_over_host_link").get<bool>());
  EXPECT_TRUE(j.get<TimingReport>().memcpy_over_host_link);
}

TEST(RefereeProtocol, AnIntervalWithNoSamplesTravelsAsNull) {
  TimingReport t = a_report();
  t.fraction_of_peak.reset();  // no copy fitted in memory
  const json j = t;
  EXPECT_TRUE(j.at("fraction_of_peak").is_null());
  EXPECT_FALSE(j.get<TimingReport>().fraction_of_peak);
}

TEST(RefereeProtocol, AMissingKeyIsAnErrorThatNamesIt) {
  for (const char* key : {"rounds", "decided_early", "speedup", "interference", "samples"}) {
    json j = a_report();
    j.erase(key);
    try {
      (void)j.get<TimingReport>();
      ADD_FAILURE() << "read without " << key;
    } catch (const json::exception& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  }
}

TEST(RefereeProtocol, AValueOfTheWrongTypeIsAnError) {
  json j = a_report();
  j["rounds"] = "six";
  EXPECT_THROW((void)j.get<TimingReport>(), json::exception);
}

TEST(RefereeProtocol, EachRatioHasItsIntervalUnderItsOwnName) {
  const TimingReport t = a_report();
  const json j = t;
  EXPECT_DOUBLE_EQ(interval_of(t, TimedRatio::speedup)->median, 6.68);
  EXPECT_DOUBLE_EQ(interval_of(t, TimedRatio::fraction_of_peak)->median, 0.91);
  EXPECT_FALSE(interval_of(t, TimedRatio::fraction_of_library));
  for (TimedRatio r : kEveryTimedRatio) {
    EXPECT_EQ(enum_named(name_of(r), kEveryTimedRatio), r);
    if (interval_of(t, r)) EXPECT_EQ(j.at(name_of(r)).at("median"), interval_of(t, r)->median) << name_of(r);
  }
}

TEST(RefereeProtocol, ATimedFailureReadsBackByKindAndRefusesAnUnknownOne) {
  TimedFailure f;
  f.kind = TimedFailureKind::unfinished;
  f.buffer = "out";
  f.count = 4096;
  f.found = 17;
  f.first = "[3, 5]";
  f.verified_batches = 2;
  json j = f;
  EXPECT_EQ(j.at("kind"), "unfinished");
  const TimedFailure back = j.get<TimedFailure>();
  EXPECT_EQ(json(back), j);
  EXPECT_EQ(back.kind, TimedFailureKind::unfinished);
  EXPECT_EQ(back.found, 17u);
  j["kind"] = "late";
  EXPECT_THROW((void)j.get<TimedFailure>(), std::runtime_error);
  j = f;
  j.erase("verified_batches");
  EXPECT_THROW((void)j.get<TimedFailure>(), json::exception) << "every key is required";
}

TEST(RefereeProtocol, ARunFailureReadsBackWithWhatTheProgramSaidAsData) {
  RunFailureReport f = failure_of(FailureKind::cuda_error, "an illegal memory access was encountered");
  f.phase = "candidate";
  f.case_name = "1000x777";
  f.op = "run";
  f.recent = {"{\"id\": 3}"};
  f.error = ProgramError{"cudaErrorIllegalAddress", "an illegal memory access was encountered", "cudaDeviceSynchronize",
                         "serve.cpp:120"};
  json j = f;
  EXPECT_EQ(j.at("kind"), "cuda_error");
  EXPECT_EQ(j.at("case"), "1000x777");
  EXPECT_EQ(j.at("who"), "worker");
  EXPECT_EQ(json(j.get<RunFailureReport>()), j);
  EXPECT_EQ(j.get<RunFailureReport>().error->name, "cudaErrorIllegalAddress");
  const json plain = failure_of(FailureKind::usage, "no such case");
  EXPECT_TRUE(plain.at("error").is_null());
  EXPECT_FALSE(plain.get<RunFailureReport>().error);
  j["kind"] = "meltdown";
  EXPECT_THROW((void)j.get<RunFailureReport>(), std::runtime_error);
  j = f;
  j["who"] = "referee";  // whose run is one of two servers, named as the protocol names them
  EXPECT_THROW((void)j.get<RunFailureReport>(), std::runtime_error);
  j["who"] = "trusted";
  EXPECT_EQ(j.get<RunFailureReport>().who, ServerRole::trusted);
  j.erase("who");
  EXPECT_THROW((void)j.get<RunFailureReport>(), json::exception) << "every key is required";
}

CaseReport a_case() {
  CaseReport c;
  c.name = "1000x777";
  c.status = CaseStatus::mismatch;
  OutputReport o;
  o.name = "out";
  o.dtype = "f32";
  o.count = 777000;
  o.dims = {1000, 777};
  o.mismatches = 3;
  o.max_abs_error = value_json(std::nan(""));
  o.max_rel_error = 0.5;
  o.first = {{"[0, 3]", 1.5, value_json(std::nan(""))}};
  c.outputs = {o};
  c.rerun = Rerun{"out", 2, 777000};
  return c;
}

TEST(RefereeProtocol, ACaseReadsBackAsItWasWrittenNaNsIncluded) {
  const json j = a_case();
  const CaseReport back = j.get<CaseReport>();
  EXPECT_EQ(json(back), j);
  ASSERT_EQ(back.outputs.size(), 1u);
  EXPECT_EQ(back.outputs[0].first[0].got, "nan");
  EXPECT_EQ(back.outputs[0].dims, (std::vector<std::int64_t>{1000, 777}));
  ASSERT_TRUE(back.rerun);
  EXPECT_EQ(back.rerun->changed, 2u);
  EXPECT_FALSE(back.facts) << "facts only for the cases asked with --facts";
}

TEST(RefereeProtocol, ACaseTheProgramStoppedInCarriesOnlyItsName) {
  const json j = {{"case", "33x4097"}, {"status", "running"}};
  const CaseReport c = j.get<CaseReport>();
  EXPECT_FALSE(c.finished());
  EXPECT_EQ(json(c), j);
}

TEST(RefereeProtocol, AFinishedCaseWithoutItsOutputsIsAnError) {
  json j = a_case();
  j.erase("outputs");
  EXPECT_THROW((void)j.get<CaseReport>(), json::exception);
  json k = a_case();
  k["outputs"][0].erase("guard_after_intact");
  EXPECT_THROW((void)k.get<CaseReport>(), json::exception);
}

// The wire format, spelled out as docs/json-output.md documents it: the
// structs must read it and write it back key for key.
TEST(RefereeProtocol, TheDocumentedKeysReadAndWriteBackExactly) {
  const json case_doc = json::parse(R"({"case": "1000x777", "status": "ok",
      "outputs": [{"name": "out", "dtype": "f32", "count": 777000, "dims": [1000, 777], "rtol": 1e-5,
                   "atol": 1e-6, "unwritten": 0, "first_unwritten": "", "guard_before_intact": true,
                   "guard_after_intact": true, "mismatches": 0, "max_abs_error": 0.0, "max_rel_error": "nan",
                   "first": [{"where": "[0, 1]", "expected": 1.0, "got": "inf"}]}],
      "modified_inputs": [], "written_around_inputs": ["in"],
      "facts": [{"name": "no_leak", "ok": true, "detail": "free device memory fell by 0.0 MiB"}]})");
  EXPECT_EQ(json(case_doc.get<CaseReport>()), case_doc);

  json timing_doc = a_report();
  timing_doc["speedup"] = json::parse(R"({"median": 2.5, "lo": 2.4, "hi": 2.6, "n": 10})");
  timing_doc["interference"] = json::parse(
      R"({"solo_baseline_ms": 1.0, "baseline_ms": 1.02, "ratio": 1.02, "limit": 1.1, "speedup_scale": 1.0})");
  const TimingReport t = timing_doc.get<TimingReport>();
  EXPECT_DOUBLE_EQ(t.speedup->hi, 2.6);
  EXPECT_DOUBLE_EQ(t.interference.limit, 1.1);
  EXPECT_EQ(json(t), timing_doc);
}

// Every request has one name, read back as itself; a name outside the protocol is none.
TEST(Protocol, EveryRequestIsReadBackByItsName) {
  for (Op op : kEveryOp) {
    EXPECT_EQ(op_named(name_of(op)), op) << name_of(op);
    EXPECT_EQ(json(op), name_of(op));
  }
  EXPECT_EQ(op_named("launch"), std::nullopt);
  EXPECT_EQ(op_named(""), std::nullopt);
  // A case's status the same way; an unknown one is refused.
  for (CaseStatus c : kEveryCaseStatus) EXPECT_EQ(json(name_of(c)).get<CaseStatus>(), c);
  EXPECT_ANY_THROW(json("fine").get<CaseStatus>());
}

// The grader writes a request as arguments and the referee reads them back as
// the same request, thresholds to the last bit; a value that does not read is refused.
TEST(Protocol, ARequestReadsBackAsItWasWritten) {
  RefereeRequest r;
  r.mode = RefereeMode::time;
  r.cases = {"8192x8192"};
  r.seed = 0xfedcba9876543210ull;
  r.variant = "baseline";
  r.cap_s = 2.5;
  r.decide = {{TimedRatio::speedup, 1.15},
              {TimedRatio::fraction_of_peak, 0.6421387559},
              {TimedRatio::fraction_of_peak, 0.6421387559 * 1.25}};
  const std::vector<std::string> args = request_arguments(r);
  RefereeRequest back;
  back.mode = *enum_named(args.at(0), kEveryRefereeMode);
  EXPECT_EQ(args.at(0), "time");
  for (std::size_t i = 1; i + 1 < args.size(); i += 2) EXPECT_TRUE(read_request_option(back, args[i], args[i + 1]));
  EXPECT_EQ(request_arguments(back), args);
  EXPECT_EQ(back.seed, r.seed);
  ASSERT_EQ(back.decide.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(back.decide[i].ratio, r.decide[i].ratio);
    EXPECT_EQ(back.decide[i].threshold, r.decide[i].threshold) << "exact, not rounded";
  }
  RefereeRequest run;
  run.mode = RefereeMode::run;
  run.add_case("1x1");
  run.add_case("1x1");
  run.fact_cases = {"1x1"};
  run.count_cases = {"8192x8192"};
  EXPECT_EQ(request_arguments(run), (std::vector<std::string>{"run", "--case", "1x1", "--facts", "1x1", "--count",
                                                              "8192x8192", "--seed", "1"}));
  RefereeRequest bad;
  EXPECT_FALSE(read_request_option(bad, "--worker", "w")) << "the referee's own option, not the request's";
  EXPECT_THROW(read_request_option(bad, "--cap-s", "3x"), std::invalid_argument);
  EXPECT_THROW(read_request_option(bad, "--decide", "speedup"), std::invalid_argument);
  EXPECT_THROW(read_request_option(bad, "--decide", "speedup:1.1.5"), std::invalid_argument);
  EXPECT_THROW(read_request_option(bad, "--decide", "fraction:0.5"), std::invalid_argument) << "no such ratio";
  EXPECT_THROW(read_request_option(bad, "--decide", "aa:1"), std::invalid_argument) << "no check judges aa";
  EXPECT_THROW(read_request_option(bad, "--seed", "-"), std::invalid_argument);
}

}  // namespace
}  // namespace memlabs
