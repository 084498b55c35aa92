#include "referee_client.hpp"

#include <chrono>
#include <csignal>
#include <optional>

#include "gpu_lock.hpp"
#include "host/isolation.hpp"
#include "phase_log.hpp"
#include "protocol/referee_protocol.hpp"
#include "sealed_run.hpp"
#include "text.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace grader {
namespace {

constexpr std::size_t kShownOutputBytes = 4000;
constexpr std::size_t kMaxResultBytes = 8u << 20;

// Where in the program a request failed, from its phase and case.
std::string where_clause(const std::string& phase, const std::string& case_name) {
  std::string s;
  if (phase == "candidate")
    s = " in your kernel";
  else if (phase == "setup")
    s = " while setting up";
  else if (phase == "facts")
    s = " while the driver checked your program's memory";
  if (!case_name.empty()) s += " (case " + case_name + ")";
  return s;
}

std::string describe_signal(int sig) {
  switch (sig) {
    case SIGSEGV:
      return "crashed with a segmentation fault in host code: a device pointer used on the host, or a host "
             "pointer passed to the GPU?";
    case SIGBUS:
      return "crashed with a bus error in host code";
    case SIGFPE:
      return "crashed with an arithmetic error in host code (integer division by zero?)";
    case SIGABRT:
      return "aborted (an assert, an uncaught exception or a failed CUDA call in host code)";
    case SIGXFSZ:
      return "printed far too much output and was stopped (a printf in a loop?)";
    case SIGXCPU:
      return "used too much CPU time and was stopped";
    case SIGKILL:
      return "was killed from outside (out of memory?)";
    default:
      return "was killed by signal " + std::to_string(sig);
  }
}

// One line for a run the referee could not finish, and whose failure it was.
std::pair<RunCategory, std::string> explain_failure(const memlabs::RunFailureReport& f, const std::string& who,
                                                    double request_timeout_s) {
  using K = memlabs::FailureKind;
  const std::string in_case = f.case_name.empty() ? "" : " (case " + f.case_name + ")";
  if (f.who != memlabs::ServerRole::worker && f.kind != K::no_device)
    return {RunCategory::referee,
            "the referee's own trusted process failed, which is a problem of the grading machine or the "
            "course, not of your code: " +
                f.message};
  switch (f.kind) {
    case K::timeout:
      return {RunCategory::timeout, who + " did not finish within " +
                                        std::to_string(static_cast<int>(request_timeout_s)) + " s and was stopped" +
                                        in_case +
                                        ": an endless loop, or threads waiting at a barrier that others never reach?"};
    case K::crash:
      return {RunCategory::crash, who + " " + describe_signal(f.signal) + in_case};
    case K::exit:
      return {RunCategory::no_result,
              who + " ended (" + (f.ending.empty() ? "?" : f.ending) + ")" + in_case +
                  " before it finished: does the code call exit(), abort() or cudaDeviceReset()?"};
    case K::cuda_error:
      return {RunCategory::cuda_error,
              explain_cuda_error(f.error.value_or(memlabs::ProgramError{}), f.phase, f.case_name, who)};
    case K::protocol:
      return {RunCategory::protocol, who + " broke the protocol with the referee" + in_case + ": " + f.message};
    case K::pause:
      return {RunCategory::error, who + " could not be paused between requests (processes it started kept running)"};
    case K::pause_stuck:
      // One process, none started, that would not stop: held in the kernel, which the program alone cannot arrange.
      return {RunCategory::referee, "the referee could not pause " + who +
                                        " between requests: its one process would not stop within 5 s (held in a "
                                        "driver call); the grading machine's failure, not your code's"};
    case K::no_start:
      return {RunCategory::error, f.message.empty() ? "could not start " + who : f.message};
    case K::no_device:
      return {RunCategory::no_device, "no usable GPU: " + f.message};
    case K::referee:
      return {RunCategory::referee,
              "the referee failed, which is a problem of the grading machine or the course, not of your code: " +
                  f.message};
    case K::usage:
      return {RunCategory::usage, "referee usage error: " + f.message};
    case K::error:
      break;
  }
  return {RunCategory::error,
          who + " failed" + where_clause(f.phase, f.case_name) + ": " + (f.message.empty() ? "an error" : f.message)};
}

}  // namespace

