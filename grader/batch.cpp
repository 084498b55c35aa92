#include "batch.hpp"

#include <fcntl.h>
#include <unistd.h>  // environ, among others

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "child_process.hpp"
#include "content_hash.hpp"
#include "gpu_lock.hpp"
#include "session.hpp"
#include "sha256.hpp"
#include "text.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace grader {
namespace {

constexpr const char* kRowSchema = "cuda-memory-labs/batch-result/1";

// Strict UTF-8 (see utf8_sequence_length), and no NUL.
bool is_utf8_text(const std::string& s) {
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t len = s[i] == '\0' ? 0 : utf8_sequence_length(s, i);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

// The child grader sees only what grading needs: no tokens, no instructor
// variables, a HOME and TMPDIR of its own.
std::vector<std::string> scrubbed_environment(const fs::path& home, const BatchSettings& settings) {
  std::vector<std::string> env = {"HOME=" + home.string(), "TMPDIR=" + home.string(), "LANG=C", "LC_ALL=C"};
  const char* path = std::getenv("PATH");
  env.push_back(std::string("PATH=") + (path ? path : "/usr/local/bin:/usr/bin:/bin"));
  for (char** e = environ; *e; ++e) {
    const std::string kv = *e;
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

}  // namespace

std::string result_file_stem(const std::string& id) {
  const bool plain =
      !id.empty() && id.size() <= 100 && id[0] != '-' && id[0] != '.' && std::all_of(id.begin(), id.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
      });
  if (plain) return id;
  return "id-" + sha256_hex(id).substr(0, 24);
}

std::vector<Submission> discover_submissions(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw std::runtime_error("no submissions folder at " + dir.string());
  std::vector<fs::directory_entry> entries;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) entries.push_back(*it);
  if (ec) throw std::runtime_error("cannot list " + dir.string() + ": " + ec.message());
  std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.path() < b.path(); });

  std::vector<Submission> out;
  std::map<std::string, std::size_t> seen;
  for (const auto& e : entries) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name[0] == '.') continue;
    Submission s;
    const fs::file_status st = fs::symlink_status(e.path(), ec);
    if (fs::is_symlink(st)) {
      s.id = name;
      s.problem = "a symbolic link, not a submission (links could point anywhere)";
    } else if (fs::is_directory(st)) {
      s.id = name;
      s.folder = e.path();
      s.source = e.path() / "kernel.cu";
      if (!fs::exists(fs::symlink_status(s.source, ec))) s.problem = "missing: the folder has no kernel.cu";
    } else if (fs::is_regular_file(st) && e.path().extension() == ".cu") {
      s.id = e.path().stem().string();
      s.source = e.path();
    } else {
      s.id = name;
      s.problem = "not a submission: expected a folder holding kernel.cu or a file <id>.cu";
    }
    if (s.id.empty()) continue;
    if (auto it = seen.find(s.id); it != seen.end()) {
      s.problem = "duplicate id: " + out[it->second].id + " is already a submission (" + name + " skipped)";
      s.id += " (" + name + ")";
    }
    seen.emplace(s.id, out.size());
    out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end(), [](const Submission& a, const Submission& b) { return a.id < b.id; });
  return out;
}

std::string check_submission_file(const fs::path& file) {
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(file, ec);
  if (!fs::exists(st)) return "missing: " + file.filename().string() + " does not exist";
  if (fs::is_symlink(st)) return file.filename().string() + " is a symbolic link (links could point anywhere)";
  if (!fs::is_regular_file(st)) return file.filename().string() + " is not a regular file";
  const auto size = fs::file_size(file, ec);
  if (ec) return "cannot read " + file.filename().string() + ": " + ec.message();
  if (size == 0) return "empty: " + file.filename().string() + " has no content";
  if (size > kMaxSubmissionBytes)
    return "too large: " + std::to_string(size) + " bytes (a submission may have at most 1 MiB)";
  std::ifstream in(file, std::ios::binary);
  if (!in) return "cannot read " + file.filename().string();
  const std::string text = read_file(file).value_or("");
  if (text.find('\0') != std::string::npos)
    return "binary: " + file.filename().string() + " holds NUL bytes, not source code";
  if (!is_utf8_text(text)) return "binary: " + file.filename().string() + " is not UTF-8 text";
  return "";
}

std::string submission_hash(const fs::path& file) {
  std::error_code ec;
  if (file.empty() || !fs::is_regular_file(fs::symlink_status(file, ec))) return "";
  return ContentHash().add_file(file).hex();
}

int hints_used(const fs::path& folder, const std::string& lab_id) {
  if (folder.empty()) return 0;
  const fs::path file = folder / ".grader" / "progress.json";
  std::error_code ec;
  if (!fs::is_regular_file(fs::symlink_status(file, ec)) || fs::file_size(file, ec) > kMaxSubmissionBytes) return 0;
  try {
    const json j = json::parse(read_file(file).value_or(""));
    const json& hints = j.at("labs").at(lab_id).at("hints_shown");
    int total = 0;
    for (const auto& [step, count] : hints.items())
      if (count.is_number_integer() && count.get<int>() > 0) total += count.get<int>();
    return total;
  } catch (const std::exception&) {
    return 0;
  }
}

