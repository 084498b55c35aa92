// The result document the referee prints and the grader reads (schemas in
// docs/json-output.md), defined once for both sides. The grader checks the
// version first: a course built by another grader says so instead of being
// misread, and must be rebuilt. The timing report is a typed struct written
// and read by the same functions: a key the referee did not write is an error
// the grader names, never a silent default.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "named_enum.hpp"
#include "referee_failures.hpp"
#include "stats.hpp"

namespace memlabs {

// 3: the timing report is TimingReport (decided_early added), and the result carries "phases".
// 4: each ratio goes by its check kind's name (TimedRatio) in the report and in a
// request, and the failures are typed (referee_failures.hpp).
inline constexpr int kRefereeProtocol = 4;

// One phase of a referee's run ("phases" in every result, for `grader grade
// --timings`; referee/referee_phases.hpp keeps the log): what it was, when it
// began in seconds since the referee's main() started, and how long it took.
struct RefereePhase {
  std::string what;
  double start_s = 0, seconds = 0;
};

// A value read from a submission's output, as the document carries it. JSON has
// no NaN or infinity (nlohmann would write null), and a wrong kernel makes both:
// they travel as the strings "nan", "inf" and "-inf".
inline nlohmann::json value_json(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

// The median of per-round ratios and its 95 % interval over n rounds: the
// statistics' own interval (stats.hpp), sent as it is.
using RatioInterval = Interval;

// The ratios a timing session measures, each under one name everywhere: the
// timed check kind of lab.json that judges it, its interval and samples in the
// report, and a request's threshold for it. aa is the baseline timed against
// itself (how far apart two identical programs' times fall), which no check judges.
enum class TimedRatio { speedup, fraction_of_peak, fraction_of_library, aa };
inline constexpr TimedRatio kEveryTimedRatio[] = {TimedRatio::speedup, TimedRatio::fraction_of_peak,
                                                  TimedRatio::fraction_of_library, TimedRatio::aa};
inline const char* name_of(TimedRatio r) {
  switch (r) {
    case TimedRatio::speedup:
      return "speedup";
    case TimedRatio::fraction_of_peak:
      return "fraction_of_peak";
    case TimedRatio::fraction_of_library:
      return "fraction_of_library";
    case TimedRatio::aa:
      return "aa";
  }
  return "speedup";  // not reached: every TimedRatio is named above
}

// The baseline beside the submission's program against alone (common/referee/timing.cuh).
struct Interference {
  double solo_baseline_ms = 0, baseline_ms = 0, ratio = 0, limit = 0, speedup_scale = 1;
};

// What a timing session measured (result["timing"]). Times are per launch with
// the cost of a request taken off; an interval is absent where nothing was
// timed (no copy fits in memory, no library).
struct TimingReport {
  std::size_t rounds = 0, batch = 0, baseline_batch = 0, fresh_input_batches = 0, verified_launches = 0;
  double warmup_ms = 0, wall_s = 0, total_s = 0;
  bool converged = false, decided_early = false, extended = false;
  bool memcpy_over_host_link =
      false;  // the memcpy timed: pinned host memory to and from the device, not device to device
  double bytes_moved = 0, flops = 0, overhead_ms = 0, peak_gflops = 0;
  double baseline_ms = 0, candidate_ms = 0, baseline_gbps = 0, candidate_gbps = 0;
  std::optional<RatioInterval> speedup, aa, fraction_of_peak, fraction_of_library;
  std::optional<double> memcpy_ms, memcpy_gbps, library_ms, baseline_gflops, candidate_gflops, library_gflops;
  std::optional<std::string> library;
  std::vector<double> speedup_samples, fraction_of_peak_samples, aa_samples;  // per round
  Interference interference;
};

// ---- the correctness run (result["cases"], one a case) ----

// One of the first elements that differ: where, and the two values as value_json writes them.
struct MismatchAt {
  std::string where;
  nlohmann::json expected, got;
};

// One output of a case as the referee read it back and compared it with the oracle.
struct OutputReport {
  std::string name, dtype;
  std::size_t count = 0, unwritten = 0, mismatches = 0;
  std::vector<std::int64_t> dims;
  double rtol = 0, atol = 0;
  std::string first_unwritten;
  bool guard_before_intact = true, guard_after_intact = true;
  nlohmann::json max_abs_error, max_rel_error;  // value_json
  std::vector<MismatchAt> first;
};

// A second run with the same inputs that gave another result.
struct Rerun {
  std::string output;
  std::size_t changed = 0, count = 0;
};

// What the grader asks of one referee run, as data: `referee run` (the
// correctness of cases, the facts of some, the outputs of others counted) or
// `referee time` (one case, with the thresholds the grader will judge, so that
// the session may stop once every one is decided). The grader writes it as the
// referee's arguments (request_arguments), and the referee reads them back
// (read_request_option): one definition for both, thresholds exact.
struct DecideRule {
  TimedRatio ratio = TimedRatio::speedup;
  double threshold = 0;
};
// What the referee is asked to do, its first argument and "mode" in its result:
// list the lab's cases, run cases once and check them, or time one case.
enum class RefereeMode { list, run, time };
inline constexpr RefereeMode kEveryRefereeMode[] = {RefereeMode::list, RefereeMode::run, RefereeMode::time};
inline const char* name_of(RefereeMode m) {
  switch (m) {
    case RefereeMode::list:
      return "list";
    case RefereeMode::run:
      return "run";
    case RefereeMode::time:
      return "time";
  }
  return "run";  // not reached: every RefereeMode is named above
}
inline void to_json(nlohmann::json& j, RefereeMode m) { j = name_of(m); }
inline void from_json(const nlohmann::json& j, RefereeMode& m) { m = enum_from_json(j, kEveryRefereeMode, "mode"); }

struct RefereeRequest {
  RefereeMode mode = RefereeMode::run;
  std::vector<std::string> cases, fact_cases;
  // run: cases whose outputs are only counted (the problem made, nothing run): the
  // timed sizes an ncu measure counts per output element, too large for the oracle.
  std::vector<std::string> count_cases;
  std::uint64_t seed = 1;
  std::string variant = "candidate";  // "baseline" checks the lab's baseline in place of a submission
  double cap_s = 3;                   // time: the rounds stop at this many seconds
  std::vector<DecideRule> decide;     // time: thresholds the grader will judge
  // run: a case once, however many checks name it.
  void add_case(const std::string& name) {
    if (std::find(cases.begin(), cases.end(), name) == cases.end()) cases.push_back(name);
  }
};

namespace protocol_detail {
// A double as text that reads back as the same double.
inline std::string exact(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}
}  // namespace protocol_detail

// The request as the referee's arguments: the mode, then its options.
inline std::vector<std::string> request_arguments(const RefereeRequest& r) {
  std::vector<std::string> a = {name_of(r.mode)};
  for (const auto& c : r.cases) a.insert(a.end(), {"--case", c});
  for (const auto& c : r.fact_cases) a.insert(a.end(), {"--facts", c});
  for (const auto& c : r.count_cases) a.insert(a.end(), {"--count", c});
  a.insert(a.end(), {"--seed", std::to_string(r.seed)});
  if (r.variant != "candidate") a.insert(a.end(), {"--variant", r.variant});
  if (r.mode == RefereeMode::time) a.insert(a.end(), {"--cap-s", protocol_detail::exact(r.cap_s)});
  for (const auto& d : r.decide)
    a.insert(a.end(), {"--decide", std::string(name_of(d.ratio)) + ":" + protocol_detail::exact(d.threshold)});
  return a;
}

// One option of a request, read into `r`: false when `key` is not a request's
// option (the referee has options of its own). Throws std::invalid_argument on a
// value that does not read.
inline bool read_request_option(RefereeRequest& r, const std::string& key, const std::string& value) {
  std::size_t used = 0;
  // The whole value must read, not a prefix of it ("3x" is no number).
  const auto whole = [&](const std::string& text) {
    if (used != text.size()) throw std::invalid_argument(key + " wants a number, not \"" + value + "\"");
  };
  if (key == "--case") {
    r.cases.push_back(value);
  } else if (key == "--facts") {
    r.fact_cases.push_back(value);
  } else if (key == "--count") {
    r.count_cases.push_back(value);
  } else if (key == "--seed") {
    r.seed = std::stoull(value, &used, 0);
    whole(value);
  } else if (key == "--variant") {
    r.variant = value;
  } else if (key == "--cap-s") {
    r.cap_s = std::stod(value, &used);
    whole(value);
  } else if (key == "--decide") {
    const auto colon = value.find(':');
    if (colon == std::string::npos) throw std::invalid_argument("--decide wants ratio:threshold");
    const std::optional<TimedRatio> ratio = enum_named(value.substr(0, colon), kEveryTimedRatio);
    if (!ratio || *ratio == TimedRatio::aa)
      throw std::invalid_argument("--decide: no timed check judges \"" + value.substr(0, colon) + "\"");
    const std::string threshold = value.substr(colon + 1);
    const double t = std::stod(threshold, &used);
    whole(threshold);
    r.decide.push_back({*ratio, t});
  } else {
    return false;
  }
  return true;
}

// How a referee's run ended, "status" in its result by name: ok; mismatch (a
// correctness case's output is wrong: the cases say which); timed_failure and
// interference (the timing says how); usage (the referee was called wrongly);
// no_device; failed (its "failure" says what failed, and whose it was); error
// (it ended before it could say: never written by a finished run).
enum class RefereeStatus { ok, mismatch, timed_failure, interference, usage, no_device, failed, error };
inline constexpr RefereeStatus kEveryRefereeStatus[] = {
    RefereeStatus::ok,    RefereeStatus::mismatch,  RefereeStatus::timed_failure, RefereeStatus::interference,
    RefereeStatus::usage, RefereeStatus::no_device, RefereeStatus::failed,        RefereeStatus::error};
inline const char* name_of(RefereeStatus s) {
  switch (s) {
    case RefereeStatus::ok:
      return "ok";
    case RefereeStatus::mismatch:
      return "mismatch";
    case RefereeStatus::timed_failure:
      return "timed_failure";
    case RefereeStatus::interference:
      return "interference";
    case RefereeStatus::usage:
      return "usage";
    case RefereeStatus::no_device:
      return "no_device";
    case RefereeStatus::failed:
      return "failed";
    case RefereeStatus::error:
      return "error";
  }
  return "error";  // not reached: every RefereeStatus is named above
}
inline void to_json(nlohmann::json& j, RefereeStatus s) { j = name_of(s); }
inline void from_json(const nlohmann::json& j, RefereeStatus& s) {
  s = enum_from_json(j, kEveryRefereeStatus, "referee status");
}

// Every request the referee makes of a program's server (serve.cpp) and of
// its own trusted server, "op" in the request by name: open a case's buffers,
// fill its host inputs, the host steps before and after, run the candidate,
// the library's run, a device-to-device copy, an empty kernel, the facts the
// program reports, and close.
enum class Op { open, inputs, before, run, after, library, copy, nop, facts, close };
inline constexpr Op kEveryOp[] = {Op::open,    Op::inputs, Op::before, Op::run,   Op::after,
                                  Op::library, Op::copy,   Op::nop,    Op::facts, Op::close};
inline const char* name_of(Op op) {
  switch (op) {
    case Op::open:
      return "open";
    case Op::inputs:
      return "inputs";
    case Op::before:
      return "before";
    case Op::run:
      return "run";
    case Op::after:
      return "after";
    case Op::library:
      return "library";
    case Op::copy:
      return "copy";
    case Op::nop:
      return "nop";
    case Op::facts:
      return "facts";
    case Op::close:
      return "close";
  }
  return "?";  // not reached: every Op is named above
}
// The request named `name`, or nothing for a name outside the protocol.
inline std::optional<Op> op_named(const std::string& name) { return enum_named(name, kEveryOp); }
inline void to_json(nlohmann::json& j, Op op) { j = name_of(op); }

struct FactReport {
  std::string name;
  bool ok = false;
  std::string detail;
};

// A case of the correctness run: running until it finishes (then nothing
// else is known: the program stopped in it), and then ok, mismatch (an output
// differs from the oracle's) or bad_output (an output's poison or guards are
// not as they must be). In JSON by name.
enum class CaseStatus { running, ok, mismatch, bad_output };
inline constexpr CaseStatus kEveryCaseStatus[] = {CaseStatus::running, CaseStatus::ok, CaseStatus::mismatch,
                                                  CaseStatus::bad_output};
inline const char* name_of(CaseStatus s) {
  switch (s) {
    case CaseStatus::running:
      return "running";
    case CaseStatus::ok:
      return "ok";
    case CaseStatus::mismatch:
      return "mismatch";
    case CaseStatus::bad_output:
      return "bad_output";
  }
  return "running";  // not reached: every CaseStatus is named above
}
inline void to_json(nlohmann::json& j, CaseStatus s) { j = name_of(s); }
inline void from_json(const nlohmann::json& j, CaseStatus& s) {
  s = enum_from_json(j, kEveryCaseStatus, "case status");
}

struct CaseReport {
  std::string name;
  CaseStatus status = CaseStatus::running;
  std::vector<OutputReport> outputs;
  std::vector<std::string> modified_inputs, written_around_inputs;
  std::optional<Rerun> rerun;
  std::optional<std::vector<FactReport>> facts;  // only for the cases asked with --facts
  bool finished() const { return status != CaseStatus::running; }
};

// A ratio's interval in the report: absent where nothing was timed.
inline const std::optional<RatioInterval>& interval_of(const TimingReport& t, TimedRatio r) {
  switch (r) {
    case TimedRatio::speedup:
      return t.speedup;
    case TimedRatio::fraction_of_peak:
      return t.fraction_of_peak;
    case TimedRatio::fraction_of_library:
      return t.fraction_of_library;
    case TimedRatio::aa:
      return t.aa;
  }
  return t.speedup;  // not reached: every TimedRatio is read above
}

// ---- JSON, one definition for the writer and the reader ----

// Plain members under their own names: one macro writes both directions, and
// reading needs every key (at(), never a default).
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(RatioInterval, median, lo, hi, n)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(RefereePhase, what, start_s, seconds)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Interference, solo_baseline_ms, baseline_ms, ratio, limit, speedup_scale)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(MismatchAt, where, expected, got)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(OutputReport, name, dtype, count, unwritten, mismatches, dims, rtol, atol,
                                   first_unwritten, guard_before_intact, guard_after_intact, max_abs_error,
                                   max_rel_error, first)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Rerun, output, changed, count)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(FactReport, name, ok, detail)

