// grader collect OUT --lab LAB — the gradebooks of a `grader batch --slurm`
// run from the tasks' OUT/results/<id>.json (a task that wrote none is a row
// that says so, with its Slurm log).
#include <fstream>
#include <iostream>
#include <memory>

#include "app.hpp"
#include "course.hpp"
#include "gradebook.hpp"
#include "json_text.hpp"
#include "manifest.hpp"
#include "slurm.hpp"
#include "terminal.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace grader {
namespace {

struct CollectOptions {
  std::string out, lab;
  double hint_penalty = -1;  // < 0: the one given to `grader batch --slurm`
};

// What a collect needs of the batch folder: the batch, its lab, and the
// gradebook's facts (points, the hint penalty, the Slurm job).
struct CollectedBatch {
  SlurmBatch batch;
  std::string lab_folder;
  GradebookInfo info;
  std::string job;  // the Slurm job id, "" when unknown
};

CollectedBatch open_collected_batch(const CollectOptions& o, const GlobalOptions& g) {
  CollectedBatch c;
  try {
    c.batch = load_slurm_batch(fs::absolute(o.out));
  } catch (const std::runtime_error& e) {
    throw CourseError(e.what());
  }
  const SlurmBatch& b = c.batch;
  const Course course = Course::discover(!g.root.empty()             ? g.root
                                         : fs::exists(b.course_root) ? b.course_root
                                                                     : fs::path());
  const LabInfo& lab = course.resolve(o.lab);
  if (lab.id != b.lab_id)
    throw CourseError(o.out + " holds a batch of " + b.lab_id + ", not of " + lab.id + " (use --lab " + b.lab_id + ")");
  c.lab_folder = lab.folder;
  c.info = GradebookInfo::from_manifest(load_manifest(lab.dir / "lab.json"), lab.folder);
  c.info.hint_penalty = o.hint_penalty >= 0 ? o.hint_penalty : b.hint_penalty;
  std::ifstream in(b.out / "slurm" / "job_id");
  std::getline(in, c.job);
  c.info.environment = {{"scheduler", "slurm"},
                        {"slurm_job_id", c.job.empty() ? json(nullptr) : json(c.job)},
                        {"gres", b.job.gres},
                        {"isolation", b.isolation}};
  return c;
}

void print_collected(const CollectedBatch& c, const std::vector<BatchRow>& rows, const json& counts) {
  const GradebookInfo& info = c.info;
  const fs::path& out = c.batch.out;
  for (const auto& r : rows)
    std::cout << r.id << "  " << name_of(r.status) << "  "
              << (r.status == RowStatus::graded
                      ? format_number(final_score(earned_points(r, info), r.hints_used, info.hint_penalty), 2) + "/" +
                            format_number(info.total_points(), 2) + " points  "
                      : "")
              << row_notes(r, info) << "\n";
  std::cout << counts["graded"].get<int>() << " graded, " << counts["rejected"].get<int>() << " rejected, "
            << counts["not_graded"].get<int>() << " not graded (no score recorded), " << counts["error"].get<int>()
            << " errors (the grade did not finish)\n";
  if (counts["missing"].get<std::size_t>() > 0)
    std::cout << counts["missing"].get<std::size_t>()
              << " without a result: see the Slurm logs, then resubmit with `sbatch "
              << (out / "slurm" / "job.sbatch").string() << "` (finished rows are kept)\n";
  std::cout << "wrote " << (out / "grades.csv").string() << ", " << (out / "junit.xml").string() << ", "
            << (out / "gradescope").string() << "/<id>/results.json\n";
  if (const std::string note = self_reported_hints_note(info.hint_penalty); !note.empty())
    std::cout << Style::yellow("note: ") << note << "\n";
}

int run_collect(const CollectOptions& o, const GlobalOptions& g) {
  const CollectedBatch c = open_collected_batch(o, g);
  std::size_t missing = 0;
  const auto rows = collect_slurm_rows(c.batch, &missing);
  write_gradebooks(c.batch.out, rows, c.info);
  json jrows = json::array();
  for (const auto& r : rows) jrows.push_back(row_json(r, c.info));
  const BatchCounts n = count_rows(rows);
  const json counts = {{"graded", n.graded},
                       {"rejected", n.rejected},
                       {"error", n.errors},
                       {"not_graded", n.not_graded},
                       {"missing", missing}};
  const int code = n.not_graded > 0 ? kExitEnvironment : kExitPass;
  if (g.json)
    std::cout << json_text(json{{"schema", "cuda-memory-labs/collect/1"},
                                {"lab", c.lab_folder},
                                {"out", c.batch.out.string()},
                                {"slurm_job_id", c.job.empty() ? json(nullptr) : json(c.job)},
                                {"total_points", c.info.total_points()},
                                {"hint_penalty", c.info.hint_penalty},
                                {"counts", counts},
                                {"rows", jrows},
                                {"exit_code", code}})
              << "\n";
  else
    print_collected(c, rows, counts);
  return code;
}

}  // namespace

Command collect_command() {
  return {"collect", "Write the gradebooks of a `grader batch --slurm` run from its tasks' results",
          [](CLI::App& sub, GlobalOptions& g) -> std::function<int()> {
            auto o = std::make_shared<CollectOptions>();
            sub.add_option("out", o->out, "the --out folder of `grader batch --slurm`")->required();
            sub.add_option("--lab", o->lab, "the lab graded: lab07, 7, bank-conflicts")->required();
            sub.add_option("--hint-penalty", o->hint_penalty,
                           "points off per hint used (default: the one given to batch)")
                ->check(points_per_hint());
            return [o, &g] { return run_collect(*o, g); };
          }};
}

}  // namespace grader
