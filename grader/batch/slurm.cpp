#include "slurm.hpp"

#include <sys/vfs.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <regex>
#include <stdexcept>

#include "child_process.hpp"
#include "course.hpp"
#include "json_text.hpp"
#include "result_signature.hpp"
#include "text.hpp"
#include "toolchain.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace grader {
namespace {

constexpr const char* kSchema = "cuda-memory-labs/slurm-batch/1";

// A word the shell reads back unchanged, whatever the path holds.
std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// #SBATCH lines are not parsed by a shell: a value with a space, quote or
// newline would be cut or misread, so such values are refused up front.
bool safe_directive_value(const std::string& v) {
  for (char c : v)
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '"' || c == '\'' || c == '#' || c == '\\') return false;
  return true;
}

}  // namespace

json slurm_batch_to_json(const SlurmBatch& b) {
  json subs = json::array();
  for (const auto& s : b.submissions)
    subs.push_back(
        {{"id", s.id}, {"source", s.source.string()}, {"folder", s.folder.string()}, {"problem", s.problem}});
  return {{"schema", kSchema},
          {"out", b.out.string()},
          {"course_root", b.course_root.string()},
          {"grader", b.grader_exe.string()},
          {"submissions_dir", b.submissions_dir.string()},
          {"lab", b.lab},
          {"lab_id", b.lab_id},
          {"arch", b.arch},
          {"isolation", name_of(b.isolation)},
          {"timeout_s", b.timeout_s},
          {"hint_penalty", b.hint_penalty},
          {"all_steps", b.all_steps},
          {"slurm",
           {{"partition", b.job.partition},
            {"account", b.job.account},
            {"time", b.job.time},
            {"gres", b.job.gres},
            {"job_name", b.job.job_name},
            {"cpus_per_task", b.job.cpus_per_task},
            {"mem", b.job.mem},
            {"max_running", b.job.max_running}}},
          {"submissions", subs}};
}

SlurmBatch load_slurm_batch(const fs::path& out) {
  const fs::path file = out / "slurm" / "batch.json";
  if (!fs::is_regular_file(file))
    throw std::runtime_error("no Slurm batch in " + out.string() + " (" + file.string() +
                             " is missing: run `grader batch SUBMISSIONS --lab LAB --slurm --out " + out.string() +
                             "` first)");
  try {
    const json j = json::parse(read_file(file).value_or(""));
    if (j.value("schema", "") != kSchema) throw std::runtime_error(std::string("schema is not ") + kSchema);
    SlurmBatch b;
    b.out = j.at("out").get<std::string>();
    b.course_root = j.at("course_root").get<std::string>();
    b.grader_exe = j.at("grader").get<std::string>();
    b.submissions_dir = j.value("submissions_dir", "");
    b.lab = j.at("lab").get<std::string>();
    b.lab_id = j.at("lab_id").get<std::string>();
    b.arch = j.value("arch", "");
    b.isolation = isolation_asked_named(j.at("isolation").get<std::string>());
    b.timeout_s = j.value("timeout_s", 1800.0);
    b.hint_penalty = j.value("hint_penalty", 0.0);
    b.all_steps = j.value("all_steps", false);
    const json& s = j.at("slurm");
    b.job.partition = s.value("partition", "");
    b.job.account = s.value("account", "");
    b.job.time = s.value("time", "");
    b.job.gres = s.value("gres", "none");
    b.job.job_name = s.value("job_name", "");
    b.job.cpus_per_task = s.value("cpus_per_task", 0);
    b.job.mem = s.value("mem", "");
    b.job.max_running = s.value("max_running", 0);
    for (const auto& e : j.at("submissions")) {
      Submission sub;
      sub.id = e.at("id").get<std::string>();
      sub.source = e.value("source", "");
      sub.folder = e.value("folder", "");
      sub.problem = e.value("problem", "");
      b.submissions.push_back(std::move(sub));
    }
    return b;
  } catch (const std::exception& e) {
    throw std::runtime_error("cannot read " + file.string() + ": " + e.what());
  }
}

std::string check_slurm_settings(const SlurmJobSettings& s) {
  if (!s.time.empty() && !std::regex_match(s.time, std::regex(R"((\d+-)?\d{1,3}(:\d{2}){0,2})")))
    return "--time must look like HH:MM:SS, MM:SS, MM or D-HH:MM:SS, got \"" + s.time + "\"";
  if (s.gres.empty()) return "--gres must be a GRES such as gpu:1 or gpu:a100:1, or none";
  for (const auto& [name, v] : {std::pair<const char*, const std::string&>{"--partition", s.partition},
                                {"--account", s.account},
                                {"--gres", s.gres},
                                {"--time", s.time},
                                {"--mem", s.mem}})
    if (!safe_directive_value(v))
      return std::string(name) + " must not hold spaces, quotes, '#' or '\\', got \"" + v + "\"";
  if (!s.mem.empty() && !std::regex_match(s.mem, std::regex(R"(\d+[KMGT]?)")))
    return "--mem must be a size such as 16G or 8000M, got \"" + s.mem + "\"";
  if (s.cpus_per_task < 1 || s.cpus_per_task > 256)
    return "--cpus-per-task must be 1..256, got " + std::to_string(s.cpus_per_task);
  if (s.max_running < 0) return "--max-running must be >= 0 (0: no limit), got " + std::to_string(s.max_running);
  return "";
}