std::string explain_cuda_error(const memlabs::ProgramError& e, const std::string& phase, const std::string& case_name,
                               const std::string& who) {
  const std::string& name = e.name;
  const std::string where = where_clause(phase, case_name);
  if (name == "cudaErrorIllegalAddress")
    return "illegal memory access" + where +
           ": a thread read or wrote outside its buffer. Check the bounds guards at sizes that are not a "
           "multiple of the tile, and the index arithmetic.";
  if (name == "cudaErrorMisalignedAddress")
    return "misaligned address" + where +
           ": a vector load/store (float4, ...) on an address that is not a multiple of its size.";
  if (name == "cudaErrorInvalidConfiguration")
    return "invalid launch configuration" + where +
           ": too many threads per block (max 1024), a zero-sized grid, or more shared memory than a block may have.";
  if (name == "cudaErrorLaunchOutOfResources")
    return "too many resources requested for launch" + where + ": too many registers per thread for this block size.";
  if (name == "cudaErrorIllegalInstruction" || name == "cudaErrorLaunchFailure")
    return "the kernel crashed" + where + " (" + e.message + ")";
  if (name == "cudaErrorAssert") return "a device-side assert() failed" + where + ".";
  return who + " hit " + name + " (" + e.message + ")" + where + " at " + e.call + " [" + e.where + "]";
}

std::vector<std::string> referee_isolation_args(const IsolationSettings& s, double timeout_s) {
  return memlabs::isolation_args(submission_isolation(s, timeout_s));
}

namespace {

// Whether the referee takes its own GPU turns in this call: a timing, outside a
// sandbox (where the grade holds one turn for all its runs: whole_grade_turns()).
bool referee_takes_its_turns(const RefereeCall& call) {
  return call.referee_takes_turns && !whole_grade_turns() && !process_gpu_lock().empty();
}

// The referee's command line: the call's own arguments, then the worker, the
// per-request timeout, where the program's output goes, and the isolation.
// Outside bwrap the program is sealed (sealed_run.hpp): the referee runs a copy
// of it in `sealed`'s folder, behind the seal's launcher.
std::vector<std::string> referee_argv(const RefereeCall& call, const fs::path& program_out, const fs::path& program_err,
                                      std::optional<SealedRun>& sealed) {
  std::vector<std::string> argv = {call.referee.string()};
  for (auto& a : memlabs::request_arguments(call.request)) argv.push_back(std::move(a));
  memlabs::Isolation isolation = submission_isolation(isolation_from_environment(), call.request_timeout_s);
  fs::path worker = call.worker;
  if (!worker.empty() && isolation.mode != memlabs::IsolationMode::bwrap) {
    sealed.emplace();
    worker = sealed->copy_program(worker);
    isolation.seal = memlabs::seal_command(seal_launcher().string(), sealed->spec(isolation, {}, {}), {});
  }
  if (!worker.empty()) argv.insert(argv.end(), {"--worker", worker.string()});
  argv.insert(argv.end(), {"--timeout", std::to_string(call.request_timeout_s), "--stdout", program_out.string(),
                           "--stderr", program_err.string()});
  for (auto& a : memlabs::isolation_args(isolation)) argv.push_back(std::move(a));
  if (referee_takes_its_turns(call)) argv.insert(argv.end(), {"--gpu-lock", process_gpu_lock().string()});
  return argv;
}

// The referee's own phases (common/referee/referee_phases.hpp) under the grade's line
// for this call, for `--timings`: placed from the moment the referee started.
void note_referee_phases(const std::vector<memlabs::RefereePhase>& phases,
                         std::chrono::steady_clock::time_point started, const std::string& label) {
  const auto at = [&](double s) {
    return started + std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(s));
  };
  for (const auto& p : phases) note_phase(label + p.what, at(p.start_s), at(p.start_s + p.seconds), 1);
}