void write_file_atomically(const fs::path& file, const std::string& content) {
  std::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  const fs::path tmp = file.string() + ".tmp." + std::to_string(::getpid()) + "." +
                       std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id()));
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error("cannot write " + tmp.string() + ": " + std::strerror(errno));
  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int e = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw std::runtime_error("cannot write " + tmp.string() + ": " + std::strerror(e));
    }
    done += static_cast<std::size_t>(n);
  }
  const bool synced = ::fsync(fd) == 0;
  ::close(fd);
  if (!synced || ::rename(tmp.c_str(), file.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    throw std::runtime_error("cannot write " + file.string() + ": " + std::strerror(e));
  }
}

json row_to_json(const BatchRow& r, const std::string& lab_id, const std::string& isolation) {
  return {{"schema", kRowSchema},
          {"id", r.id},
          {"lab", lab_id},
          {"status", r.status},
          {"reason", r.reason},
          {"submission_hash", r.hash},
          {"hints_used", r.hints_used},
          {"isolation", isolation},
          {"grader_exit_code", r.grader_exit_code},
          {"seconds", r.seconds},
          {"report", r.report}};
}

BatchRow row_from_json(const json& j) {
  if (!j.is_object() || j.value("schema", "") != kRowSchema) throw std::runtime_error("not a batch result");
  BatchRow r;
  r.id = j.at("id").get<std::string>();
  r.status = j.at("status").get<std::string>();
  r.reason = j.value("reason", "");
  r.hash = j.value("submission_hash", "");
  r.hints_used = j.value("hints_used", 0);
  r.grader_exit_code = j.value("grader_exit_code", -1);
  r.seconds = j.value("seconds", 0.0);
  r.report = j.value("report", json());
  return r;
}

BatchEnvironment prepare_batch_environment(const Session& session, const std::string& mode,
                                           const std::vector<fs::path>& hidden) {
  BatchEnvironment b;
  b.isolation.hide = hidden;
  // The whole course: its solutions, its history, its builds. The submission's
  // program needs none of it (its own folder is shown to it on its own).
  b.isolation.hide.push_back(session.course.root());
  if (const char* home = std::getenv("HOME")) b.isolation.hide.emplace_back(home);
  b.isolation.hide.emplace_back(fs::temp_directory_path());
  const std::string limits = "CPU time, file size and process count limited (RLIMIT_CPU, RLIMIT_FSIZE, RLIMIT_NPROC)";
  // Without bwrap: as root the submission's program runs as nobody, which can
  // still read what others may read; as anyone else it runs as that user.
  std::string without_bwrap;
  if (::getuid() == 0) {
    without_bwrap = "the submission's program runs as user nobody, so it reads only what any user may read";
    std::error_code ec;
    const fs::path solutions = session.course.root() / "solutions";
    const auto perms = fs::status(solutions, ec).permissions();
    if (!ec && (perms & fs::perms::others_read) != fs::perms::none)
      without_bwrap += "; WARNING: " + solutions.string() + " is readable by others (chmod -R o-rwx it, or use bwrap)";
  } else {
    without_bwrap =
        "the submission's program runs as the grading user and can read and write whatever it can "
        "(use bwrap, or grade as root so that it runs as nobody)";
  }
  if (mode == "rlimits") {
    b.isolation.mode = "rlimits";
    b.isolation_note = "limited isolation (rlimits only, as asked): " + limits + "; " + without_bwrap;
  } else {
    const BwrapStatus bw = probe_bwrap();
    if (bw.works) {
      b.isolation.mode = "bwrap";
      b.isolation_note =
          "bwrap sandbox: read-only /, no network, own user and pid namespaces; the course, $HOME, /tmp "
          "and the submissions and results folders hidden; " +
          limits;
    } else if (mode == "bwrap") {
      throw EnvironmentError("--isolation bwrap: " + bw.reason);
    } else {
      b.isolation.mode = "rlimits";
      b.isolation_note = "limited isolation: " + bw.reason + "; falling back to " + limits + "; " + without_bwrap;
    }
  }
  const DeviceInfo& d = session.device;
  b.environment = {{"gpu", d.present ? json(d.name) : json(nullptr)},
                   {"driver", d.present ? json(cuda_version_string(d.driver_version)) : json(nullptr)},
                   {"cuda", session.toolchain.version},
                   {"arch", session.builder->settings().arch},
                   {"isolation", b.isolation.mode}};
  if (!d.present) b.environment["no_gpu_reason"] = d.reason;
  return b;
}