std::vector<std::string> local_path_warnings(const SlurmBatch& b) {
  // statfs magic numbers (linux/magic.h) of file systems that only this machine sees.
  static const std::vector<std::pair<unsigned long, const char*>> local = {
      {0xEF53, "ext4"},          {0x58465342, "xfs"}, {0x9123683E, "btrfs"}, {0x01021994, "tmpfs"},
      {0x794C7630, "overlayfs"}, {0x2FC12FC1, "zfs"}, {0xF2F52010, "f2fs"},  {0x4d44, "vfat"}};
  std::vector<std::string> warnings;
  const std::vector<std::pair<std::string, fs::path>> paths = {{"the course", b.course_root},
                                                               {"the submissions", b.submissions_dir},
                                                               {"the grader", b.grader_exe},
                                                               {"the output folder", b.out}};
  for (const auto& [what, path] : paths) {
    struct statfs st {};
    if (path.empty() || ::statfs(path.c_str(), &st) != 0) continue;
    for (const auto& [magic, name] : local)
      if (static_cast<unsigned long>(st.f_type) == magic) {
        warnings.push_back(what + " (" + path.string() + ") is on a " + name +
                           " file system of this machine: a compute node sees it only if it is this machine. "
                           "On a cluster, put the course, the submissions, the grader and --out on a shared file "
                           "system (home, project or scratch space), or the tasks fail with \"no such file\"");
        break;
      }
  }
  return warnings;
}

std::string slurm_job_script(const SlurmBatch& b) {
  const fs::path logs = b.out / "slurm" / "logs";
  std::string s =
      "#!/bin/bash\n"
      "# Written by `grader batch --slurm`: one array task per submission (tasks.txt).\n"
      "# Each task grades its submission and writes " +
      (b.out / "results").string() +
      "/<id>.json;\n"
      "# then: grader collect " +
      b.out.string() + " --lab " + b.lab_id + "\n";
  s += "#SBATCH --job-name=" + (b.job.job_name.empty() ? "grade-" + b.lab_id : b.job.job_name) + "\n";
  s += "#SBATCH --array=0-" + std::to_string(b.submissions.empty() ? 0 : b.submissions.size() - 1) +
       (b.job.max_running > 0 ? "%" + std::to_string(b.job.max_running) : std::string()) + "\n";
  s += "#SBATCH --output=" + (logs / "%A_%a.out").string() + "\n";
  s += "#SBATCH --ntasks=1\n";
  if (b.job.cpus_per_task > 0) s += "#SBATCH --cpus-per-task=" + std::to_string(b.job.cpus_per_task) + "\n";
  if (!b.job.mem.empty()) s += "#SBATCH --mem=" + b.job.mem + "\n";
  if (!b.job.partition.empty()) s += "#SBATCH --partition=" + b.job.partition + "\n";
  if (!b.job.account.empty()) s += "#SBATCH --account=" + b.job.account + "\n";
  if (!b.job.time.empty()) s += "#SBATCH --time=" + b.job.time + "\n";
  if (b.job.gres != "none") s += "#SBATCH --gres=" + b.job.gres + "\n";
  s += "set -u\n";
  std::string cmd = "exec " + shell_quote(b.grader_exe.string()) + " --root " + shell_quote(b.course_root.string());
  if (!b.arch.empty()) cmd += " --arch " + shell_quote(b.arch);
  cmd += " batch-task " + shell_quote(b.out.string()) + " \"$SLURM_ARRAY_TASK_ID\"";
  s += cmd + "\n";
  return s;
}

std::string slurm_task_list(const SlurmBatch& b) {
  std::string t;
  for (const auto& s : b.submissions) {
    const fs::path p = !s.folder.empty() ? s.folder : !s.source.empty() ? s.source : b.submissions_dir / s.id;
    t += p.string() + "\n";
  }
  return t;
}

fs::path write_slurm_batch(const SlurmBatch& b) {
  const fs::path dir = b.out / "slurm";
  fs::create_directories(dir / "logs");
  fs::create_directories(b.out / "results");
  make_result_key(b.out);
  write_file_atomically(dir / "batch.json", json_text(slurm_batch_to_json(b)) + "\n");
  write_file_atomically(dir / "tasks.txt", slurm_task_list(b));
  const fs::path script = dir / "job.sbatch";
  write_file_atomically(script, slurm_job_script(b));
  fs::permissions(script, fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec,
                  fs::perm_options::add);
  return script;
}