// The typed parts of the document (common/protocol/referee_protocol.hpp): a key the
// referee did not write is named in the sentence returned, never read as a default.
std::optional<std::string> read_typed_parts(RunnerOutcome& out) {
  try {
    out.phases = out.result.at("phases").get<std::vector<memlabs::RefereePhase>>();
    if (out.result.contains("timing")) out.timing = out.result["timing"].get<memlabs::TimingReport>();
    if (out.result.contains("timed_failure"))
      out.timed_failure = out.result["timed_failure"].get<memlabs::TimedFailure>();
    if (out.result.contains("failure")) out.failure = out.result["failure"].get<memlabs::RunFailureReport>();
    // A referee that refused its arguments says so before it has a mode.
    const bool ran =
        out.result.contains("mode") && out.result["mode"].get<memlabs::RefereeMode>() == memlabs::RefereeMode::run;
    if (ran && out.result.contains("cases")) out.cases = out.result["cases"].get<std::vector<memlabs::CaseReport>>();
    if (ran && out.result.contains("output_elements") && out.result["output_elements"].is_object())
      for (const auto& [name, n] : out.result["output_elements"].items())
        if (n.is_number() && n.get<double>() > 0) out.output_elements[name] = n.get<double>();
  } catch (const std::exception& e) {
    return "the referee's result does not read as this grader's protocol (" + std::string(e.what()) +
           "): rebuild the course with this grader";
  }
  return std::nullopt;
}

// The outcome a finished referee's status says, with its failure explained
// where it names one.
RunnerOutcome with_status(RunnerOutcome out, const RefereeCall& call) {
  const auto fail = [&](RunCategory category, const std::string& message) {
    out.category = category;
    out.message = message;
    return out;
  };
  memlabs::RefereeStatus status;
  try {
    status = out.result.at("status").get<memlabs::RefereeStatus>();
  } catch (const std::exception& e) {
    return fail(RunCategory::referee, "the referee's result has no status this grader knows (" + std::string(e.what()) +
                                          "): rebuild the course with this grader");
  }
  switch (status) {
    case memlabs::RefereeStatus::ok:
      return out;
    case memlabs::RefereeStatus::usage:
    case memlabs::RefereeStatus::no_device:
    case memlabs::RefereeStatus::failed:
      break;  // its failure says what
    case memlabs::RefereeStatus::error:
      return fail(RunCategory::referee,
                  "the referee ended before it said what failed: the grading machine's "
                  "failure, not your code's");
    // The caller reads the cases or the timing for the detail.
    case memlabs::RefereeStatus::mismatch:
      return fail(RunCategory::mismatch, "");
    case memlabs::RefereeStatus::timed_failure:
      if (!out.timed_failure)
        return fail(RunCategory::referee, "the referee's timed failure says not what failed: rebuild the course");
      return fail(RunCategory::timed_failure, "");
    case memlabs::RefereeStatus::interference:
      return fail(RunCategory::interference, "");
  }
  if (!out.failure)
    return fail(RunCategory::referee, "the referee's result says it failed, not what failed: rebuild the course");
  const auto [category, message] = explain_failure(*out.failure, call.who, call.request_timeout_s);
  return fail(category, message);
}

}  // namespace

void make_timing_call(RefereeCall& call, const std::string& case_name, std::uint64_t seed, double cap_s,
                      double lab_timeout_s) {
  call.request.mode = memlabs::RefereeMode::time;
  call.request.cases = {case_name};
  call.request.seed = seed;
  call.request.cap_s = cap_s;
  call.request_timeout_s = lab_timeout_s;
  // Room for a few requests that may each take the lab's timeout, and for the
  // timed rounds, which stop at the cap.
  call.timeout_s = 3 * lab_timeout_s + 6 * cap_s + 60;
  call.referee_takes_turns = true;
}