BatchRow grade_submission(const Submission& s, const BatchSettings& settings) {
  BatchRow row;
  row.id = s.id;
  row.hash = submission_hash(s.source);
  row.hints_used = hints_used(s.folder, settings.lab_id);
  if (!settings.no_gpu_reason.empty()) {
    row.status = "not_graded";
    row.reason = "no GPU (" + settings.no_gpu_reason + ")";
    return row;
  }
  const auto t0 = std::chrono::steady_clock::now();

  // private/ holds the child's copy of the submission and its messages;
  // home/ is the child's HOME and TMPDIR. Nothing of either is bound into a
  // sandbox, and the grade itself comes back through a pipe.
  std::string tmpl = (fs::temp_directory_path() / "grader-batch-XXXXXX").string();
  if (!::mkdtemp(tmpl.data())) {
    row.status = "error";
    row.reason = std::string("cannot create a temporary folder: ") + std::strerror(errno);
    return row;
  }
  const fs::path private_dir = tmpl;
  const fs::path home = private_dir / "home";
  const fs::path copy = private_dir / "kernel.cu";
  std::error_code ec;
  fs::create_directories(home, ec);
  fs::copy_file(s.source, copy, ec);
  if (ec) {
    row.status = "error";
    row.reason = "cannot copy the submission: " + ec.message();
    fs::remove_all(private_dir, ec);
    return row;
  }

  ChildOptions o;
  o.argv = {settings.grader_exe.string(), "--json", "--root", settings.course_root.string()};
  if (!settings.arch.empty()) o.argv.insert(o.argv.end(), {"--arch", settings.arch});
  o.argv.insert(o.argv.end(), {"grade", settings.lab, "--submission", copy.string()});
  if (settings.all_steps) o.argv.push_back("--all");
  o.cwd = home;
  o.env = scrubbed_environment(home, settings);
  o.timeout_s = settings.timeout_s;
  o.capture_stdout_bytes = 32u << 20;
  o.stderr_file = private_dir / "grade.err";
  const ChildResult r = run_child(o);
  row.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (r.interrupted) {
    fs::remove_all(private_dir, ec);
    throw Interrupted();
  }
  row.grader_exit_code = r.exited ? r.exit_code : -1;
  json out;
  try {
    out = json::parse(r.stdout_text);
  } catch (const std::exception&) {
  }
  const std::string schema = out.is_object() ? out.value("schema", "") : "";
  if (schema == "cuda-memory-labs/grade/1") {
    row.status = "graded";
    row.report = std::move(out);
  } else if (schema == "cuda-memory-labs/error/1") {
    row.status = "error";
    row.reason = out.value("error", std::string("the grader reported an error"));
  } else {
    row.status = "error";
    const std::string err = without_trailing_blanks(read_head(o.stderr_file, 600));
    row.reason = "the grader did not finish (" +
                 (r.timed_out ? "timed out after " + std::to_string(static_cast<int>(settings.timeout_s)) + " s"
                              : r.describe()) +
                 ")" + (err.empty() ? "" : ": " + err);
  }
  fs::remove_all(private_dir, ec);
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
      write_file_atomically(row_file(row.id),
                            row_to_json(row, settings.lab_id, settings.isolation.mode).dump(2) + "\n");
    std::lock_guard<std::mutex> lock(mutex);
    rows[i] = std::move(row);
    if (progress) progress(rows[i]);
  };

  const auto work = [&] {
    for (std::size_t i; !interrupted && (i = next++) < subs.size();) {
      const Submission& s = subs[i];
      const fs::path file = row_file(s.id);
      const std::string hash = submission_hash(s.source);
      if (fs::exists(file)) {
        try {
          const json j = json::parse(read_file(file).value_or(""));
          BatchRow old = row_from_json(j);
          // Errors and rows not graded are retried: they say nothing of what the code deserves.
          if (j.value("lab", "") == settings.lab_id && old.hash == hash && old.id == s.id && old.status != "error" &&
              old.status != "not_graded") {
            old.reused = true;
            finish(i, std::move(old));
            continue;
          }
        } catch (const std::exception&) {
        }
      }
      BatchRow row;
      std::string problem = s.problem.empty() ? check_submission_file(s.source) : s.problem;
      if (!problem.empty()) {
        row.id = s.id;
        row.status = "rejected";
        row.reason = problem;
        row.hash = hash;
        row.hints_used = hints_used(s.folder, settings.lab_id);
        finish(i, std::move(row));
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
  // folder is gone): the error is raised once every thread has stopped.
  std::exception_ptr failure;
  const auto guarded = [&] {
    try {
      work();
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex);
      if (!failure) failure = std::current_exception();
      interrupted = true;
    }
  };
  const int jobs = std::max(1, std::min<int>(settings.jobs, static_cast<int>(subs.size())));
  std::vector<std::thread> threads;
  for (int t = 1; t < jobs; ++t) threads.emplace_back(guarded);
  guarded();
  for (auto& t : threads) t.join();
  if (failure) std::rethrow_exception(failure);
  if (interrupted) throw Interrupted();
  // Every row once more, from this process's memory, now that no submission's
  // process is left: a file one of them changed while it ran is put right.
  for (const auto& row : rows)
    write_file_atomically(row_file(row.id), row_to_json(row, settings.lab_id, settings.isolation.mode).dump(2) + "\n");
  return rows;
}

}  // namespace grader
