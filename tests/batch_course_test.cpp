// `grader batch` and `grader gradescope` on a class of lab07 submissions built
// from the fixtures and the solution: right, wrong, crashing, hanging, not
// compiling, empty, binary, huge, and hostile host code (tests/fixtures/batch-lab07).
// Static tests run without a GPU: static steps grade for real, GPU checks are
// skipped. Gpu tests grade everything and need a device (skipped without one).
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "child_process.hpp"
#include "sandbox.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const fs::path kRoot = COURSE_ROOT;
const fs::path kLab = kRoot / "tests" / "fixtures" / "lab07-bank-conflicts";
const fs::path kHostile = kRoot / "tests" / "fixtures" / "batch-lab07";

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

struct GraderRun {
  int exit_code = -1;
  json out;
  std::string raw, err;
};

GraderRun run_grader(const std::vector<std::string>& args, bool no_gpu, const fs::path& scratch) {
  grader::ChildOptions o;
  o.argv = {GRADER_BIN, "--json", "--root", kRoot.string()};
  o.argv.insert(o.argv.end(), args.begin(), args.end());
  o.timeout_s = 1700;
  o.stdout_file = scratch / "stdout";
  o.stderr_file = scratch / "stderr";
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e)
    if (std::string(*e).rfind("GRADER_NO_GPU=", 0) != 0) env.emplace_back(*e);
  if (no_gpu) env.emplace_back("GRADER_NO_GPU=1");
  o.env = env;
  const auto r = grader::run_child(o);
  GraderRun run;
  run.exit_code = r.exited ? r.exit_code : -1;
  run.raw = read(o.stdout_file);
  run.err = read(o.stderr_file);
  try {
    run.out = json::parse(run.raw);
  } catch (...) {
  }
  return run;
}

// 17 entries: 12 that compile and grade, 5 that are rejected before any build.
void make_class(const fs::path& dir) {
  const std::string solution = read(kRoot / "solutions" / "lab07-bank-conflicts" / "kernel.cu");
  write(dir / "correct" / "kernel.cu", solution);
  write(dir / "correct" / ".grader" / "progress.json",
        R"({"format_version":1,"labs":{"lab07":{"steps_passed":[],"hints_shown":{"1":1,"3":1}}}})");
  write(dir / "unpadded.cu", read(kLab / "unpadded.cu"));
  write(dir / "off_by_one" / "kernel.cu", read(kLab / "off_by_one.cu"));
  write(dir / "infinite_loop.cu", read(kLab / "infinite_loop.cu"));
  write(dir / "compile_error.cu", read(kLab / "compile_error.cu"));
  write(dir / "empty_kernel.cu", read(kLab / "empty_kernel.cu"));
  for (const char* h : {"crash_host", "read_solutions", "write_outside", "fork_bomb", "daemon_rewrites_gradebook"})
    write(dir / h / "kernel.cu", read(kHostile / (std::string(h) + ".cu")));
  std::string links = read(kHostile / "links_over_what_is_read_back.cu");
  links.replace(links.find("@SOLUTION@"), 10, (kRoot / "solutions" / "lab07-bank-conflicts" / "kernel.cu").string());
  write(dir / "links_over_what_is_read_back" / "kernel.cu", links);
  write(dir / "empty" / "kernel.cu", "");
  write(dir / "binary.cu", std::string("\x7f"
                                       "ELF\x02\x01\x01\0\0\0",
                                       10));
  write(dir / "huge" / "kernel.cu", solution + std::string(1u << 20, '/') + "\n");
  write(dir / "nokernel" / "main.cu", solution);
  write(dir / "notes.txt", "not a submission");
}

// Each two neighbouring lines of the solution, as a leak of the file would show
// them: joined by a newline, raw (a text file) or escaped (a JSON string). Only
// pairs free of characters that JSON or XML escape, so that every form matches.
// A single line is no evidence: feedback quotes the student's own lines, and the
// hostile submissions of the class carry the solution's kernel.
std::vector<std::string> two_line_stretches_of_the_solution() {
  std::vector<std::string> lines, stretches;
  std::istringstream in(read(kRoot / "solutions" / "lab07-bank-conflicts" / "kernel.cu"));
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  for (size_t i = 0; i + 1 < lines.size(); ++i) {
    const std::string both = lines[i] + lines[i + 1];
    if (lines[i].size() < 8 || lines[i + 1].size() < 8 || both.find_first_of("<>&\"\\'") != std::string::npos) continue;
    stretches.push_back(lines[i] + "\n" + lines[i + 1]);
    stretches.push_back(lines[i] + "\\n" + lines[i + 1]);
  }
  return stretches;
}

