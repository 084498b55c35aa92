// `grader batch --slurm` and `grader collect` against a real single-node Slurm
// (slurmctld + slurmd + munged on localhost, started and stopped by
// tests/slurm/{start,stop}-local-slurm.sh under a temporary folder). No GPU:
// the job array runs with --gres none, and every task says it could not grade.
// Skipped with the reason when Slurm is not installed or we are not root.
#include <gtest/gtest.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "child_process.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const fs::path kRoot = COURSE_ROOT;
const fs::path kScripts = kRoot / "tests" / "slurm";
const fs::path kSolution = kRoot / "solutions" / "lab07-bank-conflicts" / "kernel.cu";
const fs::path kFixtures = kRoot / "tests" / "fixtures" / "lab07-bank-conflicts";

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

struct ToolRun {
  int exit_code = -1;
  std::string out, err;
  json j;
};

ToolRun run(std::vector<std::string> argv, const fs::path& scratch, double timeout_s = 600) {
  grader::ChildOptions o;
  o.argv = std::move(argv);
  o.timeout_s = timeout_s;
  o.stdout_file = scratch / "stdout";
  o.stderr_file = scratch / "stderr";
  const auto r = grader::run_child(o);
  ToolRun res;
  res.exit_code = r.exited ? r.exit_code : -1;
  res.out = read(o.stdout_file);
  res.err = read(o.stderr_file) + (r.started ? "" : r.start_error);
  try {
    res.j = json::parse(res.out);
  } catch (...) {
  }
  return res;
}

ToolRun grader_run(std::vector<std::string> args, const fs::path& scratch) {
  args.insert(args.begin(), {GRADER_BIN, "--json", "--root", kRoot.string()});
  return run(args, scratch, 900);
}

// Where PATH (plus the sbin folders a non-login shell may lack) has tool.
std::string find_tool(const std::string& tool) {
  std::string path = std::getenv("PATH") ? std::getenv("PATH") : "";
  path += ":/usr/sbin:/sbin:/usr/local/sbin";
  std::istringstream in(path);
  for (std::string d; std::getline(in, d, ':');)
    if (!d.empty() && ::access((fs::path(d) / tool).c_str(), X_OK) == 0) return (fs::path(d) / tool).string();
  return "";
}

std::map<std::string, std::vector<std::string>> csv_rows(const std::string& csv, std::vector<std::string>& header) {
  std::map<std::string, std::vector<std::string>> m;
  std::istringstream in(csv);
  bool first = true;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::vector<std::string> cells;
    std::string cell;
    bool quoted = false;
    for (char c : line) {
      if (c == '"')
        quoted = !quoted;
      else if (c == ',' && !quoted)
        cells.push_back(cell), cell.clear();
      else
        cell += c;
    }
    cells.push_back(cell);
    if (first)
      header = cells, first = false;
    else
      m[cells[0]] = cells;
  }
  return m;
}

