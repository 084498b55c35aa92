// grader bench LAB — times the baseline, the student's kernel, any other
// candidates and the reference at the lab's timing sizes, against measured
// memcpy bandwidth, and (with --out) writes the markdown table the lessons
// quote. Numbers in docs/measurements/ come only from here.
#include <ctime>
#include <fstream>
#include <iostream>
#include <memory>
#include <random>
#include <sstream>

#include "activity.hpp"
#include "app.hpp"
#include "bar_chart.hpp"
#include "bench_sections.hpp"
#include "json_text.hpp"
#include "manifest.hpp"
#include "referee_client.hpp"
#include "session.hpp"
#include "terminal.hpp"
#include "text.hpp"
#include "timing_chart.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace grader {
namespace {

struct BenchOptions {
  std::string lab;
  std::vector<std::string> candidates;
  std::string out;
  std::string seed;
  double cap_s = 3.0;
};

struct Row {
  std::string case_name, label;
  std::optional<memlabs::TimingReport> timing;  // none when the run failed
  std::string error;
};

std::vector<std::string> timing_cases(const Manifest& m) {
  std::vector<std::string> cases;
  for (const auto& s : m.steps)
    for (const auto& c : s.checks)
      if (is_timed(c) && std::find(cases.begin(), cases.end(), c.case_name) == cases.end())
        cases.push_back(c.case_name);
  for (const auto& c : m.bench_cases)
    if (std::find(cases.begin(), cases.end(), c) == cases.end()) cases.push_back(c);
  return cases;
}

// The lab's heading, the machine and the protocol in one line, and the table's
// header with the optional columns (GFLOP/s, % of a library) it needs.
void write_table_head(std::ostream& md, const std::string& lab, const Manifest& m, const Session& s, std::uint64_t seed,
                      bool flops, const std::string& library) {
  md << "## " << lab << ": " << m.title << "\n\n";
  md << s.device.name << " (" << s.device.arch << ", " << s.device.sms << " SMs), CUDA driver "
     << cuda_version_string(s.device.driver_version) << ", runtime " << cuda_version_string(s.device.runtime_version)
     << ", nvcc " << s.toolchain.version << "; " << utc_now("%Y-%m-%d") << "; seed " << seed
     << ". Medians of per-round ratios over interleaved launches with L2 flushed before each; brackets: 95 % "
        "interval.\n\n";
  md << "| case | kernel | time (ms) | GB/s |" << (flops ? " GFLOP/s |" : "")
     << " speedup over baseline | % of memcpy |" << (library.empty() ? "" : " % of " + library + " |") << " A/A |\n";
  md << "|---|---|---:|---:|" << (flops ? "---:|" : "") << "---:|---:|" << (library.empty() ? "" : "---:|")
     << "---:|\n";
}

std::string markdown(const std::string& lab, const Manifest& m, const Session& s, const std::vector<Row>& rows,
                     std::uint64_t seed) {
  // Optional columns appear only when some row has them: GFLOP/s for
  // arithmetic-bound labs, "% of <library>" where a library version is timed.
  bool flops = false;
  std::string library;
  for (const auto& r : rows) {
    if (!r.timing) continue;
    flops = flops || r.timing->flops > 0;
    if (r.timing->library) library = *r.timing->library;
  }
  std::ostringstream md;
  write_table_head(md, lab, m, s, seed, flops, library);
  const auto row = [&](const std::string& c, const std::string& kernel, double ms, double gbps, double gflops,
                       const std::string& speedup, const std::string& memcpy_pct, const std::string& lib_pct,
                       const std::string& aa) {
    md << "| " << c << " | " << kernel << " | " << fixed(ms, 3) << " | " << fixed(gbps, 0) << " |";
    if (flops) md << " " << (gflops > 0 ? fixed(gflops, 0) : std::string()) << " |";
    md << " " << speedup << " | " << memcpy_pct << " |";
    if (!library.empty()) md << " " << lib_pct << " |";
    md << " " << aa << " |\n";
  };
  const auto interval = [](const std::optional<memlabs::RatioInterval>& iv, double scale, int precision) {
    if (!iv) return std::string("-");
    return fixed(scale * iv->median, precision) + " [" + fixed(scale * iv->lo, precision) + ", " +
           fixed(scale * iv->hi, precision) + "]";
  };
  std::string last_case;
  for (const auto& r : rows) {
    if (!r.timing) {
      md << "| " << r.case_name << " | " << r.label << " | failed: " << r.error << " |\n";
      continue;
    }
    const memlabs::TimingReport& t = *r.timing;
    const double fl = t.flops;
    if (r.case_name != last_case) {
      const double ms = t.baseline_ms;
      row(r.case_name, "baseline", ms, t.baseline_gbps, fl / (ms * 1e6), "1.00", "", "", "");
      if (t.memcpy_gbps)
        row(r.case_name,
            t.memcpy_over_host_link ? "cudaMemcpyAsync pinned H2D and D2H at once, same bytes"
                                    : "cudaMemcpy D2D, same bytes",
            t.memcpy_ms.value_or(0.0), *t.memcpy_gbps, 0, "", "100.0", "", "");
      if (t.library) {
        const double lms = t.library_ms.value_or(0.0);
        row(r.case_name, library, lms, t.bytes_moved / (lms * 1e6), fl / (lms * 1e6), fixed(ms / lms, 2), "", "100.0",
            "");
      }
      last_case = r.case_name;
    }
    const double ms = t.candidate_ms;
    row(r.case_name, r.label, ms, t.candidate_gbps, fl / (ms * 1e6), interval(t.speedup, 1, 2),
        t.fraction_of_peak ? fixed(100 * t.fraction_of_peak->median, 1) : std::string("-"),
        interval(t.fraction_of_library, 100, 1), fixed(t.aa ? t.aa->median : 0.0, 3));
  }
  return md.str();
}

// The table's rates as bars, one chart per case: the baseline, then each
// kernel that ran, against the case's roofline (timing_chart.hpp).
std::string charts(const std::vector<Row>& rows) {
  std::string out;
  std::vector<std::string> cases;
  for (const auto& r : rows)
    if (r.timing && std::find(cases.begin(), cases.end(), r.case_name) == cases.end()) cases.push_back(r.case_name);
  for (const auto& c : cases) {
    std::vector<BarRow> bars;
    TimingScale scale;
    for (const auto& r : rows) {
      if (r.case_name != c || !r.timing) continue;
      // The charts read a report's timing data, as a grade's check shows it (timing_chart.hpp).
      const json session = *r.timing;
      if (bars.empty()) {  // the case's first session gives the baseline and the roofline, as in the table
        scale = timing_scale(session);
        bars.push_back({"baseline", scale.rate(session, "baseline").value_or(0), scale.unit});
      }
      bars.push_back({r.label, scale.rate(session, "candidate").value_or(0), scale.unit});
    }
    out += "\n" + Style::bold(c) + "\n" + render_bar_chart(bars, scale.roofline, {40, Style::unicode(), "  "});
  }
  return out;
}

// Replaces this lab's section in the file, keeping the others.
void write_section(const fs::path& file, const std::string& lab, const std::string& body) {
  std::string text;
  if (std::ifstream in(file); in) text.assign(std::istreambuf_iterator<char>(in), {});
  text = with_bench_section(std::move(text), lab, body);
  if (!file.parent_path().empty()) fs::create_directories(file.parent_path());
  const fs::path tmp = file.string() + ".tmp";
  std::ofstream(tmp) << text;
  fs::rename(tmp, file);
}

// One kernel timed at one case in a referee session of its own, or why not.
Row time_kernel(const RunnerBuild& build, const std::string& case_name, const std::string& label, const Manifest& m,
                const BenchOptions& o, std::uint64_t seed, const fs::path& work_dir) {
  Row row{case_name, label, std::nullopt, ""};
  if (!build.ok) {
    row.error = "does not build (" + build.stage + ")";
    return row;
  }
  Activity a("timing " + case_name + " · " + label);
  RefereeCall rc;
  rc.referee = build.referee;
  rc.worker = build.worker;
  make_timing_call(rc, case_name, seed, o.cap_s, m.timeout_s);
  rc.work_dir = work_dir;
  const RunnerOutcome out = call_referee(rc);
  if (out.ok() && out.timing)
    row.timing = out.timing;
  else
    row.error = out.message.empty() ? category_name(out.category) : out.message;
  return row;
}

// The rows as a JSON document, or the table and its charts.
void print_bench(const std::string& lab, const Session& s, const std::vector<Row>& rows, std::uint64_t seed,
                 const std::string& table, const BenchOptions& o, const GlobalOptions& g) {
  if (g.json) {
    json jr = json::array();
    for (const auto& r : rows)
      jr.push_back({{"case", r.case_name},
                    {"kernel", r.label},
                    {"timing", r.timing ? json(*r.timing) : json(nullptr)},
                    {"error", r.error}});
    std::cout << json_text(json{{"schema", "cuda-memory-labs/bench/1"},
                                {"lab", lab},
                                {"seed", seed},
                                {"gpu", s.device.name},
                                {"memcpy_gbps", s.device.memcpy_gbps.value_or(0)},
                                {"rows", jr}})
              << "\n";
    return;
  }
  std::cout << "\n" << table << charts(rows);
  if (s.device.memcpy_gbps)
    std::cout << "\nprobe: cudaMemcpy D2D 256 MiB " << fixed(*s.device.memcpy_gbps, 0) << " GB/s\n";
  if (!o.out.empty()) std::cout << "written to " << o.out << "\n";
}

int run_bench(const BenchOptions& o, const GlobalOptions& g) {
  Session s = [&] {
    Activity a("looking for the GPU and measuring its copy bandwidth");
    return Session::open(g, /*measure_bandwidth=*/true);
  }();
  const LabInfo& lab = s.course.resolve(o.lab);
  const Manifest m = load_manifest(lab.dir / "lab.json");
  if (!s.device.present) throw EnvironmentError("grader bench needs a GPU: " + s.device.reason);
  const auto cases = timing_cases(m);
  if (cases.empty()) throw CourseError(lab.id + " has no timing case (no speedup or fraction_of_peak check)");

  std::vector<RunnerSource> sources = {{lab.dir, lab.dir / m.student_file, "kernel.cu", m.link}};
  std::vector<std::string> labels = {m.student_file};
  for (const auto& c : o.candidates) {
    sources.push_back({lab.dir, fs::absolute(c), fs::path(c).filename().string(), m.link});
    labels.push_back(fs::path(c).stem().string());
  }
  const fs::path solution = s.course.solution_kernel(lab);
  if (fs::exists(solution)) {
    sources.push_back({lab.dir, solution, "solution", m.link});
    labels.push_back("reference");
  }
  const auto builds = [&] {
    Activity a("building " + std::to_string(sources.size()) + " kernels");
    return s.builder->build(sources);
  }();
  const std::uint64_t seed = o.seed.empty() ? std::random_device{}() : parse_seed(o.seed).value();
  const fs::path run_dir = s.new_run_dir("bench-" + lab.id);

  std::vector<Row> rows;
  for (const auto& c : cases) {
    for (std::size_t i = 0; i < builds.size(); ++i) {
      const Row row = time_kernel(builds[i], c, labels[i], m, o, seed, run_dir / (c + "-" + std::to_string(i)));
      if (!g.json) {
        std::cerr << "  " << c << "  " << labels[i] << ": "
                  << (!row.timing ? row.error : fixed(row.timing->candidate_gbps, 0) + " GB/s") << "\n";
      }
      rows.push_back(row);
    }
  }
  if (!g.verbose) fs::remove_all(run_dir);

  const std::string table = markdown(lab.folder, m, s, rows, seed);
  if (!o.out.empty()) write_section(o.out, lab.folder, table);
  print_bench(lab.folder, s, rows, seed, table, o, g);
  for (const auto& r : rows)
    if (!r.timing) return kExitStepFailed;
  return kExitPass;
}

}  // namespace

Command bench_command() {
  return {"bench", "Time baseline, your kernel, other candidates and the reference; --out writes a markdown table",
          [](CLI::App& sub, GlobalOptions& g) -> std::function<int()> {
            auto o = std::make_shared<BenchOptions>();
            sub.add_option("lab", o->lab, "the lab")->required();
            sub.add_option("--candidate", o->candidates, "another kernel.cu to time (repeatable)");
            sub.add_option("--out", o->out, "markdown file whose section for this lab is (re)written");
            sub.add_option("--seed", o->seed, "input seed")->check(seed_number());
            sub.add_option("--cap", o->cap_s, "seconds of timing per case and kernel (default 3)")
                ->check(number_between(0.1, 600, "seconds"));
            return [o, &g] { return run_bench(*o, g); };
          }};
}

}  // namespace grader
