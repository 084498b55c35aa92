#include "runner_client.hpp"

#include <csignal>
#include <fstream>
#include <optional>
#include <random>

#include "sandbox.hpp"

namespace fs = std::filesystem;

namespace grader {
namespace {

constexpr std::size_t kShownOutputBytes = 4000;

std::string make_nonce() {
  std::random_device rd;
  const unsigned long long v = (static_cast<unsigned long long>(rd()) << 32) ^ rd();
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", v);
  return buf;
}

std::string where_clause(const nlohmann::json& error) {
  std::string s;
  const std::string phase = error.value("phase", "");
  const std::string c = error.value("case", "");
  if (phase == "candidate") s = " in your kernel";
  else if (phase == "baseline") s = " in the baseline kernel";
  else if (phase == "timing") s = " while timing";
  else if (phase == "check") s = " after the kernel ran";
  if (!c.empty()) s += " (case " + c + ")";
  return s;
}

std::string describe_signal(const ChildResult& r) {
  switch (r.signal) {
    case SIGSEGV:
      return "crashed with a segmentation fault in host code: a device pointer used on the host, or a host "
             "pointer passed to the GPU?";
    case SIGBUS: return "crashed with a bus error in host code";
    case SIGFPE: return "crashed with an arithmetic error in host code (integer division by zero?)";
    case SIGABRT: return "aborted (an assert, an uncaught exception or a failed CUDA call in host code)";
    case SIGXFSZ: return "printed far too much output and was stopped (a printf in a loop?)";
    case SIGXCPU: return "used too much CPU time and was stopped";
    case SIGKILL: return "was killed from outside (out of memory?)";
    default: return r.describe();
  }
}

}  // namespace

std::string explain_cuda_error(const nlohmann::json& e, const std::string& who) {
  const std::string name = e.value("name", "");
  const std::string where = where_clause(e);
  if (name == "cudaErrorIllegalAddress")
    return "illegal memory access" + where +
           ": a thread read or wrote outside its buffer. Check the bounds guards at sizes that are not a "
           "multiple of the tile, and the index arithmetic.";
  if (name == "cudaErrorMisalignedAddress")
    return "misaligned address" + where + ": a vector load/store (float4, ...) on an address that is not a multiple of its size.";
  if (name == "cudaErrorInvalidConfiguration")
    return "invalid launch configuration" + where +
           ": too many threads per block (max 1024), a zero-sized grid, or more shared memory than a block may have.";
  if (name == "cudaErrorLaunchOutOfResources")
    return "too many resources requested for launch" + where + ": too many registers per thread for this block size.";
  if (name == "cudaErrorIllegalInstruction" || name == "cudaErrorLaunchFailure")
    return "the kernel crashed" + where + " (" + e.value("message", "") + ")";
  if (name == "cudaErrorAssert") return "a device-side assert() failed" + where + ".";
  if (name == "cudaErrorInsufficientDriver" || name == "cudaErrorNoDevice")
    return "no usable GPU: " + e.value("message", "");
  return who + " hit " + name + " (" + e.value("message", "") + ")" + where + " at " + e.value("call", "") +
         " [" + e.value("where", "") + "]";
}

RunnerOutcome call_runner(const RunnerCall& call) {
  RunnerOutcome out;
  fs::create_directories(call.work_dir);
  const fs::path result_file = call.work_dir / "result.json";
  std::error_code ec;
  fs::remove(result_file, ec);
  const std::string nonce = make_nonce();

  ChildOptions o;
  o.argv = call.prefix;
  o.argv.push_back(call.runner.string());
  o.argv.insert(o.argv.end(), call.args.begin(), call.args.end());
  o.argv.insert(o.argv.end(), {"--result", result_file.string(), "--nonce", nonce});
  o.cwd = call.work_dir;
  o.timeout_s = call.timeout_s;
  o.stdout_file = call.work_dir / "stdout.txt";
  o.stderr_file = call.work_dir / "stderr.txt";
  // Isolated mode (batch grading): limits and sandbox; the lock keeps GPU runs
  // of parallel graders from overlapping, and its wait is not the program's time.
  const IsolationSettings isolation = isolation_from_environment();
  isolate_launch(o, isolation, call.work_dir);
  std::optional<FileLock> gpu_lock;
  if (!isolation.gpu_lock.empty()) gpu_lock.emplace(isolation.gpu_lock);
  out.child = run_child(o);
  gpu_lock.reset();
  if (isolation.mode == "bwrap") undo_sandbox_exit_code(out.child);
  out.stdout_head = read_head(o.stdout_file, kShownOutputBytes);
  out.stderr_head = read_head(o.stderr_file, kShownOutputBytes);

  const auto fail = [&](const std::string& category, const std::string& message) {
    out.category = category;
    out.message = message;
    return out;
  };
  if (!out.child.started) return fail("error", "could not start " + call.who + ": " + out.child.start_error);
  if (out.child.interrupted) throw Interrupted();
  if (out.child.timed_out)
    return fail("timeout", call.who + " did not finish within " + std::to_string(static_cast<int>(call.timeout_s)) +
                               " s and was stopped: an endless loop, or threads waiting at a barrier that others never reach?");
  if (out.child.signaled) return fail("crash", call.who + " " + describe_signal(out.child));

  std::ifstream in(result_file);
  if (!in)
    return fail("no_result", call.who + " exited (" + out.child.describe() +
                                 ") without reporting a result: does the code call exit(), abort() or cudaDeviceReset()?");
  try {
    out.result = nlohmann::json::parse(in);
  } catch (const std::exception&) {
    return fail("forged_result", "the result file was not written by the runner (it is not valid JSON)");
  }
  if (!out.result.is_object() || out.result.value("nonce", "") != nonce)
    return fail("forged_result", "the result file was not written by this run of the runner");

  const std::string status = out.result.value("status", "error");
  if (status == "ok") return out;
  const auto error = out.result.value("error", nlohmann::json::object());
  if (status == "cuda_error") {
    const std::string name = error.value("name", "");
    if (name == "cudaErrorInsufficientDriver" || name == "cudaErrorNoDevice")
      return fail("no_device", explain_cuda_error(error, call.who));
    return fail("cuda_error", explain_cuda_error(error, call.who));
  }
  if (status == "usage") return fail("usage", "runner usage error: " + error.value("message", ""));
  if (status == "bad_output" || status == "mismatch") {
    out.category = status;  // the caller looks at the outputs for the detail
    return out;
  }
  return fail("error", call.who + " failed: " + error.value("message", status));
}

}  // namespace grader
