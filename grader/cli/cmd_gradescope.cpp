// grader gradescope --lab LAB — the autograder entry point on Gradescope: grade
// /autograder/submission and write /autograder/results/results.json.
#include <algorithm>
#include <iostream>
#include <memory>

#include "app.hpp"
#include "batch.hpp"
#include "gradebook.hpp"
#include "json_text.hpp"
#include "session.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace grader {
namespace {

struct GradescopeOptions {
  std::string submission_dir = "/autograder/submission";
  std::string results = "/autograder/results/results.json";
  std::string lab, isolation = "auto";
  double hint_penalty = 0;
  double timeout_s = 1800;
};

// The shallowest kernel.cu (ties: by path); else the only .cu file. Links are
// not followed: an upload cannot point the grader at files outside it.
std::string find_kernel(const fs::path& dir, fs::path& found) {
  std::vector<std::pair<int, fs::path>> kernels, sources;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
       !ec && it != end; it.increment(ec)) {
    if (!it->is_regular_file(ec) || it->is_symlink(ec)) continue;
    const auto item = std::make_pair(it.depth(), it->path());
    if (it->path().filename() == "kernel.cu")
      kernels.push_back(item);
    else if (it->path().extension() == ".cu")
      sources.push_back(item);
  }
  if (!kernels.empty()) {
    found = std::min_element(kernels.begin(), kernels.end())->second;
    return "";
  }
  if (sources.size() == 1) {
    found = sources.front().second;
    return "";
  }
  if (sources.empty()) return "missing: no kernel.cu (and no other .cu file) in the submission";
  return "ambiguous: " + std::to_string(sources.size()) + " .cu files and none named kernel.cu; upload kernel.cu";
}

int run_gradescope(const GradescopeOptions& o, const GlobalOptions& g) {
  const IsolationAsked asked = isolation_asked_named(o.isolation);  // a typo is refused before anything runs
  const fs::path dir = fs::absolute(o.submission_dir);
  if (!fs::is_directory(dir)) throw CourseError("no submission folder at " + dir.string());
  Session session = Session::open(g);
  const LabInfo& lab = session.course.resolve(o.lab);
  const Manifest manifest = load_manifest(lab.dir / "lab.json");
  const fs::path results = fs::absolute(o.results);
  BatchEnvironment env = prepare_batch_environment(session, asked, {dir, results.parent_path()});

  GradebookInfo info = GradebookInfo::from_manifest(manifest, lab.folder);
  info.hint_penalty = o.hint_penalty;
  info.environment = env.environment;
  info.environment["isolation_note"] = env.isolation_note;

  Submission s;
  s.id = "submission";
  s.folder = dir;
  BatchRow row;
  row.id = s.id;
  std::string problem = find_kernel(dir, s.source);
  if (problem.empty()) problem = check_submission_file(s.source);
  if (!problem.empty()) {
    row.status = RowStatus::rejected;
    row.reason = problem;
    row.hints_used = hints_used(dir, lab.id);
  } else {
    BatchSettings settings;
    settings.course_root = session.course.root();
    settings.grader_exe = fs::read_symlink("/proc/self/exe");
    settings.lab = lab.folder;
    settings.lab_id = lab.id;
    settings.arch = session.builder->settings().arch;
    settings.timeout_s = o.timeout_s;
    settings.isolation = env.isolation;
    if (!session.device.present) settings.no_gpu_reason = session.device.reason;
    row = grade_submission(s, settings);
  }
  const json result = gradescope_result(row, info);
  write_file_atomically(results, json_text(result) + "\n");
  if (g.json) {
    std::cout << json_text(json{{"schema", "cuda-memory-labs/gradescope/1"},
                                {"results", results.string()},
                                {"submission", s.source.empty() ? json(nullptr) : json(s.source.string())},
                                {"status", row.status},
                                {"reason", row.reason},
                                {"score", result.value("score", json(nullptr))},
                                {"exit_code", row.status == RowStatus::not_graded ? kExitEnvironment : kExitPass}})
              << "\n";
  } else {
    std::cout << "graded " << (s.source.empty() ? dir.string() : s.source.string()) << ": " << name_of(row.status)
              << (row.reason.empty() ? "" : " (" + row.reason + ")") << ", score "
              << (result.contains("score") ? format_number(result["score"].get<double>(), 2) : std::string("none"))
              << "/" << format_number(info.total_points(), 2) << "\nwrote " << results.string() << "\n";
  }
  // Without a GPU no score was recorded: the autograder run must show as failed.
  return row.status == RowStatus::not_graded ? kExitEnvironment : kExitPass;
}

}  // namespace

Command gradescope_command() {
  return {
      "gradescope", "Grade a Gradescope submission folder and write its results.json",
      [](CLI::App& sub, GlobalOptions& g) -> std::function<int()> {
        auto o = std::make_shared<GradescopeOptions>();
        sub.add_option("--lab", o->lab, "the lab of this assignment: lab07, 7, bank-conflicts")->required();
        sub.add_option("--submission-dir", o->submission_dir, "the uploaded files (default /autograder/submission)");
        sub.add_option("--results", o->results, "where results.json goes (default /autograder/results/results.json)");
        sub.add_option("--hint-penalty", o->hint_penalty, "points off per hint used, never below 0 (default 0)")
            ->check(points_per_hint());
        sub.add_option("--isolation", o->isolation, "auto (bwrap when it works), bwrap or rlimits");
        sub.add_option("--timeout", o->timeout_s, "seconds for the whole grade (default 1800)")
            ->check(number_between(1, 86400, "seconds"));
        return [o, &g] { return run_gradescope(*o, g); };
      }};
}

}  // namespace grader