// How long a referee that takes its own GPU turns may wait for them, beyond
// its own limit: other grades' timings on a shared GPU, one after another.
constexpr double kTurnWaitAllowanceS = 3600;

namespace {

// The referee run as a child of this grader, in its GPU turn (or in turns it
// takes itself); `started` is when it started, after any wait for the grader's turn.
ChildResult run_referee(const RefereeCall& call, const fs::path& program_out, const fs::path& program_err,
                        std::chrono::steady_clock::time_point& started) {
  std::optional<SealedRun> sealed;  // every process of the program ends with this call
  ChildOptions o;
  o.argv = referee_argv(call, program_out, program_err, sealed);
  o.cwd = call.work_dir;
  // A referee that takes its own turns may wait for them inside its run: the
  // wait is not the program's time, so the limit leaves room for it. Its every
  // request to the program still has the lab's own limit.
  const bool referee_turns = referee_takes_its_turns(call);
  o.timeout_s = call.timeout_s + (referee_turns ? kTurnWaitAllowanceS : 0);
  o.capture_stdout_bytes = kMaxResultBytes;
  o.stderr_file = call.work_dir / "referee-stderr.txt";
  o.cancel = call.cancel;
  // Turns on this GPU, machine-wide (gpu_lock.hpp); the wait is not the program's time.
  std::optional<ProcessGpuTurn> turn;
  if (!referee_turns) turn.emplace(call.gpu_use);
  started = std::chrono::steady_clock::now();
  return run_child(o);
}

}  // namespace

RunnerOutcome call_referee(const RefereeCall& call) {
  RunnerOutcome out;
  fs::create_directories(call.work_dir);
  const fs::path program_out = call.work_dir / "program-stdout.txt";
  const fs::path program_err = call.work_dir / "program-stderr.txt";
  std::error_code ec;
  fs::remove(program_out, ec);
  fs::remove(program_err, ec);
  std::chrono::steady_clock::time_point started;
  out.child = run_referee(call, program_out, program_err, started);
  out.stdout_head = read_head(program_out, kShownOutputBytes);
  out.stderr_head = read_head(program_err, kShownOutputBytes);

  const auto fail = [&](RunCategory category, const std::string& message) {
    out.category = category;
    out.message = message;
    return out;
  };
  if (!out.child.started) return fail(RunCategory::referee, "could not start the referee: " + out.child.start_error);
  if (out.child.interrupted) throw Interrupted();
  if (out.child.cancelled) return fail(RunCategory::cancelled, "stopped: no check needed its answer");
  if (out.child.timed_out)
    return fail(RunCategory::timeout,
                call.who + " did not finish within " + std::to_string(static_cast<int>(call.timeout_s)) +
                    " s in all and was stopped: an endless loop, or a kernel far slower than the baseline?");
  try {
    out.result = json::parse(out.child.stdout_text);
  } catch (const std::exception&) {
    const std::string err = read_head(call.work_dir / "referee-stderr.txt", 600);
    return fail(RunCategory::referee, "the referee ended (" + out.child.describe() + ") without a result" +
                                          (err.empty() ? std::string() : ": " + err));
  }
  // The version first: a document of another protocol is read no further.
  const json* protocol = out.result.is_object() && out.result.contains("protocol") ? &out.result["protocol"] : nullptr;
  if (!protocol || *protocol != memlabs::kRefereeProtocol)
    return fail(RunCategory::referee, "the referee speaks another protocol than this grader (" +
                                          (protocol ? protocol->dump() : std::string("none")) +
                                          "): rebuild the course with this grader");
  if (auto problem = read_typed_parts(out)) return fail(RunCategory::referee, *problem);
  // A timing's referee starts beside the correctness run's: its phases say whose they are.
  note_referee_phases(out.phases, started,
                      call.request.mode == memlabs::RefereeMode::time ? "timing referee: " : "referee: ");
  return with_status(out, call);
}

}  // namespace grader
