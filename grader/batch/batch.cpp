// `grader batch` itself: the isolation it can offer on this machine, one
// submission graded by a child grader in a private folder with a scrubbed
// environment, and the batch run over threads, resuming from the rows already
// written. Which entries are submissions is batch_submissions.cpp's; the
// result files are batch_results.cpp's.
#include "batch.hpp"

#include <unistd.h>  // getuid

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include "child_grade.hpp"
#include "child_process.hpp"
#include "gpu_lock.hpp"
#include "json_text.hpp"
#include "protocol/named_enum.hpp"
#include "sealed_run.hpp"
#include "session.hpp"
#include "text.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace grader {
namespace {

// The child grader sees only what grading needs: no tokens, no instructor
// variables, a HOME and TMPDIR of its own.
std::vector<std::string> scrubbed_environment(const fs::path& home, const BatchSettings& settings) {
  std::vector<std::string> env = {"HOME=" + home.string(), "TMPDIR=" + home.string(), "LANG=C", "LC_ALL=C"};
  const char* path = std::getenv("PATH");
  env.push_back(std::string("PATH=") + (path ? path : "/usr/local/bin:/usr/bin:/bin"));
  for (const auto& kv : memlabs::this_process_environment()) {
    // GRADER_GPU_LOCK_DIR: the child must take its GPU turns where every other grade does.
    if (starts_with(kv, "CUDA_") || starts_with(kv, "NVIDIA_") || starts_with(kv, "LD_LIBRARY_PATH=") ||
        starts_with(kv, std::string(kGpuLockDirVar) + "="))
      env.push_back(kv);
  }

  IsolationSettings iso = settings.isolation;
  iso.writable.push_back(home);
  for (auto& kv : isolation_environment(iso)) env.push_back(std::move(kv));
  return env;
}

std::string without_trailing_blanks(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// private/ holds the child's copy of the submission and its messages;
// home/ is the child's HOME and TMPDIR. Nothing of either is bound into a
// sandbox, and the grade itself comes back through a pipe. Empty, with the
// row's error set, when it cannot be made.
std::optional<fs::path> make_private_folder(const Submission& s, BatchRow& row) {
  std::string tmpl = (fs::temp_directory_path() / "grader-batch-XXXXXX").string();
  if (!::mkdtemp(tmpl.data())) {
    row.status = RowStatus::error;
    row.reason = std::string("cannot create a temporary folder: ") + std::strerror(errno);
    return std::nullopt;
  }
  const fs::path private_dir = tmpl;
  std::error_code ec;
  fs::create_directories(private_dir / "home", ec);
  fs::copy_file(s.source, private_dir / "kernel.cu", ec);
  if (ec) {
    row.status = RowStatus::error;
    row.reason = "cannot copy the submission: " + ec.message();
    fs::remove_all(private_dir, ec);
    return std::nullopt;
  }
  return private_dir;
}

ChildOptions child_grader(const fs::path& private_dir, const BatchSettings& settings) {
  const fs::path home = private_dir / "home";
  ChildOptions o;
  ChildGradeCall call;
  call.grader = settings.grader_exe;
  call.course_root = settings.course_root;
  call.lab = settings.lab;
  call.submission = private_dir / "kernel.cu";
  call.arch = settings.arch;
  call.all_steps = settings.all_steps;
  o.argv = child_grade_argv(call);
  o.cwd = home;
  o.env = scrubbed_environment(home, settings);
  o.timeout_s = settings.timeout_s;
  o.capture_stdout_bytes = 32u << 20;
  o.stderr_file = private_dir / "grade.err";
  return o;
}

// The row from what the child grader printed: its grade, its error, or why it did not finish.
void read_child_grade(const ChildResult& r, const ChildOptions& o, const BatchSettings& settings, BatchRow& row) {
  row.grader_exit_code = r.exited ? r.exit_code : -1;
  json out;
  try {
    out = json::parse(r.stdout_text);
  } catch (const std::exception&) {
  }
  const std::string schema = out.is_object() ? out.value("schema", "") : "";
  if (schema == "cuda-memory-labs/grade/1") {
    try {
      set_report(row, std::move(out));
    } catch (const std::exception& e) {
      row.status = RowStatus::error;
      row.reason = "the grader's report does not read as this grader's (" + std::string(e.what()) + ")";
      return;
    }
    row.status = RowStatus::graded;
    if (auto why = not_graded_reason(*row.report)) {
      row.status = RowStatus::not_graded;
      row.reason = *why;
    }
  } else if (schema == "cuda-memory-labs/error/1") {
    row.status = RowStatus::error;
    row.reason = out.value("error", std::string("the grader reported an error"));
  } else {
    row.status = RowStatus::error;
    // A grade that ran out of time says most in its last lines (what it was waiting for); one that failed, in its first.
    const std::string err =
        without_trailing_blanks(r.timed_out ? read_tail(o.stderr_file, 600) : read_head(o.stderr_file, 600));
    row.reason = "the grader did not finish (" +
                 (r.timed_out ? "timed out after " + std::to_string(static_cast<int>(settings.timeout_s)) + " s"
                              : r.describe()) +
                 ")" + (err.empty() ? "" : ": " + err);
  }
}

// The row of an earlier run, when it holds for these bytes of this lab.
// Errors and rows not graded are retried: they say nothing of what the code deserves.
std::optional<BatchRow> reusable_row(const fs::path& file, const Submission& s, const std::string& hash,
                                     const std::string& lab_id) {
  if (!fs::exists(file)) return std::nullopt;
  try {
    const json j = json::parse(read_file(file).value_or(""));
    BatchRow old = row_from_json(j);
    if (j.value("lab", "") == lab_id && old.hash == hash && old.id == s.id && old.status != RowStatus::error &&
        old.status != RowStatus::not_graded) {
      old.reused = true;
      return old;
    }
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

BatchRow rejected_row(const Submission& s, const std::string& problem, const std::string& hash,
                      const std::string& lab_id) {
  BatchRow row;
  row.id = s.id;
  row.status = RowStatus::rejected;
  row.reason = problem;
  row.hash = hash;
  row.hints_used = hints_used(s.folder, lab_id);
  return row;
}

// Runs `work` on `jobs` threads (this one among them). An exception in one
// stops the others (through `stop`) and is raised once every thread has stopped.
void run_on_threads(int jobs, const std::function<void()>& work, std::atomic<bool>& stop) {
  std::mutex mutex;
  std::exception_ptr failure;
  const auto guarded = [&] {
    try {
      work();
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex);
      if (!failure) failure = std::current_exception();
      stop = true;
    }
  };
  std::vector<std::thread> threads;
  for (int t = 1; t < jobs; ++t) threads.emplace_back(guarded);
  guarded();
  for (auto& t : threads) t.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace

BatchSettings batch_settings(const Session& session, const std::string& lab, const std::string& lab_id,
                             const fs::path& out, const IsolationSettings& isolation, bool all_steps) {
  BatchSettings settings;
  settings.course_root = session.course.root();
  settings.grader_exe = fs::read_symlink("/proc/self/exe");
  settings.lab = lab;
  settings.lab_id = lab_id;
  settings.arch = session.builder->settings().arch;
  settings.out = out;
  settings.all_steps = all_steps;
  settings.isolation = isolation;
  if (!session.device.present) settings.no_gpu_reason = session.device.reason;
  return settings;
}

BatchCounts count_rows(const std::vector<BatchRow>& rows) {
  BatchCounts c;
  for (const auto& r : rows) {
    c.graded += r.status == RowStatus::graded;
    c.rejected += r.status == RowStatus::rejected;
    c.errors += r.status == RowStatus::error;
    c.not_graded += r.status == RowStatus::not_graded;
  }
  return c;
}

const char* name_of(IsolationAsked asked) {
  switch (asked) {
    case IsolationAsked::automatic:
      return "auto";
    case IsolationAsked::bwrap:
      return "bwrap";
    case IsolationAsked::rlimits:
      return "rlimits";
  }
  return "auto";  // not reached: every IsolationAsked is named above
}

IsolationAsked isolation_asked_named(const std::string& name) {
  if (const auto asked = memlabs::enum_named(name, kEveryIsolationAsked)) return *asked;
  throw CourseError("--isolation must be auto, bwrap or rlimits, got \"" + name + "\"");
}

BatchEnvironment prepare_batch_environment(const Session& session, IsolationAsked asked,
                                           const std::vector<fs::path>& hidden) {
  BatchEnvironment b;
  b.isolation.hide = hidden;
  // The whole course: its solutions, its history, its builds. The submission's
  // program needs none of it (its own folder is shown to it on its own).
  b.isolation.hide.push_back(session.course.root());
  if (const char* home = std::getenv("HOME")) b.isolation.hide.emplace_back(home);
  b.isolation.hide.emplace_back(fs::temp_directory_path());
  const std::string limits = "CPU time, file size and process count limited (RLIMIT_CPU, RLIMIT_FSIZE, RLIMIT_NPROC)";
  // Without bwrap every process of a submission is sealed (sealed_run.hpp):
  // a Landlock allow-list, and as root a user of its own. Without Landlock the
  // allow-list cannot hold, and nothing is graded for credit.
  const std::string without_bwrap =
      std::string("nvcc, the submission's program and the program under ncu and compute-sanitizer run sealed: ") +
      (::geteuid() == 0 ? "each as a user id of its own (no file, no other process), " : "as the grading user, ") +
      "reading only the system, the toolkit and their own folder and writing only that folder (Landlock " +
      std::to_string(memlabs::landlock_abi()) + ")";
  const std::string refusal = seal_refusal(IsolationSettings{memlabs::IsolationMode::rlimits, {}, {}});
  if (asked == IsolationAsked::rlimits) {
    if (!refusal.empty()) throw EnvironmentError(refusal);
    b.isolation.mode = memlabs::IsolationMode::rlimits;
    b.isolation_note = "limited isolation (rlimits only, as asked): " + limits + "; " + without_bwrap;
  } else {
    const BwrapStatus bw = probe_bwrap();
    if (bw.works) {
      b.isolation.mode = memlabs::IsolationMode::bwrap;
      b.isolation_note =
          "bwrap sandbox: an empty root with only the system's folders, the toolkit and the run's own folder "
          "mounted (read-only but its own), no network, own user and pid namespaces; the course, $HOME, the "
          "submissions and results folders absent, /tmp its own; " +
          limits;
    } else if (asked == IsolationAsked::bwrap) {
      throw EnvironmentError("--isolation bwrap: " + bw.reason);
    } else {
      if (!refusal.empty()) throw EnvironmentError(bw.reason + "; and " + refusal);
      b.isolation.mode = memlabs::IsolationMode::rlimits;
      b.isolation_note = "limited isolation: " + bw.reason + "; falling back to " + limits + "; " + without_bwrap;
    }
  }
  const DeviceInfo& d = session.device;
  b.environment = {{"gpu", d.present ? json(d.name) : json(nullptr)},
                   {"driver", d.present ? json(cuda_version_string(d.driver_version)) : json(nullptr)},
                   {"cuda", session.toolchain.version},
                   {"arch", session.builder->settings().arch},
                   {"isolation", memlabs::name_of(b.isolation.mode)}};
  if (!d.present) b.environment["no_gpu_reason"] = d.reason;
  return b;
}

namespace {

// A grade stopped from outside (a Slurm job cancelled or out of time, Ctrl-C) leaves
// no report: its last lines on stderr say what it was doing or waiting for (the GPU,
// another grade's tool run), for the log. Made printable: a build's messages quote the submission.
void say_what_it_was_doing(const fs::path& grade_stderr) {
  const std::string text = without_trailing_blanks(read_tail(grade_stderr, 1200));
  if (text.empty()) return;
  std::cerr << "the grade was stopped; its last words:\n";
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) std::cerr << "  " << line << "\n";
}

// One child grade of the submission into `row`; false when it could not start
// (the row then says why). Throws Interrupted.
bool grade_once(const Submission& s, const BatchSettings& settings, BatchRow& row, bool static_only) {
  const std::optional<fs::path> private_dir = make_private_folder(s, row);
  if (!private_dir) return false;
  ChildOptions o = child_grader(*private_dir, settings);
  if (static_only) o.env->push_back("GRADER_NO_GPU=1");
  const ChildResult r = run_child(o);
  std::error_code ec;
  if (r.interrupted) {
    say_what_it_was_doing(o.stderr_file);
    fs::remove_all(*private_dir, ec);
    throw Interrupted();
  }
  clear_report(row);
  row.reason.clear();
  read_child_grade(r, o, settings, row);
  fs::remove_all(*private_dir, ec);
  return true;
}

// Without a GPU nothing is scored, except what no GPU could change: a
// submission that does not build, or whose first step fails a static check,
// has 0 points on any GPU, and the instructor sees why now. Any other row is
// not graded (no score, never a 0).
void grade_without_a_gpu(const Submission& s, const BatchSettings& settings, BatchRow& row) {
  if (!grade_once(s, settings, row, /*static_only=*/true)) return;
  if (row.status == RowStatus::error) return;  // the grade did not finish: say so
  const bool build_failed = row.report && row.report->exit_code == kExitBuildFailed;
  const bool first_fails = row.report && !row.report->steps.empty() && row.report->steps[0].status == Outcome::fail;
  if (build_failed || first_fails) {
    row.status = RowStatus::graded;
    row.reason.clear();
    return;
  }
  row.status = RowStatus::not_graded;
  row.reason = "no GPU (" + settings.no_gpu_reason + ")";
  clear_report(row);
}

}  // namespace

BatchRow grade_submission(const Submission& s, const BatchSettings& settings) {
  BatchRow row;
  row.id = s.id;
  row.hash = submission_hash(s.source);
  row.hints_used = hints_used(s.folder, settings.lab_id);
  const auto t0 = std::chrono::steady_clock::now();
  if (!settings.no_gpu_reason.empty()) {
    grade_without_a_gpu(s, settings, row);
    row.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return row;
  }
  // A step that a tool could not grade (it could not attach, the machine was
  // busy) is the grading machine's failure, never the student's: the row is
  // graded once more before it is left not graded for a later run of the batch.
  std::string first_reason;
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (!grade_once(s, settings, row, /*static_only=*/false)) return row;
    if (row.status != RowStatus::not_graded) break;
    if (attempt == 0) first_reason = row.reason;
  }
  if (row.status == RowStatus::not_graded && !first_reason.empty() && first_reason != row.reason)
    row.reason += " (graded twice; the first time: " + first_reason + ")";
  row.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return row;
}

std::vector<BatchRow> run_batch(const std::vector<Submission>& subs, const BatchSettings& settings,
                                const std::function<void(const BatchRow&)>& progress) {
  std::vector<BatchRow> rows(subs.size());
  std::mutex mutex;
  std::atomic<std::size_t> next{0};
  std::atomic<bool> interrupted{false};
  const fs::path results = settings.out / "results";
  fs::create_directories(results);
  const auto row_file = [&](const std::string& id) { return results / (result_file_stem(id) + ".json"); };

  const auto finish = [&](std::size_t i, BatchRow row) {
    if (!row.reused)
      write_file_atomically(
          row_file(row.id),
          json_text(row_to_json(row, settings.lab_id, memlabs::name_of(settings.isolation.mode))) + "\n");
    std::lock_guard<std::mutex> lock(mutex);
    rows[i] = std::move(row);
    if (progress) progress(rows[i]);
  };

  const auto work = [&] {
    for (std::size_t i; !interrupted && (i = next++) < subs.size();) {
      const Submission& s = subs[i];
      const std::string hash = submission_hash(s.source);
      if (auto old = reusable_row(row_file(s.id), s, hash, settings.lab_id)) {
        finish(i, std::move(*old));
        continue;
      }
      std::string problem = s.problem.empty() ? check_submission_file(s.source) : s.problem;
      if (!problem.empty()) {
        finish(i, rejected_row(s, problem, hash, settings.lab_id));
        continue;
      }
      try {
        finish(i, grade_submission(s, settings));
      } catch (const Interrupted&) {
        interrupted = true;
      }
    }
  };
  // A row that cannot be written stops the batch (the disk is full or the
  // folder is gone).
  run_on_threads(std::max(1, std::min<int>(settings.jobs, static_cast<int>(subs.size()))), work, interrupted);
  if (interrupted) throw Interrupted();
  // Every row once more, from this process's memory, now that no submission's
  // process is left: a file one of them changed while it ran is put right.
  for (const auto& row : rows)
    write_file_atomically(
        row_file(row.id),
        json_text(row_to_json(row, settings.lab_id, memlabs::name_of(settings.isolation.mode))) + "\n");
  return rows;
}

std::optional<std::string> not_graded_reason(const GradeReport& grade) {
  if (grade.exit_code != kExitEnvironment) return std::nullopt;
  // The first check skipped for a reason of its own (an advisory skip is stood in for).
  for (const auto& step : grade.steps)
    for (const auto& c : step.checks)
      if (c.status == Outcome::skipped && !c.advisory)
        return "a step was not graded: " + name_of(c.kind) + ": " + c.summary;
  return "a step was not graded (the grader exited " + std::to_string(kExitEnvironment) + ")";
}

}  // namespace grader
