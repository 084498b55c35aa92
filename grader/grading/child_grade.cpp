#include "child_grade.hpp"

#include <algorithm>
#include <stdexcept>

#include "child_process.hpp"
#include "host/isolation.hpp"
#include "text.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace grader {

std::vector<std::string> child_grade_argv(const ChildGradeCall& call) {
  const fs::path grader = call.grader.empty() ? fs::read_symlink("/proc/self/exe") : call.grader;
  std::vector<std::string> argv = {grader.string(), "--json", "--no-color", "--root", call.course_root.string()};
  if (!call.arch.empty()) argv.insert(argv.end(), {"--arch", call.arch});
  // --fresh: every tool runs on every submission (no report is reused, kept_tool_runs.hpp).
  argv.insert(argv.end(), {"grade", call.lab, "--submission", call.submission.string(), "--fresh"});
  if (call.cap_s) argv.insert(argv.end(), {"--cap", fixed(*call.cap_s, 2)});
  if (call.all_steps) argv.push_back("--all");
  if (call.one_step_at_a_time) argv.push_back("--one-step-at-a-time");
  if (call.first_failure_only) argv.push_back("--first-failure-only");
  if (call.timed_only) argv.push_back("--timed-only");
  if (call.decide_margin > 1) argv.insert(argv.end(), {"--decide-margin", fixed(call.decide_margin, 4)});
  return argv;
}

GradeReport grade_in_child(const ChildGradeCall& call) {
  fs::create_directories(call.work_dir);
  ChildOptions o;
  o.argv = child_grade_argv(call);
  o.stdout_file = call.work_dir / "report.json";
  o.stderr_file = call.work_dir / "stderr.txt";
  o.timeout_s = call.timeout_s;
  o.max_file_bytes = 0;  // a trusted program: the grader itself
  if (!call.visible_gpu.empty()) {
    std::vector<std::string> env = memlabs::this_process_environment();
    env.erase(std::remove_if(env.begin(), env.end(),
                             [](const std::string& kv) { return kv.rfind("CUDA_VISIBLE_DEVICES=", 0) == 0; }),
              env.end());
    env.push_back("CUDA_VISIBLE_DEVICES=" + call.visible_gpu);
    o.env = std::move(env);
  }
  const ChildResult r = run_child(o);
  if (r.interrupted) throw Interrupted();
  const std::string said = read_file(o.stderr_file).value_or("");
  const std::string last = said.size() > 2000 ? "…" + said.substr(said.size() - 2000) : said;
  if (!r.started) throw std::runtime_error("could not start the grader: " + r.start_error);
  if (r.timed_out)
    throw std::runtime_error("the grade took over " + fixed(call.timeout_s, 0) + " s and was stopped" +
                             (last.empty() ? "" : ": " + last));
  try {
    return report_from_json(json::parse(read_file(o.stdout_file).value_or("")));
  } catch (const std::exception& e) {
    const std::string how =
        r.signaled ? "was killed by signal " + std::to_string(r.signal) : "exited " + std::to_string(r.exit_code);
    throw std::runtime_error("the grade " + how + " without a report (" + e.what() + ")" +
                             (last.empty() ? "" : ": " + last));
  }
}

}  // namespace grader