std::string submit_slurm_batch(const SlurmBatch& b, const fs::path& script) {
  const fs::path dir = b.out / "slurm";
  ChildOptions o;
  o.argv = {"sbatch", "--parsable", script.string()};
  o.cwd = dir;
  o.timeout_s = 120;
  o.stdout_file = dir / ".sbatch.out";
  o.stderr_file = dir / ".sbatch.err";
  const ChildResult r = run_child(o);
  const std::string out = first_line(read_head(o.stdout_file, 4096));
  const std::string err = read_head(o.stderr_file, 2000);
  std::error_code ec;
  fs::remove(o.stdout_file, ec);
  fs::remove(o.stderr_file, ec);
  if (!r.started)
    throw EnvironmentError("cannot run sbatch (" + r.start_error +
                           "); is Slurm installed on this machine? The job script is " + script.string() +
                           ": submit it yourself with `sbatch " + script.string() + "`");
  // --parsable prints "jobid" or "jobid;cluster".
  const std::string id = out.substr(0, out.find(';'));
  if (!r.exited || r.exit_code != 0 || id.empty() || id.find_first_not_of("0123456789") != std::string::npos)
    throw EnvironmentError("sbatch failed (" + r.describe() + ")" + (err.empty() ? "" : ": " + first_line(err)) +
                           "; the job script is " + script.string());
  write_file_atomically(dir / "job_id", id + "\n");
  return id;
}

std::size_t slurm_task_index(const SlurmBatch& b, const std::string& given) {
  std::string text = given;
  if (text.empty())
    if (const char* e = std::getenv("SLURM_ARRAY_TASK_ID")) text = e;
  if (text.empty())
    throw CourseError("no task index: give INDEX, or run inside a Slurm array task (SLURM_ARRAY_TASK_ID)");
  if (text.find_first_not_of("0123456789") != std::string::npos || text.size() > 9)
    throw CourseError("task index must be a number, got \"" + text + "\"");
  const std::size_t i = std::stoul(text);
  if (i >= b.submissions.size())
    throw CourseError("task index " + text + " is past the last submission (" + std::to_string(b.submissions.size()) +
                      " in " + (b.out / "slurm" / "tasks.txt").string() + ")");
  return i;
}

BatchRow missing_slurm_row(const SlurmBatch& b, std::size_t index) {
  const Submission& s = b.submissions.at(index);
  BatchRow row;
  row.id = s.id;
  row.status = RowStatus::not_graded;  // no grade was given: never a 0
  row.reason = "no result: task never ran or failed";
  row.hash = submission_hash(s.source);
  row.hints_used = hints_used(s.folder, b.lab_id);
  const fs::path logs = b.out / "slurm" / "logs";
  fs::path log;
  const std::string job = first_line(read_head(b.out / "slurm" / "job_id", 64));
  if (!job.empty() && fs::exists(logs / (job + "_" + std::to_string(index) + ".out"))) {
    log = logs / (job + "_" + std::to_string(index) + ".out");
  } else {
    // An earlier submission of the same folder: its newest log for this task.
    const std::string suffix = "_" + std::to_string(index) + ".out";
    std::error_code ec;
    fs::file_time_type newest{};
    for (fs::directory_iterator it(logs, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
        const auto t = fs::last_write_time(it->path(), ec);
        if (log.empty() || t > newest) log = it->path(), newest = t;
      }
    }
  }
  if (!log.empty()) {
    row.reason += " (Slurm log: " + log.string() + ")";
  } else {
    row.reason += " (no Slurm log for task " + std::to_string(index) + " in " + logs.string() + ")";
  }
  return row;
}

std::vector<BatchRow> collect_slurm_rows(const SlurmBatch& b, std::size_t* missing) {
  const std::string key = read_result_key(b.out);
  std::vector<BatchRow> rows;
  std::size_t absent = 0;
  for (std::size_t i = 0; i < b.submissions.size(); ++i) {
    const fs::path file = b.out / "results" / (result_file_stem(b.submissions[i].id) + ".json");
    bool found = false, forged = false;
    if (fs::is_regular_file(file)) {
      try {
        const json j = json::parse(read_file(file).value_or(""));
        // Only what a task's grader signed, for this submission of this lab.
        forged = !signature_holds(j, key) || j.value("id", "") != b.submissions[i].id;
        if (!forged && j.value("lab", "") == b.lab_id) {
          rows.push_back(row_from_json(j));
          found = true;
        }
      } catch (const std::exception&) {
      }
    }
    if (!found) {
      rows.push_back(missing_slurm_row(b, i));
      if (forged)
        rows.back().reason = file.string() + " was not written by this batch's grader (no valid signature under " +
                             (b.out / "slurm" / "key").string() + "): grade it again with `grader batch-task " +
                             b.out.string() + " " + std::to_string(i) + "`";
      ++absent;
    }
  }
  if (missing) *missing = absent;
  return rows;
}

void write_gradebooks(const fs::path& out, const std::vector<BatchRow>& rows, const GradebookInfo& info) {
  write_file_atomically(out / "grades.csv", grades_csv(rows, info));
  write_file_atomically(out / "junit.xml", junit_xml(rows, info));
  for (const auto& r : rows)
    write_file_atomically(out / "gradescope" / result_file_stem(r.id) / "results.json",
                          json_text(gradescope_result(r, info)) + "\n");
}

}  // namespace grader