std::size_t column(const std::vector<std::string>& header, const std::string& name) {
  for (std::size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return i;
  ADD_FAILURE() << "no column " << name;
  return 0;
}

// solution, skeleton, compile error, empty file: the four kinds of row.
void make_class(const fs::path& dir) {
  write(dir / "correct" / "kernel.cu", read(kSolution));
  write(dir / "skeleton.cu", read(kRoot / "labs" / "lab07-bank-conflicts" / "kernel.cu"));
  write(dir / "compile_error.cu", read(kFixtures / "compile_error.cu"));
  write(dir / "empty" / "kernel.cu", "");
}

class Slurm : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const fs::path& p : {kSolution, kFixtures / "compile_error.cu"})
      if (!fs::exists(p)) GTEST_SKIP() << "needs " << p.string() << " (absent in a published copy)";
    base = fs::temp_directory_path() / ("slurm_test-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(base);
    fs::create_directories(base / "scratch");
    make_class(base / "class");
    ::setenv("GRADER_NO_GPU", "1", 1);
  }
  void TearDown() override {
    // Every daemon this test started goes, also when an assertion failed.
    if (started) {
      const ToolRun r =
          run({"bash", (kScripts / "stop-local-slurm.sh").string(), (base / "cluster").string()}, base / "scratch", 60);
      EXPECT_EQ(r.exit_code, 0) << r.err;
      ::unsetenv("SLURM_CONF");
    }
    if (!base.empty() && !HasFailure()) fs::remove_all(base);
  }

  // Skips (with the reason) where a local cluster cannot be run.
  void start_cluster() {
    for (const char* tool : {"munged", "slurmctld", "slurmd", "sbatch", "squeue", "sinfo", "scancel"})
      if (find_tool(tool).empty())
        GTEST_SKIP() << "Slurm is not installed (" << tool << " not found): apt-get install slurm-wlm munge";
    if (::geteuid() != 0) GTEST_SKIP() << "a local Slurm cluster runs its daemons as root (SlurmUser=root); not root";
    std::string path = std::getenv("PATH") ? std::getenv("PATH") : "";
    ::setenv("PATH", (path + ":/usr/sbin:/sbin").c_str(), 1);
    started = true;  // a half-started cluster is stopped too
    const ToolRun r = run(
        {"bash", (kScripts / "start-local-slurm.sh").string(), (base / "cluster").string(), std::to_string(::getpid())},
        base / "scratch", 120);
    ASSERT_EQ(r.exit_code, 0) << "start-local-slurm.sh failed:\n" << r.out << r.err;
    ::setenv("SLURM_CONF", (base / "cluster" / "slurm.conf").c_str(), 1);
  }

  // True once the job has left the queue and every task wrote its result.
  bool wait_for_job(const std::string& job, std::size_t results, double timeout_s) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    while (std::chrono::steady_clock::now() < end) {
      const ToolRun q = run({find_tool("squeue"), "-h", "-j", job, "-o", "%i %T"}, base / "scratch", 30);
      std::size_t n = 0;
      for (fs::directory_iterator it(base / "out" / "results"), e; it != e; ++it)
        n += it->path().extension() == ".json";
      if (q.exit_code == 0 && q.out.find_first_not_of(" \n") == std::string::npos && n >= results) return true;
      std::this_thread::sleep_for(std::chrono::seconds(2));
    }
    return false;
  }

  fs::path base;
  bool started = false;
};

}  // namespace

