// The timed checks (speedup, fraction of peak, fraction of a library): one
// referee timing session per case serves every check on it.
#include <algorithm>
#include <chrono>
#include <future>
#include <sstream>

#include "activity.hpp"
#include "gpu_lock.hpp"
#include "lab_grader.hpp"
#include "phase_log.hpp"
#include "plausibility.hpp"
#include "protocol/stats.hpp"
#include "text.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace grader {

void LabGrader::start_timing(const std::string& case_name) {
  if (timings_.started(case_name)) return;
  RefereeCall rc = referee_call("time-" + case_name);
  make_timing_call(rc, case_name, rep_.seed, o_.cap_s, m_.timeout_s);
  // Every threshold any step puts on this case, so one session decides them all
  // (and each threshold times the margin asked for, which the verdict never reads).
  const auto decide = [&](const Check& c) {
    if (!is_timed(c) || c.case_name != case_name) return;
    rc.request.decide.push_back({timed_ratio(c.kind), c.min});
    if (o_.decide_margin > 1) rc.request.decide.push_back({timed_ratio(c.kind), c.min * o_.decide_margin});
  };
  for (const auto& step : m_.steps)
    for (const auto& c : step.checks) {
      decide(c);
      for (const auto& f : c.fallback) decide(f);
    }
  timings_.start(case_name, rc);
}

// The case the first timed check reads: it is timed while the program's
// correctness run and tool runs go on, and is stopped if no step reaches it.
void LabGrader::start_first_timing() {
  // A sandboxed grade's runs share one turn (whole_grade_turns()): its timing
  // waits for its tool runs instead, in timing_for.
  if (gpu_unavailable() || whole_grade_turns()) return;
  for (const auto& step : m_.steps)
    for (const auto& c : step.checks)
      if (is_timed(c) && graded_here(step)) return start_timing(c.case_name);
}

const RunnerOutcome& LabGrader::timing_for(const std::string& case_name) {
  if (whole_grade_turns()) finish_tool_runs();  // they share the grade's turn: a timing has the GPU to itself
  start_timing(case_name);
  return timings_.result(case_name);
}

// Why the candidate's timed launches cannot be counted: what the referee found
// when it checked them (common/referee/timing.cuh), as a sentence and a symptom.
namespace {

std::pair<std::string, Symptom> describe_timed_failure(const memlabs::TimedFailure& f, const std::string& case_name) {
  using K = memlabs::TimedFailureKind;
  const std::size_t earlier = f.verified_batches;
  const std::string when =
      earlier > 0 ? "after " + std::to_string(earlier) + " batches of launches that were right, a batch on fresh inputs"
                  : "the first timed launches";
  const std::string at = "at the timing size " + case_name + " (" + when + ")";
  const std::string of = std::to_string(f.found) + " of " + std::to_string(f.count);
  const std::string first = f.first.empty() ? "?" : f.first;
  switch (f.kind) {
    case K::mismatch:
      return {"wrong result " + at + ": " + of + " elements of `" + f.buffer + "` differ from the baseline, first at " +
                  first + ": expected " + value_text(f.expected) + ", got " + value_text(f.got),
              earlier > 0 ? Symptom::timed_mismatch : Symptom::mismatch};
    case K::unwritten:
      return {at + ", " + of + " elements of `" + f.buffer + "` were never written (first at " + first + ")",
              earlier > 0 ? Symptom::timed_mismatch : Symptom::unwritten};
    case K::unfinished:
      if (f.sampled)
        return {at + ", your program answered before its outputs were written: " + of +
                    " places sampled across them still held the poison when its reply came",
                Symptom::early_reply};
      return {at + ", your program answered before its GPU work was done: " + of + " elements of `" + f.buffer +
                  "` were still unwritten when its reply came (first at " + first + ")",
              Symptom::early_reply};
    case K::written_early:
      return {at + ", " + of + " elements of `" + f.buffer +
                  "` were written before the timed request was sent: GPU work your program queued earlier ran "
                  "outside the time",
              Symptom::early_reply};
    case K::canary:
      return {at + ", a write landed " + (f.before ? "before the start" : "past the end") + " of `" + f.buffer + "`",
              Symptom::canary};
    case K::modified_input:
      return {at + ", your program changed its input `" + f.buffer + "` (inputs are read-only)",
              Symptom::modified_input};
  }
  return {"the timed launches at " + case_name + " could not be checked", Symptom::error};  // not reached
}

// The timed check's verdict line: the measured interval against the threshold.
std::string timing_summary(const Check& c, const memlabs::RatioInterval& interval, const memlabs::TimingReport& t) {
  if (c.kind == CheckKind::speedup)
    return "speedup over the baseline at " + c.case_name + ": " + fixed(interval.median) + "× [" + fixed(interval.lo) +
           ", " + fixed(interval.hi) + "], needs ≥ " + fixed(c.min) + "×";
  const std::string of = c.kind == CheckKind::fraction_of_library ? t.library.value_or("the library") + "'s speed"
                                                                  : std::string("memcpy bandwidth");
  return "at " + c.case_name + ": " + fixed(100 * interval.median, 1) + " % of " + of + " [" +
         fixed(100 * interval.lo, 1) + ", " + fixed(100 * interval.hi, 1) + "], needs ≥ " + fixed(100 * c.min, 1) +
         " %";
}

// What else the timing measured: bandwidths, the A/A ratio, the rounds, and
// the scaling an interference allowance applied.
std::vector<std::string> timing_details(const Check& c, const memlabs::TimingReport& t) {
  std::vector<std::string> d;
  d.push_back("baseline " + fixed(t.baseline_gbps, 0) + " GB/s, yours " + fixed(t.candidate_gbps, 0) + " GB/s" +
              (t.memcpy_gbps ? ", memcpy " + fixed(*t.memcpy_gbps, 0) + " GB/s" : "") + "; A/A " +
              fixed(t.aa ? t.aa->median : 0.0, 3) + " over " + std::to_string(t.rounds) + " rounds, " +
              std::to_string(t.verified_launches) + " timed launches checked");
  if (c.kind == CheckKind::speedup && t.interference.speedup_scale < 1.0)
    d.push_back("the baseline ran " + fixed(t.interference.ratio, 2) +
                "× slower beside your program than alone: the speedup is scaled by " +
                fixed(t.interference.speedup_scale, 3) + " so that no more than 10 % of it counts");
  if (t.candidate_gflops)
    d.push_back("baseline " + fixed(t.baseline_gflops.value_or(0.0), 0) + " GFLOP/s, yours " +
                fixed(*t.candidate_gflops, 0) + " GFLOP/s" +
                (t.library_gflops
                     ? ", " + t.library.value_or("library") + " " + fixed(*t.library_gflops, 0) + " GFLOP/s"
                     : std::string()));
  if (c.kind != CheckKind::fraction_of_library && t.fraction_of_library)
    d.push_back("yours runs at " + fixed(100 * t.fraction_of_library->median, 1) + " % of " +
                t.library.value_or("the library") + "'s speed");
  return d;
}

// Why a session's times were not used: the baseline ran slower beside the program.
std::string interference_summary(const memlabs::Interference& i) {
  return "the baseline ran " + fixed(i.ratio, 2) + "× slower beside your program than alone (" +
         fixed(i.baseline_ms, 3) + " ms against " + fixed(i.solo_baseline_ms, 3) + " ms, the last of " +
         std::to_string(kTimingSessions) +
         " timing sessions, each of them disturbed): something kept the GPU busy between your requests, so these times "
         "are not used. If "
         "your program starts no GPU work of its own outside the launcher, grade again";
}

}  // namespace

