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
#include "stats.hpp"
#include "text.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace grader {

void LabGrader::start_timing(const std::string& case_name) {
  if (timings_.count(case_name)) return;
  RefereeCall rc = referee_call("time-" + case_name);
  make_timing_call(rc, case_name, rep_.seed, o_.cap_s, m_.timeout_s);
  rc.cancel = &cancel_timings_;
  // Every threshold any step puts on this case, so one session decides them all
  // (and each threshold times the margin asked for, which the verdict never reads).
  const auto decide = [&](const Check& c) {
    if (!is_timed(c) || c.case_name != case_name) return;
    rc.request.decide.push_back({timing_decide_name(c.kind), c.min});
    if (o_.decide_margin > 1) rc.request.decide.push_back({timing_decide_name(c.kind), c.min * o_.decide_margin});
  };
  for (const auto& step : m_.steps)
    for (const auto& c : step.checks) {
      decide(c);
      for (const auto& f : c.fallback) decide(f);
    }
  timings_.emplace(case_name, std::async(std::launch::async, [rc, case_name] {
                                const auto begin = std::chrono::steady_clock::now();
                                RunnerOutcome out = timed_until_undisturbed([&](int session) {
                                  RefereeCall again = rc;
                                  if (session > 1) again.work_dir /= "session-" + std::to_string(session);
                                  return call_referee(again);
                                });
                                // Work a grade started and threw away shows in its phases too.
                                if (out.category == RunCategory::cancelled)
                                  note_phase("timing referee: " + case_name + " stopped, no step read it", begin,
                                             std::chrono::steady_clock::now(), 1);
                                return out;
                              }).share());
}

// The case the first timed check reads: it is timed while the program's
// correctness run and tool runs go on, and is stopped if no step reaches it.
void LabGrader::start_first_timing() {
  // A sandboxed grade's runs share one turn (whole_grade_turns()): its timing
  // waits for its tool runs instead, in timing_for.
  if (gpu_unavailable() || whole_grade_turns()) return;
  for (const auto& step : m_.steps)
    for (const auto& c : step.checks)
      if (is_timed(c)) return start_timing(c.case_name);
}

RunnerOutcome timed_until_undisturbed(const std::function<RunnerOutcome(int session)>& time) {
  RunnerOutcome out = time(1);
  for (int session = 2; session <= kTimingSessions && out.category == RunCategory::interference; ++session)
    out = time(session);
  return out;
}

const RunnerOutcome& LabGrader::timing_for(const std::string& case_name) {
  if (whole_grade_turns()) finish_tool_runs();  // they share the grade's turn: a timing has the GPU to itself
  start_timing(case_name);
  const std::shared_future<RunnerOutcome>& t = timings_.at(case_name);
  if (t.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
    Activity activity("timing " + case_name + " (baseline, yours, memcpy)");
    t.wait();
  }
  return t.get();  // an Interrupted rethrows here
}