TEST_F(Slurm, StaticJobArrayGradesAndCollects) {
  start_cluster();
  if (IsSkipped() || HasFatalFailure()) return;
  const fs::path out = base / "out";
  // The test node is small (its slurm.conf says 100 MB): a CPU and a little memory per task, two tasks at a time.
  const ToolRun b = grader_run(
      {"batch", (base / "class").string(), "--lab", "lab07", "--slurm", "--gres", "none", "--time", "00:20:00",
       "--hint-penalty", "0.5", "--cpus-per-task", "1", "--mem", "64M", "--max-running", "2", "--out", out.string()},
      base / "scratch");
  ASSERT_EQ(b.exit_code, 0) << b.out << b.err;
  ASSERT_EQ(b.j.value("schema", ""), "cuda-memory-labs/slurm-submit/1") << b.out;
  const std::string job = b.j.value("job_id", "");
  ASSERT_FALSE(job.empty()) << b.out;
  EXPECT_EQ(job.find_first_not_of("0123456789"), std::string::npos) << job;
  EXPECT_EQ(b.j["tasks"], 4);
  EXPECT_EQ(read(out / "slurm" / "job_id"), job + "\n");

  const std::string script = read(out / "slurm" / "job.sbatch");
  EXPECT_NE(script.find("#SBATCH --array=0-3%2\n"), std::string::npos) << script;
  EXPECT_NE(script.find("#SBATCH --cpus-per-task=1\n"), std::string::npos) << script;
  EXPECT_NE(script.find("#SBATCH --mem=64M\n"), std::string::npos) << script;
  EXPECT_NE(script.find("#SBATCH --time=00:20:00\n"), std::string::npos) << script;
  EXPECT_NE(script.find("#SBATCH --output=" + (out / "slurm" / "logs" / "%A_%a.out").string() + "\n"),
            std::string::npos)
      << script;
  EXPECT_EQ(script.find("--gres"), std::string::npos) << script;
  EXPECT_EQ(script.find("--partition"), std::string::npos) << script;
  const std::string tasks = read(out / "slurm" / "tasks.txt");
  EXPECT_EQ(tasks, (base / "class" / "compile_error.cu").string() + "\n" + (base / "class" / "correct").string() +
                       "\n" + (base / "class" / "empty").string() + "\n" + (base / "class" / "skeleton.cu").string() +
                       "\n");

  ASSERT_TRUE(wait_for_job(job, 4, 600)) << "the job array did not finish in 10 minutes; slurmctld log:\n"
                                         << read(base / "cluster" / "log" / "slurmctld.log").substr(0, 4000);
  for (int i = 0; i < 4; ++i) {
    const fs::path log = out / "slurm" / "logs" / (job + "_" + std::to_string(i) + ".out");
    EXPECT_TRUE(fs::exists(log)) << log;
    EXPECT_NE(read(log).find("wrote "), std::string::npos) << read(log);
  }

  // No GPU on the node (GRADER_NO_GPU): a task records no score, only why,
  // and collect exits 4 so that nobody mistakes the gradebook for grades. The
  // empty file is rejected before anything needs a GPU; what no GPU could change
  // (a build failure, the skeleton failing step 1's static check) is a 0.
  const ToolRun c = grader_run({"collect", out.string(), "--lab", "lab07"}, base / "scratch");
  ASSERT_EQ(c.exit_code, 4) << c.out << c.err;
  EXPECT_EQ(c.j.value("schema", ""), "cuda-memory-labs/collect/1");
  EXPECT_EQ(c.j["counts"]["graded"], 2) << c.out;
  EXPECT_EQ(c.j["counts"]["not_graded"], 1) << c.out;
  EXPECT_EQ(c.j["counts"]["rejected"], 1) << c.out;
  EXPECT_EQ(c.j["counts"]["missing"], 0) << c.out;
  EXPECT_EQ(c.j["slurm_job_id"], job);

  std::vector<std::string> header;
  auto rows = csv_rows(read(out / "grades.csv"), header);
  ASSERT_EQ(rows.size(), 4u) << read(out / "grades.csv");
  EXPECT_EQ(header.front(), "id");
  const std::size_t notes = column(header, "notes"), total = column(header, "total"), points = column(header, "points");
  for (const auto& [id, r] : rows) EXPECT_EQ(r[total], "10") << id;
  EXPECT_NE(rows["empty"][notes].find("rejected: empty"), std::string::npos) << rows["empty"][notes];
  EXPECT_EQ(rows["empty"][points], "0") << rows["empty"][points];
  EXPECT_NE(rows["correct"][notes].find("not graded: no GPU"), std::string::npos) << rows["correct"][notes];
  EXPECT_EQ(rows["correct"][points], "") << "a score without a GPU";
  EXPECT_EQ(json::parse(read(out / "results" / "correct.json"))["status"], "not_graded");
  EXPECT_NE(rows["compile_error"][notes].find("build failed (kernel): kernel.cu:"), std::string::npos)
      << rows["compile_error"][notes];
  for (const char* id : {"skeleton", "compile_error"}) {
    EXPECT_EQ(rows[id][points], "0") << id;
    EXPECT_EQ(json::parse(read(out / "results" / (std::string(id) + ".json")))["status"], "graded") << id;
  }
  for (const char* id : {"correct", "skeleton", "compile_error", "empty"})
    EXPECT_TRUE(fs::exists(out / "gradescope" / id / "results.json")) << id;
  EXPECT_NE(read(out / "junit.xml").find("compile_error"), std::string::npos);

  // A task that left no result: its row says so and names the task's log.
  fs::remove(out / "results" / "correct.json");
  const ToolRun m = grader_run({"collect", out.string(), "--lab", "lab07"}, base / "scratch");
  ASSERT_EQ(m.exit_code, 4) << m.out << m.err;
  EXPECT_EQ(m.j["counts"]["missing"], 1) << m.out;
  rows = csv_rows(read(out / "grades.csv"), header);
  const std::string why = rows["correct"][notes];
  EXPECT_NE(why.find("no result: task never ran or failed"), std::string::npos) << why;
  EXPECT_NE(why.find((out / "slurm" / "logs" / (job + "_1.out")).string()), std::string::npos) << why;
}