namespace protocol_detail {

// An optional member is written as null when absent (an interval with no
// samples) or left out (a rate nothing measured), as the schema says.
template <typename T>
void put_or_null(nlohmann::json& j, const char* key, const std::optional<T>& v) {
  j[key] = v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}
template <typename T>
void put_if(nlohmann::json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}
template <typename T>
void get_optional(const nlohmann::json& j, const char* key, std::optional<T>& v) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) {
    v.reset();
    return;
  }
  v = it->get<T>();
}

}  // namespace protocol_detail

inline void to_json(nlohmann::json& j, const TimingReport& t) {
  using namespace protocol_detail;
  j = {{"rounds", t.rounds},
       {"warmup_ms", t.warmup_ms},
       {"wall_s", t.wall_s},
       {"total_s", t.total_s},
       {"converged", t.converged},
       {"decided_early", t.decided_early},
       {"extended", t.extended},
       {"bytes_moved", t.bytes_moved},
       {"flops", t.flops},
       {"batch", t.batch},
       {"baseline_batch", t.baseline_batch},
       {"overhead_ms", t.overhead_ms},
       {"fresh_input_batches", t.fresh_input_batches},
       {"verified_launches", t.verified_launches},
       {"baseline_ms", t.baseline_ms},
       {"candidate_ms", t.candidate_ms},
       {"baseline_gbps", t.baseline_gbps},
       {"candidate_gbps", t.candidate_gbps},
       {"peak_gflops", t.peak_gflops},
       {"samples",
        {{"speedup", t.speedup_samples}, {"fraction_of_peak", t.fraction_of_peak_samples}, {"aa", t.aa_samples}}},
       {"interference", t.interference}};
  put_or_null(j, "speedup", t.speedup);
  put_or_null(j, "aa", t.aa);
  put_or_null(j, "fraction_of_peak", t.fraction_of_peak);
  put_if(j, "memcpy_ms", t.memcpy_ms);
  put_if(j, "memcpy_gbps", t.memcpy_gbps);
  if (t.memcpy_over_host_link) j["memcpy_over_host_link"] = true;
  put_if(j, "library", t.library);
  put_if(j, "library_ms", t.library_ms);
  if (t.library) put_or_null(j, "fraction_of_library", t.fraction_of_library);
  put_if(j, "baseline_gflops", t.baseline_gflops);
  put_if(j, "candidate_gflops", t.candidate_gflops);
  put_if(j, "library_gflops", t.library_gflops);
}