// Why the candidate's timed launches cannot be counted: what the referee found
// when it checked them (common/timing.cuh), as a sentence and a symptom.
namespace {

std::pair<std::string, std::string> describe_timed_failure(const json& tf, const std::string& case_name) {
  const std::string kind = tf.value("kind", "");
  const json d = tf.value("detail", json::object());
  const long long earlier = tf.value("verified_batches", 0ll);
  const std::string when =
      earlier > 0 ? "after " + std::to_string(earlier) + " batches of launches that were right, a batch on fresh inputs"
                  : "the first timed launches";
  if (kind == "mismatch")
    return {"wrong result at the timing size " + case_name + " (" + when +
                "): " + std::to_string(d.value("mismatches", 0ull)) + " of " + std::to_string(d.value("count", 0ull)) +
                " elements of `" + d.value("output", std::string()) + "` differ from the baseline, first at " +
                d.value("where", std::string("?")) + ": expected " + value_text(d.value("expected", json())) +
                ", got " + value_text(d.value("got", json())),
            earlier > 0 ? "timed_mismatch" : "mismatch"};
  if (kind == "unwritten")
    return {"at the timing size " + case_name + " (" + when + "), " + std::to_string(d.value("unwritten", 0ull)) +
                " of " + std::to_string(d.value("count", 0ull)) + " elements of `" + d.value("output", std::string()) +
                "` were never written (first at " + d.value("first", std::string("?")) + ")",
            earlier > 0 ? "timed_mismatch" : "unwritten"};
  if (kind == "unfinished" && d.value("sampled", false))
    return {"at the timing size " + case_name + " (" + when +
                "), your program answered before its outputs were written: " +
                std::to_string(d.value("unwritten", 0ull)) + " of " + std::to_string(d.value("count", 0ull)) +
                " places sampled across them still held the poison when its reply came",
            "early_reply"};
  if (kind == "unfinished")
    return {"at the timing size " + case_name + " (" + when +
                "), your program answered before its GPU work was done: " + std::to_string(d.value("unwritten", 0ull)) +
                " of " + std::to_string(d.value("count", 0ull)) + " elements of `" + d.value("output", std::string()) +
                "` were still unwritten when its reply came (first at " + d.value("first", std::string("?")) + ")",
            "early_reply"};
  if (kind == "written_early")
    return {"at the timing size " + case_name + " (" + when + "), " + std::to_string(d.value("written", 0ull)) +
                " of " + std::to_string(d.value("count", 0ull)) + " elements of `" + d.value("output", std::string()) +
                "` were written before the timed request was sent: GPU work your program queued earlier ran "
                "outside the time",
            "early_reply"};
  if (kind == "canary")
    return {"at the timing size " + case_name + " (" + when + "), a write landed " +
                (d.value("before", false) ? "before the start" : "past the end") + " of `" +
                d.value("output", std::string()) + "`",
            "canary"};
  if (kind == "modified_input")
    return {"at the timing size " + case_name + " (" + when + "), your program changed its input `" +
                d.value("input", std::string()) + "` (inputs are read-only)",
            "modified_input"};
  return {"the timed launches at " + case_name + " could not be checked", "error"};
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
  if (c.kind != CheckKind::fraction_of_library && t.library_fraction)
    d.push_back("yours runs at " + fixed(100 * t.library_fraction->median, 1) + " % of " +
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
    const auto [summary, symptom] =
        describe_timed_failure(t.result.value("timed_failure", json::object()), c.case_name);
    CheckResult r = failed(c, summary, symptom);
    if (symptom == "timed_mismatch")
      r.details.push_back(
          "every timed launch gets fresh inputs and is checked: a kernel that skips work, or "
          "reuses what it computed for earlier inputs, is found out there");
    return r;
  }
  if (t.category == RunCategory::referee || t.category == RunCategory::no_device) return skipped(c, t.message);
  if (!t.ok() && t.category != RunCategory::interference) {
    CheckResult r = failed(c, t.message, category_name(t.category));
    if (t.result.is_object() && t.result.contains("failure")) r.data["failure"] = t.result["failure"];
    return r;
  }
  if (!t.timing) return failed(c, "the referee's timing session reported no times", "error");
  const memlabs::TimingReport& tr = *t.timing;
  const bool library = c.kind == CheckKind::fraction_of_library;
  CheckResult r;
  r.kind = c.kind;
  r.data = tr;
  r.data.erase("samples");
  if (t.category == RunCategory::interference) return failed(c, interference_summary(tr.interference), "interference");
  const std::optional<memlabs::RatioInterval>* measured = memlabs::interval_named(tr, timing_interval_key(c.kind));
  if (!measured || !*measured)
    return skipped(c, library ? "the driver has no library version to compare with (a course problem)"
                              : "no memcpy reference could be timed (not enough free GPU memory)");
  const memlabs::RatioInterval& iv = **measured;
  const auto decision = memlabs::decide_final(iv, c.min);
  r.summary = timing_summary(c, iv, tr);
  r.details = timing_details(c, tr);
  r.status = decision.pass ? Outcome::pass : Outcome::fail;
  if (decision.noisy) {
    r.symptom = "noisy";
    r.details.push_back(
        "the interval still straddled the threshold after sampling more: decided on the median; the machine was noisy");
  }
  if (auto why = implausible(tr)) {
    r.status = Outcome::fail;
    r.symptom = "implausibly_fast";
    r.summary = "faster than the hardware allows at " + c.case_name + ": " + *why + ". Does it do all the work?";
  }
  return r;
}

}  // namespace grader