// Needs no cluster: `collect` takes only results a task's grader signed with the batch's key.
// A result written by anything else (a forged row, a signed row moved to another id, a
// signed row edited) counts as no result, and says so; a key others may read is refused.
TEST_F(Slurm, StaticCollectTakesOnlyWhatATaskSigned) {
  const fs::path out = base / "out";
  const ToolRun b =
      grader_run({"batch", (base / "class").string(), "--lab", "7", "--slurm", "--no-submit", "--out", out.string()},
                 base / "scratch");
  ASSERT_EQ(b.exit_code, 0) << b.out << b.err;
  const fs::path key = out / "slurm" / "key";
  ASSERT_TRUE(fs::is_regular_file(key));
  EXPECT_EQ(fs::status(key).permissions() & fs::perms::all, fs::perms::owner_read | fs::perms::owner_write);
  // Task 2 is the empty file: a rejected row, signed, with no GPU or compiler needed.
  const ToolRun t = grader_run({"batch-task", out.string(), "2"}, base / "scratch");
  ASSERT_EQ(t.exit_code, 0) << t.out << t.err;
  const json signed_row = json::parse(read(out / "results" / "empty.json"));
  ASSERT_TRUE(signed_row.contains("signature")) << signed_row.dump();

  json forged = signed_row;  // what a submission that escaped would write for itself
  forged["id"] = "correct";
  forged.erase("signature");
  write(out / "results" / "correct.json", forged.dump());
  json moved = signed_row;  // a valid signature, on another submission's file
  write(out / "results" / "skeleton.json", moved.dump());
  json edited = signed_row;  // a signed file with its verdict changed
  edited["status"] = "graded";
  edited["id"] = "compile_error";
  write(out / "results" / "compile_error.json", edited.dump());

  // Rows without a result are not graded: no score, and collect exits 4.
  const ToolRun c = grader_run({"collect", out.string(), "--lab", "lab07"}, base / "scratch");
  ASSERT_EQ(c.exit_code, 4) << c.out << c.err;
  EXPECT_EQ(c.j["counts"]["missing"], 3) << c.out;
  EXPECT_EQ(c.j["counts"]["not_graded"], 3) << c.out;
  std::vector<std::string> header;
  const auto rows = csv_rows(read(out / "grades.csv"), header);
  const std::size_t notes = column(header, "notes"), points = column(header, "points");
  for (const char* id : {"correct", "skeleton", "compile_error"}) {
    EXPECT_NE(rows.at(id)[notes].find("was not written by this batch's grader"), std::string::npos)
        << id << ": " << rows.at(id)[notes];
    EXPECT_EQ(rows.at(id)[points], "") << id << ": no result is no score, never a 0";
  }
  EXPECT_EQ(rows.at("empty")[notes].find("not written"), std::string::npos) << rows.at("empty")[notes];

  // A key that others may read could sign anything: collect refuses to trust it.
  fs::permissions(key, fs::perms::group_read | fs::perms::others_read, fs::perm_options::add);
  const ToolRun open_key = grader_run({"collect", out.string(), "--lab", "lab07"}, base / "scratch");
  EXPECT_NE(open_key.exit_code, 0) << open_key.out << open_key.err;
  EXPECT_NE((open_key.out + open_key.err).find("cannot be trusted"), std::string::npos) << open_key.out << open_key.err;
}