CheckResult LabGrader::check_timing(const Check& c) {
  if (auto why = gpu_unavailable()) return skipped(c, *why);
  const RunnerOutcome& t = timing_for(c.case_name);
  if (t.category == RunCategory::timed_failure) {
    const auto [summary, symptom] = describe_timed_failure(*t.timed_failure, c.case_name);
    CheckResult r = failed(c, summary, symptom);
    if (symptom == Symptom::timed_mismatch)
      r.details.push_back(
          "every timed launch gets fresh inputs and is checked: a kernel that skips work, or "
          "reuses what it computed for earlier inputs, is found out there");
    return r;
  }
  if (t.category == RunCategory::referee || t.category == RunCategory::no_device) return skipped(c, t.message);
  if (!t.ok() && t.category != RunCategory::interference) {
    CheckResult r = failed(c, t.message, symptom_of(t.category));
    if (t.result.is_object() && t.result.contains("failure")) r.data["failure"] = t.result["failure"];
    return r;
  }
  if (!t.timing) return failed(c, "the referee's timing session reported no times", Symptom::error);
  const memlabs::TimingReport& tr = *t.timing;
  const bool library = c.kind == CheckKind::fraction_of_library;
  CheckResult r;
  r.kind = c.kind;
  r.data = tr;
  r.data.erase("samples");
  if (t.category == RunCategory::interference)
    return failed(c, interference_summary(tr.interference), Symptom::interference);
  const std::optional<memlabs::RatioInterval>& measured = memlabs::interval_of(tr, timed_ratio(c.kind));
  if (!measured)
    return skipped(c, library ? "the driver has no library version to compare with (a course problem)"
                              : "no memcpy reference could be timed (not enough free GPU memory)");
  const memlabs::RatioInterval& iv = *measured;
  const auto decision = memlabs::decide_final(iv, c.min);
  r.summary = timing_summary(c, iv, tr);
  r.details = timing_details(c, tr);
  r.status = decision.pass ? Outcome::pass : Outcome::fail;
  if (decision.noisy) {
    r.symptom = Symptom::noisy;
    r.details.push_back(
        "the interval still straddled the threshold after sampling more: decided on the median; the machine was noisy");
  }
  if (auto why = implausible(tr)) {
    r.status = Outcome::fail;
    r.symptom = Symptom::implausibly_fast;
    r.summary = "faster than the hardware allows at " + c.case_name + ": " + *why + ". Does it do all the work?";
  }
  return r;
}

}  // namespace grader
