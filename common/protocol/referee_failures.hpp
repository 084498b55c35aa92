// The failures of a referee's run, part of its result (referee_protocol.hpp,
// which includes this): why a run could not finish ("failure": RunFailureReport)
// and why a timing's launches cannot be counted ("timed_failure": TimedFailure).
// Written by the referee and read by the grader with every key required; what
// the submission's program said of its own failure travels inside as data.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "named_enum.hpp"
#include "server_role.hpp"

namespace memlabs {

// How a run failed. The program's doing: timeout (no answer to a request in
// time), crash (ended by a signal), exit (ended in the middle of a request),
// cuda_error and error (it answered that a CUDA call, or something else,
// failed), protocol (it answered outside the protocol), pause (its processes
// would not all stop between requests), no_start (it could not be started).
// Not the program's: pause_stuck (its one process held in the kernel), no_device,
// referee (the referee itself failed), usage (the referee was called wrongly).
enum class FailureKind {
  timeout,
  crash,
  exit,
  cuda_error,
  error,
  protocol,
  pause,
  pause_stuck,
  no_start,
  no_device,
  referee,
  usage
};
inline constexpr FailureKind kEveryFailureKind[] = {
    FailureKind::timeout,  FailureKind::crash,     FailureKind::exit,    FailureKind::cuda_error,
    FailureKind::error,    FailureKind::protocol,  FailureKind::pause,   FailureKind::pause_stuck,
    FailureKind::no_start, FailureKind::no_device, FailureKind::referee, FailureKind::usage};
inline const char* name_of(FailureKind k) {
  switch (k) {
    case FailureKind::timeout:
      return "timeout";
    case FailureKind::crash:
      return "crash";
    case FailureKind::exit:
      return "exit";
    case FailureKind::cuda_error:
      return "cuda_error";
    case FailureKind::error:
      return "error";
    case FailureKind::protocol:
      return "protocol";
    case FailureKind::pause:
      return "pause";
    case FailureKind::pause_stuck:
      return "pause_stuck";
    case FailureKind::no_start:
      return "no_start";
    case FailureKind::no_device:
      return "no_device";
    case FailureKind::referee:
      return "referee";
    case FailureKind::usage:
      return "usage";
  }
  return "referee";  // not reached: every FailureKind is named above
}
inline void to_json(nlohmann::json& j, FailureKind k) { j = name_of(k); }
inline void from_json(const nlohmann::json& j, FailureKind& k) { k = enum_from_json(j, kEveryFailureKind, "failure"); }

// What the program said of its own failure (a reply that was not ok): the CUDA
// error's name when it was one, its message, the call and where in the program.
// The program's words, shown as data.
struct ProgramError {
  std::string name, message, call, where;
};

struct RunFailureReport {
  FailureKind kind = FailureKind::referee;
  std::string message;
  ServerRole who = ServerRole::worker;  // whose run: the submission's program or the referee's trusted server
  std::string phase;                    // of the request: setup, candidate, baseline, library, facts, ...
  std::string case_name;                // "case" in JSON
  std::string op;                       // the request (referee_protocol.hpp's Op, by name)
  std::string ending;                   // how the process ended, in words, once it had
  std::vector<std::string> recent;      // the last messages it sent
  int signal = 0;                       // crash: the signal
  std::optional<ProgramError> error;    // cuda_error, error: what the program said
};

// A failure of `kind` with only its message (the referee's own, a start, a pause).
inline RunFailureReport failure_of(FailureKind kind, std::string message) {
  RunFailureReport f;
  f.kind = kind;
  f.message = std::move(message);
  return f;
}

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ProgramError, name, message, call, where)

inline void to_json(nlohmann::json& j, const RunFailureReport& f) {
  j = {{"kind", f.kind},      {"message", f.message},
       {"who", f.who},        {"phase", f.phase},
       {"case", f.case_name}, {"op", f.op},
       {"ending", f.ending},  {"recent", f.recent},
       {"signal", f.signal},  {"error", f.error ? nlohmann::json(*f.error) : nlohmann::json(nullptr)}};
}
// Throws nlohmann::json::exception naming a key that is missing or of the wrong type.
inline void from_json(const nlohmann::json& j, RunFailureReport& f) {
  j.at("kind").get_to(f.kind);
  j.at("message").get_to(f.message);
  j.at("who").get_to(f.who);
  j.at("phase").get_to(f.phase);
  j.at("case").get_to(f.case_name);
  j.at("op").get_to(f.op);
  j.at("ending").get_to(f.ending);
  j.at("recent").get_to(f.recent);
  j.at("signal").get_to(f.signal);
  if (j.at("error").is_null())
    f.error.reset();
  else
    f.error = j.at("error").get<ProgramError>();
}

// Why the candidate's timed launches cannot be counted (result["timed_failure"]),
// as the referee found when it checked a batch of them (common/referee/timing.cuh): an
// output wrong against the baseline's, unwritten after the reply, still being
// written when the reply came (unfinished), written before the request was sent,
// a guard zone around an output overwritten, or an input changed.
enum class TimedFailureKind { mismatch, unwritten, unfinished, written_early, canary, modified_input };
inline constexpr TimedFailureKind kEveryTimedFailureKind[] = {
    TimedFailureKind::mismatch,      TimedFailureKind::unwritten, TimedFailureKind::unfinished,
    TimedFailureKind::written_early, TimedFailureKind::canary,    TimedFailureKind::modified_input};
inline const char* name_of(TimedFailureKind k) {
  switch (k) {
    case TimedFailureKind::mismatch:
      return "mismatch";
    case TimedFailureKind::unwritten:
      return "unwritten";
    case TimedFailureKind::unfinished:
      return "unfinished";
    case TimedFailureKind::written_early:
      return "written_early";
    case TimedFailureKind::canary:
      return "canary";
    case TimedFailureKind::modified_input:
      return "modified_input";
  }
  return "mismatch";  // not reached: every TimedFailureKind is named above
}
inline void to_json(nlohmann::json& j, TimedFailureKind k) { j = name_of(k); }
inline void from_json(const nlohmann::json& j, TimedFailureKind& k) {
  k = enum_from_json(j, kEveryTimedFailureKind, "timed failure");
}
struct TimedFailure {
  TimedFailureKind kind = TimedFailureKind::mismatch;
  std::string buffer;       // the output it concerns (the input, for modified_input)
  std::size_t count = 0;    // its elements (the places sampled, for a sampled scan)
  std::size_t found = 0;    // of them: wrong (mismatch), unwritten (unwritten, unfinished), written (written_early)
  std::string first;        // where the first of them is, when known
  nlohmann::json expected;  // mismatch: the first wrong element's values, as value_json writes them
  nlohmann::json got;
  bool sampled = false;              // unfinished: seen at places sampled across every output
  bool before = false;               // canary: the guard zone before the output (else the one after it)
  std::size_t round = 0;             // the round of the timing it happened in (0: the warm-up)
  std::size_t verified_batches = 0;  // batches on fresh inputs that were right before this one
};

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(TimedFailure, kind, buffer, count, found, first, expected, got, sampled, before,
                                   round, verified_batches)

}  // namespace memlabs