// Needs no cluster: the script and task list of --no-submit, and collect before any task ran.
TEST_F(Slurm, StaticNoSubmitWritesScriptAndCollectReportsMissing) {
  const fs::path out = base / "out";
  const ToolRun b = grader_run({"batch", (base / "class").string(), "--lab", "7", "--slurm", "--no-submit",
                                "--partition", "gpu", "--account", "cs475", "--time", "1:00:00", "--out", out.string()},
                               base / "scratch");
  ASSERT_EQ(b.exit_code, 0) << b.out << b.err;
  EXPECT_EQ(b.j["submitted"], false);
  EXPECT_TRUE(b.j["job_id"].is_null());
  EXPECT_EQ(b.j["collect"], "grader collect " + out.string() + " --lab lab07");
  const std::string script = read(out / "slurm" / "job.sbatch");
  // The defaults: room for nvcc, and an array that cannot take the whole partition.
  for (const char* line :
       {"#SBATCH --array=0-3%8\n", "#SBATCH --gres=gpu:1\n", "#SBATCH --partition=gpu\n", "#SBATCH --account=cs475\n",
        "#SBATCH --time=1:00:00\n", "#SBATCH --cpus-per-task=4\n", "#SBATCH --mem=16G\n", " batch-task "})
    EXPECT_NE(script.find(line), std::string::npos) << line << " not in\n" << script;
  // This temporary folder is on this machine's own disk: the instructor is told.
  ASSERT_TRUE(b.j["warnings"].is_array()) << b.out;
  bool local_warning = false;
  for (const auto& w : b.j["warnings"])
    local_warning = local_warning || w.get<std::string>().find("file system of this machine") != std::string::npos;
  struct statfs st {};
  if (::statfs(base.c_str(), &st) == 0 && (st.f_type == 0xEF53 || st.f_type == 0x01021994 || st.f_type == 0x58465342 ||
                                           st.f_type == 0x794C7630 || st.f_type == 0x9123683E))
    EXPECT_TRUE(local_warning) << b.out;
  EXPECT_FALSE(fs::exists(out / "slurm" / "job_id"));

  const ToolRun c = grader_run({"collect", out.string(), "--lab", "lab07"}, base / "scratch");
  ASSERT_EQ(c.exit_code, 4) << c.out << c.err;  // nothing graded yet: no score is recorded
  EXPECT_EQ(c.j["counts"]["missing"], 4) << c.out;
  EXPECT_EQ(c.j["counts"]["not_graded"], 4) << c.out;
  EXPECT_EQ(c.j["counts"]["error"], 0) << c.out;
  const ToolRun text =
      run({GRADER_BIN, "--root", kRoot.string(), "collect", out.string(), "--lab", "lab07"}, base / "scratch", 120);
  EXPECT_NE(text.out.find("0 graded, 0 rejected, 4 not graded (no score recorded), 0 errors"), std::string::npos)
      << text.out;
  std::vector<std::string> header;
  const auto rows = csv_rows(read(out / "grades.csv"), header);
  ASSERT_EQ(rows.size(), 4u);
  for (const auto& [id, r] : rows)
    EXPECT_NE(r.back().find("no result: task never ran or failed"), std::string::npos) << id;

  // Wrong use fails with a message and exit code 2.
  const ToolRun wrong_lab = grader_run({"collect", out.string(), "--lab", "lab06"}, base / "scratch");
  EXPECT_EQ(wrong_lab.exit_code, 2) << wrong_lab.out << wrong_lab.err;
  EXPECT_NE((wrong_lab.out + wrong_lab.err).find("holds a batch of lab07"), std::string::npos)
      << wrong_lab.out << wrong_lab.err;
  const ToolRun bad_time = grader_run({"batch", (base / "class").string(), "--lab", "7", "--slurm", "--no-submit",
                                       "--time", "soon", "--out", (base / "out2").string()},
                                      base / "scratch");
  EXPECT_EQ(bad_time.exit_code, 2) << bad_time.out << bad_time.err;
  const ToolRun no_slurm =
      grader_run({"batch", (base / "class").string(), "--lab", "7", "--partition", "gpu"}, base / "scratch");
  EXPECT_EQ(no_slurm.exit_code, 2) << no_slurm.out << no_slurm.err;
  for (const std::vector<std::string>& bad :
       {std::vector<std::string>{"--mem", "lots"}, {"--cpus-per-task", "0"}, {"--max-running", "-1"}}) {
    std::vector<std::string> argv = {"batch", (base / "class").string(), "--lab", "7", "--slurm", "--no-submit",
                                     "--out", (base / "out3").string()};
    argv.insert(argv.end(), bad.begin(), bad.end());
    const ToolRun r = grader_run(argv, base / "scratch");
    EXPECT_EQ(r.exit_code, 2) << bad[0] << ": " << r.out << r.err;
    EXPECT_NE((r.out + r.err).find(bad[0]), std::string::npos) << r.out << r.err;
  }
  const ToolRun no_batch = grader_run({"collect", (base / "nothing").string(), "--lab", "7"}, base / "scratch");
  EXPECT_EQ(no_batch.exit_code, 2) << no_batch.out << no_batch.err;
}
