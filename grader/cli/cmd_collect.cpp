// grader collect OUT --lab LAB — the gradebooks of a `grader batch --slurm`
// run from the tasks' OUT/results/<id>.json (a task that wrote none is a row
// that says so, with its Slurm log).
#include <fstream>
#include <iostream>
#include <memory>

#include "app.hpp"
#include "course.hpp"
#include "gradebook.hpp"
#include "manifest.hpp"
#include "slurm.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace grader {
namespace {

struct CollectOptions {
  std::string out, lab;
  double hint_penalty = -1;  // < 0: the one given to `grader batch --slurm`
};

int run_collect(const CollectOptions& o, const GlobalOptions& g) {
  SlurmBatch b;
  try {
    b = load_slurm_batch(fs::absolute(o.out));
  } catch (const std::runtime_error& e) {
    throw CourseError(e.what());
  }
  const Course course = Course::discover(!g.root.empty()             ? g.root
                                         : fs::exists(b.course_root) ? b.course_root
                                                                     : fs::path());
  const LabInfo& lab = course.resolve(o.lab);
  if (lab.id != b.lab_id)
    throw CourseError(o.out + " holds a batch of " + b.lab_id + ", not of " + lab.id + " (use --lab " + b.lab_id + ")");
  const Manifest manifest = load_manifest(lab.dir / "lab.json");

  GradebookInfo info = GradebookInfo::from_manifest(manifest, lab.folder);
  info.hint_penalty = o.hint_penalty >= 0 ? o.hint_penalty : b.hint_penalty;
  const std::string job = [&] {
    std::ifstream in(b.out / "slurm" / "job_id");
    std::string id;
    std::getline(in, id);
    return id;
  }();
  info.environment = {{"scheduler", "slurm"},
                      {"slurm_job_id", job.empty() ? json(nullptr) : json(job)},
                      {"gres", b.job.gres},
                      {"isolation", b.isolation}};

  std::size_t missing = 0;
  const auto rows = collect_slurm_rows(b, &missing);
  write_gradebooks(b.out, rows, info);

  int graded = 0, rejected = 0, errors = 0, not_graded = 0;
  json jrows = json::array();
  for (const auto& r : rows) {
    graded += r.status == "graded";
    rejected += r.status == "rejected";
    errors += r.status == "error";
    not_graded += r.status == "not_graded";
    jrows.push_back({{"id", r.id},
                     {"status", r.status},
                     {"reason", r.reason},
                     {"points", r.status == "not_graded"
                                    ? json(nullptr)
                                    : json(final_score(earned_points(r, info), r.hints_used, info.hint_penalty))},
                     {"hints_used", r.hints_used},
                     {"notes", row_notes(r, info)}});
  }
  if (g.json) {
    std::cout << json{{"schema", "cuda-memory-labs/collect/1"},
                      {"lab", lab.folder},
                      {"out", b.out.string()},
                      {"slurm_job_id", job.empty() ? json(nullptr) : json(job)},
                      {"total_points", info.total_points()},
                      {"hint_penalty", info.hint_penalty},
                      {"counts",
                       {{"graded", graded},
                        {"rejected", rejected},
                        {"error", errors},
                        {"not_graded", not_graded},
                        {"missing", missing}}},
                      {"rows", jrows},
                      {"exit_code", not_graded > 0 ? kExitEnvironment : kExitPass}}
                     .dump(2)
              << "\n";
  } else {
    for (const auto& r : jrows)
      std::cout << r["id"].get<std::string>() << "  " << r["status"].get<std::string>() << "  "
                << (r["status"] == "graded" ? format_number(r["points"].get<double>(), 2) + "/" +
                                                  format_number(info.total_points(), 2) + " points  "
                                            : "")
                << r["notes"].get<std::string>() << "\n";
    std::cout << graded << " graded, " << rejected << " rejected, " << errors << " not graded\n";
    if (missing > 0)
      std::cout << missing << " without a result: see the Slurm logs, then resubmit with `sbatch "
                << (b.out / "slurm" / "job.sbatch").string() << "` (finished rows are kept)\n";
    std::cout << "wrote " << (b.out / "grades.csv").string() << ", " << (b.out / "junit.xml").string() << ", "
              << (b.out / "gradescope").string() << "/<id>/results.json\n";
  }
  return not_graded > 0 ? kExitEnvironment : kExitPass;
}

}  // namespace

Command collect_command() {
  return {"collect", "Write the gradebooks of a `grader batch --slurm` run from its tasks' results",
          [](CLI::App& sub, GlobalOptions& g) -> std::function<int()> {
            auto o = std::make_shared<CollectOptions>();
            sub.add_option("out", o->out, "the --out folder of `grader batch --slurm`")->required();
            sub.add_option("--lab", o->lab, "the lab graded: lab07, 7, bank-conflicts")->required();
            sub.add_option("--hint-penalty", o->hint_penalty,
                           "points off per hint used (default: the one given to batch)");
            return [o, &g] { return run_collect(*o, g); };
          }};
}

}  // namespace grader