// Throws nlohmann::json::exception naming the key that is missing or of the wrong type.
inline void from_json(const nlohmann::json& j, TimingReport& t) {
  using namespace protocol_detail;
  j.at("rounds").get_to(t.rounds);
  j.at("warmup_ms").get_to(t.warmup_ms);
  j.at("wall_s").get_to(t.wall_s);
  j.at("total_s").get_to(t.total_s);
  j.at("converged").get_to(t.converged);
  j.at("decided_early").get_to(t.decided_early);
  j.at("extended").get_to(t.extended);
  j.at("bytes_moved").get_to(t.bytes_moved);
  j.at("flops").get_to(t.flops);
  j.at("batch").get_to(t.batch);
  j.at("baseline_batch").get_to(t.baseline_batch);
  j.at("overhead_ms").get_to(t.overhead_ms);
  j.at("fresh_input_batches").get_to(t.fresh_input_batches);
  j.at("verified_launches").get_to(t.verified_launches);
  j.at("baseline_ms").get_to(t.baseline_ms);
  j.at("candidate_ms").get_to(t.candidate_ms);
  j.at("baseline_gbps").get_to(t.baseline_gbps);
  j.at("candidate_gbps").get_to(t.candidate_gbps);
  j.at("peak_gflops").get_to(t.peak_gflops);
  const auto& samples = j.at("samples");
  samples.at("speedup").get_to(t.speedup_samples);
  samples.at("fraction_of_peak").get_to(t.fraction_of_peak_samples);
  samples.at("aa").get_to(t.aa_samples);
  j.at("interference").get_to(t.interference);
  j.at("speedup");  // present, possibly null
  j.at("aa");
  j.at("fraction_of_peak");
  get_optional(j, "speedup", t.speedup);
  get_optional(j, "aa", t.aa);
  get_optional(j, "fraction_of_peak", t.fraction_of_peak);
  get_optional(j, "memcpy_ms", t.memcpy_ms);
  get_optional(j, "memcpy_gbps", t.memcpy_gbps);
  t.memcpy_over_host_link = j.value("memcpy_over_host_link", false);
  get_optional(j, "library", t.library);
  get_optional(j, "library_ms", t.library_ms);
  get_optional(j, "fraction_of_library", t.fraction_of_library);
  get_optional(j, "baseline_gflops", t.baseline_gflops);
  get_optional(j, "candidate_gflops", t.candidate_gflops);
  get_optional(j, "library_gflops", t.library_gflops);
}

inline void to_json(nlohmann::json& j, const CaseReport& c) {
  j = {{"case", c.name}, {"status", c.status}};
  if (!c.finished()) return;
  j["outputs"] = c.outputs;
  j["modified_inputs"] = c.modified_inputs;
  j["written_around_inputs"] = c.written_around_inputs;
  protocol_detail::put_if(j, "rerun", c.rerun);
  protocol_detail::put_if(j, "facts", c.facts);
}
// A finished case must carry every part; a running one only its name.
inline void from_json(const nlohmann::json& j, CaseReport& c) {
  j.at("case").get_to(c.name);
  j.at("status").get_to(c.status);
  if (!c.finished()) return;
  j.at("outputs").get_to(c.outputs);
  j.at("modified_inputs").get_to(c.modified_inputs);
  j.at("written_around_inputs").get_to(c.written_around_inputs);
  protocol_detail::get_optional(j, "rerun", c.rerun);
  protocol_detail::get_optional(j, "facts", c.facts);
}

}  // namespace memlabs