std::map<std::string, json> rows_by_id(const json& out) {
  std::map<std::string, json> m;
  for (const auto& r : out.value("rows", json::array())) m[r.value("id", "")] = r;
  return m;
}

std::map<std::string, std::vector<std::string>> csv_by_id(const std::string& csv, std::vector<std::string>& header) {
  std::map<std::string, std::vector<std::string>> m;
  std::istringstream in(csv);
  std::string line;
  bool first = true;
  while (std::getline(in, line)) {
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

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

const json& report_step(const fs::path& out, const std::string& id, int index, json& holder) {
  holder = json::parse(read(out / "results" / (id + ".json")));
  return holder["report"]["steps"][index];
}

// The check of `kind` in a step, wherever lab.json lists it: steps gain checks.
json check_of_kind(const json& step, const std::string& kind) {
  for (const json& c : step.value("checks", json::array()))
    if (c.value("kind", "") == kind) return c;
  return json::object();
}

// What a row's grade did not pass, one check a line, for a failure's message.
std::string checks_not_passed(const fs::path& result_file) {
  const json row = json::parse(read(result_file));
  std::string out = "status " + row.value("status", "") + " " + row.value("reason", "") + "\n";
  const json report = row.value("report", json::object());
  for (const auto& step : report.is_object() ? report.value("steps", json::array()) : json::array())
    for (const auto& c : step.value("checks", json::array()))
      if (c.value("status", "") != "pass")
        out += "step " + std::to_string(step.value("id", 0)) + " " + c.value("kind", "") + " " + c.value("status", "") +
               ": " + c.value("summary", "") + "\n";
  return out;
}

// Where write_outside.cu tries to write when nothing stops it.
std::vector<fs::path> escape_targets() {
  std::vector<fs::path> t = {"/tmp/escaped-by-write_outside", kRoot / ".grader" / "escaped-by-write_outside",
                             kRoot / ".grader" / "runs" / "escaped-by-write_outside"};
  for (fs::path p = kRoot; p.has_relative_path(); p = p.parent_path()) t.push_back(p / "escaped-by-write_outside");
  // Above its program, wherever in .grader/ the grade built it.
  std::error_code ec;
  for (fs::recursive_directory_iterator it(kRoot / ".grader", fs::directory_options::skip_permission_denied, ec), end;
       !ec && it != end; it.increment(ec))
    if (it->path().filename() == "escaped-by-write_outside") t.push_back(it->path());
  return t;
}

class Batch : public ::testing::Test {
 protected:
  void SetUp() override {
    // A published class copy has neither solutions/ nor fixtures.
    for (const fs::path& p : {kLab, kHostile, kRoot / "solutions" / "lab07-bank-conflicts" / "kernel.cu"})
      if (!fs::exists(p)) GTEST_SKIP() << "needs " << p.string() << " (absent in a published copy)";
    base = fs::temp_directory_path() / ("batch_course_test-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(base);
    fs::create_directories(base / "scratch");
    make_class(base / "class");
  }
  void TearDown() override {
    if (!base.empty()) fs::remove_all(base);
  }
  fs::path base;
};

const std::string kHeader =
    "id,step1,step2,step3,step4,points,total,step 2 speedup 8192x8192,"
    "step 4 fraction_of_peak 8192x8192,hints_used (self-reported),notes";

}  // namespace

// Without a GPU nothing is scored but what no GPU could change: bad files are
// rejected, a build failure or a first step failing a static check is a 0, every
// other row says "not graded: no GPU" with no score, and the batch exits 4.
TEST_F(Batch, StaticWithoutAGpuRecordsNoScore) {
  const fs::path out = base / "out";
  const GraderRun r = run_grader({"batch", (base / "class").string(), "--lab", "lab07", "--out", out.string(), "--jobs",
                                  "2", "--hint-penalty", "0.5"},
                                 true, base / "scratch");
  ASSERT_EQ(r.exit_code, 4) << r.raw << r.err;
  ASSERT_EQ(r.out.value("schema", ""), "cuda-memory-labs/batch/1") << r.raw;
  auto rows = rows_by_id(r.out);
  ASSERT_EQ(rows.size(), 17u) << r.raw;

  // Isolation: bwrap where it works, else rlimits and a report that says so.
  const grader::BwrapStatus bw = grader::probe_bwrap();
  EXPECT_EQ(r.out["isolation"], bw.works ? "bwrap" : "rlimits") << r.out["isolation_note"];
  if (!bw.works) EXPECT_NE(r.out["isolation_note"].get<std::string>().find("limited isolation"), std::string::npos);

  for (const char* id : {"empty", "binary", "huge", "nokernel", "notes.txt"})
    EXPECT_EQ(rows[id]["status"], "rejected") << id;
  EXPECT_NE(rows["empty"]["reason"].get<std::string>().find("empty"), std::string::npos);
  EXPECT_NE(rows["binary"]["reason"].get<std::string>().find("NUL"), std::string::npos);
  EXPECT_NE(rows["huge"]["reason"].get<std::string>().find("too large"), std::string::npos);
  EXPECT_NE(rows["nokernel"]["reason"].get<std::string>().find("no kernel.cu"), std::string::npos);
  for (const char* id : {"correct", "unpadded", "off_by_one", "infinite_loop", "crash_host", "read_solutions",
                         "write_outside", "fork_bomb", "daemon_rewrites_gradebook", "links_over_what_is_read_back"}) {
    EXPECT_EQ(rows[id]["status"], "not_graded") << id << ": " << rows[id].dump();
    EXPECT_TRUE(rows[id]["points"].is_null()) << id;
    EXPECT_NE(rows[id]["notes"].get<std::string>().find("not graded: no GPU"), std::string::npos) << rows[id].dump();
  }
  EXPECT_EQ(r.out["counts"]["not_graded"], 10);
  // What no GPU could change is a grade now: a build failure, a first step whose
  // static check fails (the empty kernel loads nothing through shared memory).
  for (const char* id : {"compile_error", "empty_kernel"}) {
    EXPECT_EQ(rows[id]["status"], "graded") << id << ": " << rows[id].dump();
    EXPECT_EQ(rows[id]["points"], 0.0) << id;
  }
  EXPECT_NE(rows["compile_error"]["notes"].get<std::string>().find("build failed (kernel): kernel.cu:"),
            std::string::npos)
      << rows["compile_error"].dump();
  for (const auto& [id, row] : rows) EXPECT_TRUE(fs::exists(out / "results" / (id + ".json"))) << id;

  std::vector<std::string> header;
  auto csv = csv_by_id(read(out / "grades.csv"), header);
  std::string joined;
  for (const auto& h : header) joined += (joined.empty() ? "" : ",") + h;
  ASSERT_EQ(joined, kHeader);  // the indices below count on these columns
  ASSERT_EQ(csv.size(), 17u);
  EXPECT_EQ(csv["correct"][5], "") << "no score, not a 0";
  EXPECT_EQ(csv["correct"][9], "2");  // hints from its .grader/progress.json, which the student writes
  EXPECT_EQ(rows["correct"]["hints_source"], "self-reported");
  EXPECT_NE(csv["correct"][10].find("not graded: no GPU"), std::string::npos);
  EXPECT_NE(csv["binary"][10].find("rejected: binary"), std::string::npos);

  const json gs = json::parse(read(out / "gradescope" / "correct" / "results.json"));
  EXPECT_FALSE(gs.contains("score")) << gs.dump(2);
  EXPECT_TRUE(gs["tests"].empty());
  EXPECT_NE(gs["output"].get<std::string>().find("not graded: no GPU"), std::string::npos);

  // No program ran (only builds), so nothing escaped.
  for (const auto& t : escape_targets()) EXPECT_FALSE(fs::exists(t)) << t;

  // A rerun grades them again (a row without a score is never kept).
  const GraderRun again =
      run_grader({"batch", (base / "class").string(), "--lab", "lab07", "--out", out.string(), "--jobs", "2"}, true,
                 base / "scratch");
  ASSERT_EQ(again.exit_code, 4) << again.raw << again.err;
  rows = rows_by_id(again.out);
  for (const auto& [id, row] : rows)
    EXPECT_EQ(row["reused"], row["status"] == "rejected" || row["status"] == "graded") << id;
}

// A folder name a student chose costs only its own row: too long for a file
// name with ".json", a newline, a leading dash or '='.
TEST_F(Batch, StaticOddFolderNamesCostOnlyTheirRows) {
  const fs::path cls = base / "odd";
  const std::string solution = read(kRoot / "solutions" / "lab07-bank-conflicts" / "kernel.cu");
  const std::vector<std::string> names = {std::string(250, 'x'), "new\nline", "-rf", "=HYPERLINK(\"x\")", "plain"};
  for (const auto& n : names) write(cls / n / "kernel.cu", solution);
  const fs::path out = base / "out-odd";
  const GraderRun r = run_grader({"batch", cls.string(), "--lab", "lab07", "--out", out.string(), "--jobs", "2"}, true,
                                 base / "scratch");
  ASSERT_TRUE(r.out.is_object()) << r.raw << r.err;
  auto rows = rows_by_id(r.out);
  ASSERT_EQ(rows.size(), names.size()) << r.raw;
  for (const auto& n : names) EXPECT_EQ(rows[n]["status"], "not_graded") << n;
  std::size_t files = 0;
  for (const auto& e : fs::directory_iterator(out / "results")) {
    ++files;
    EXPECT_LE(e.path().filename().string().size(), 200u) << e.path();
    EXPECT_EQ(e.path().filename().string().find('\n'), std::string::npos) << e.path();
  }
  EXPECT_EQ(files, names.size());
  // A cell that starts with '=' cannot become a spreadsheet formula.
  EXPECT_EQ(read(out / "grades.csv").find("\n=HYPERLINK"), std::string::npos);
}

TEST_F(Batch, StaticGradescopeEntryPoint) {
  const fs::path sub = base / "upload";
  write(sub / "src" / "deep" / "kernel.cu", "// not this one: deeper\n");
  // Builds and passes its static checks: only a GPU could grade it (an empty
  // kernel, which fails step 1's static check, would get its 0 without one).
  write(sub / "src" / "kernel.cu", read(kLab / "unpadded.cu"));
  write(sub / "README.md", "x");
  const fs::path results = base / "results" / "results.json";
  const GraderRun r =
      run_grader({"gradescope", "--lab", "lab07", "--submission-dir", sub.string(), "--results", results.string()},
                 true, base / "scratch");
  // No GPU in the container: no score, and the autograder run fails visibly.
  ASSERT_EQ(r.exit_code, 4) << r.raw << r.err;
  EXPECT_EQ(r.out["submission"], (sub / "src" / "kernel.cu").string());
  EXPECT_EQ(r.out["status"], "not_graded");
  const json j = json::parse(read(results));
  EXPECT_FALSE(j.contains("score")) << j.dump(2);
  EXPECT_NE(j["output"].get<std::string>().find("not graded: no GPU"), std::string::npos) << j.dump(2);
  EXPECT_TRUE(j["extra_data"].contains("driver"));

  const fs::path none = base / "none";
  write(none / "notes.txt", "no code");
  const GraderRun n =
      run_grader({"gradescope", "--lab", "lab07", "--submission-dir", none.string(), "--results", results.string()},
                 true, base / "scratch");
  ASSERT_EQ(n.exit_code, 0) << n.raw << n.err;
  const json k = json::parse(read(results));
  EXPECT_EQ(k["score"], 0);
  EXPECT_NE(k["output"].get<std::string>().find("missing"), std::string::npos) << k.dump(2);
}

// The mixed class's leak check can fail: the solution's file, as text or as a
// JSON string, shows its stretches; a feedback line quoting a student's own line
// that the solution shares shows none.
TEST_F(Batch, StaticTheLeakCheckSeesTheSolutionNotAQuotedLine) {
  const auto stretches = two_line_stretches_of_the_solution();
  ASSERT_GE(stretches.size(), 10u);
  const std::string solution = read(kRoot / "solutions" / "lab07-bank-conflicts" / "kernel.cu");
  const auto found_in = [&](const std::string& text) {
    std::size_t n = 0;
    for (const auto& s : stretches) n += text.find(s) != std::string::npos;
    return n;
  };
  EXPECT_EQ(found_in(solution), stretches.size() / 2) << "every raw stretch is the solution's";
  EXPECT_EQ(found_in(json(solution).dump()), stretches.size() / 2) << "every escaped stretch, in JSON";
  EXPECT_EQ(found_in(json({{"details",
                            {"ld.shared at kernel.cu:22:       out[static_cast<size_t>(row + j) * rows + "
                             "col] = tile[threadIdx.x][threadIdx.y + j];",
                             "st.shared at kernel.cu:14: tile[threadIdx.y + j][threadIdx.x] = in[i];"}}})
                         .dump()),
            0u);
}

TEST_F(Batch, GpuGradesAMixedClass) {
  const fs::path out = base / "out";
  const GraderRun doctor = run_grader({"doctor"}, false, base / "scratch");
  if (!doctor.out.is_object() || doctor.out.value("gpu", json()).is_null())
    GTEST_SKIP() << "no GPU: " << doctor.out.value("no_gpu_reason", doctor.raw + doctor.err);
  const GraderRun r =
      run_grader({"batch", (base / "class").string(), "--lab", "lab07", "--out", out.string(), "--hint-penalty", "0.5"},
                 false, base / "scratch");
  ASSERT_EQ(r.exit_code, 0) << r.raw << r.err;
  auto rows = rows_by_id(r.out);
  ASSERT_EQ(rows.size(), 17u);
  const bool sandboxed = r.out["isolation"] == "bwrap";
  // Long enough for daemon_rewrites_gradebook's daemon, had it outlived its grade.
  std::this_thread::sleep_for(std::chrono::seconds(5));
  std::cout << "isolation: " << r.out["isolation_note"].get<std::string>() << "\n";

  std::vector<std::string> header;
  auto csv = csv_by_id(read(out / "grades.csv"), header);
  EXPECT_EQ(std::vector<std::string>(csv["correct"].begin() + 1, csv["correct"].begin() + 7),
            (std::vector<std::string>{"1", "1", "1", "1", "9", "10"}));  // 10 points - 2 hints x 0.5
  EXPECT_EQ(csv["unpadded"][1], "1");
  EXPECT_EQ(csv["unpadded"][3], "0");
  EXPECT_EQ(csv["off_by_one"][1], "0");
  json holder;
  EXPECT_EQ(check_of_kind(report_step(out, "crash_host", 0, holder), "correct").value("symptom", ""), "crash")
      << holder.dump(2);
  EXPECT_EQ(check_of_kind(report_step(out, "infinite_loop", 0, holder), "correct").value("symptom", ""), "timeout")
      << holder.dump(2);
  for (const char* id :
       {"read_solutions", "write_outside", "fork_bomb", "daemon_rewrites_gradebook", "links_over_what_is_read_back"})
    EXPECT_EQ(rows[id]["status"], "graded") << id;
  // The daemon died with its grade: its row and the gradebook are the batch's.
  EXPECT_EQ(csv["daemon_rewrites_gradebook"][1], "1");
  EXPECT_EQ(read(out / "grades.csv").find("daemon_rewrites_gradebook,10"), std::string::npos);
  EXPECT_EQ(json::parse(read(out / "results" / "daemon_rewrites_gradebook.json")).value("forged", false), false);
  // No gradebook quotes the solution, whatever links were left for the grader to follow.
  const auto stretches = two_line_stretches_of_the_solution();
  ASSERT_GE(stretches.size(), 10u);
  for (const auto& e : fs::recursive_directory_iterator(out))
    if (e.is_regular_file())
      for (const auto& s : stretches)
        EXPECT_EQ(read(e.path()).find(s), std::string::npos) << e.path() << " quotes: " << s;
  EXPECT_EQ(csv["links_over_what_is_read_back"][1], "1");
  // A hostile submission transposes correctly only when its attack failed.
  if (sandboxed) EXPECT_EQ(csv["read_solutions"][1], "1") << "read the solution from inside the sandbox";
  // Its writes, wherever they went, do not change its transpose.
  EXPECT_EQ(csv["write_outside"][1], "1") << checks_not_passed(out / "results" / "write_outside.json");
  if (::getuid() != 0) EXPECT_EQ(csv["fork_bomb"][1], "1") << "RLIMIT_NPROC did not stop the fork bomb";
  std::vector<fs::path> escaped;
  for (const auto& t : escape_targets())
    if (fs::exists(t)) escaped.push_back(t), fs::remove(t);
  if (sandboxed) EXPECT_TRUE(escaped.empty()) << escaped.front();

  const json gs = json::parse(read(out / "gradescope" / "correct" / "results.json"));
  EXPECT_EQ(gs["score"], 9);
  EXPECT_FALSE(gs["extra_data"]["gpu"].is_null());
  EXPECT_FALSE(gs["extra_data"]["driver"].is_null());
}
