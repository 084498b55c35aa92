// grader package gradescope --lab LAB --out FILE.zip — the autograder zip of one
// lab for Gradescope (gradescope_package.hpp).
#include <iostream>
#include <memory>
#include <optional>

#include "app.hpp"
#include "course.hpp"
#include "gradescope_package.hpp"
#include "json_text.hpp"
#include "publish.hpp"
#include "terminal.hpp"

namespace grader {
namespace {

struct PackageCommandOptions {
  std::string target, lab, out;
  bool force = false, from_working_tree = false;
  std::optional<double> hint_penalty;
};

int package_failed(const std::string& msg, int code, const GlobalOptions& g) {
  if (g.json)
    std::cout << json_text(nlohmann::json{{"schema", "cuda-memory-labs/error/1"}, {"error", msg}, {"exit_code", code}})
              << "\n";
  else
    std::cerr << Style::red("error: ") << msg << "\n";
  return code;
}

int run_package(const PackageCommandOptions& o, const GlobalOptions& g) {
  const Course course = Course::discover(g.root);
  GradescopePackageOptions po;
  po.out = o.out;
  po.lab = o.lab;
  po.force = o.force;
  po.hint_penalty = o.hint_penalty;
  po.from_working_tree = o.from_working_tree;
  GradescopePackageResult r;
  try {
    r = package_gradescope(course, po);
  } catch (const PublishError& e) {
    return package_failed(e.what(), e.exit_code, g);
  } catch (const std::filesystem::filesystem_error& e) {
    return package_failed(std::string("cannot write the package (nothing was written): ") + e.what(), kExitEnvironment,
                          g);
  }
  if (g.json) {
    std::cout << json_text(nlohmann::json{{"schema", "cuda-memory-labs/package/1"},
                                          {"target", o.target},
                                          {"out", r.out.string()},
                                          {"lab", r.lab},
                                          {"source", r.source},
                                          {"files", r.files},
                                          {"bytes", r.bytes},
                                          {"notes", r.notes},
                                          {"warnings", r.warnings}})
              << "\n";
    return kExitPass;
  }
  std::cout << Style::pass_mark() << " packaged " << r.lab << " from " << r.source
            << " for Gradescope: " << Style::bold(r.out.string()) << " (" << r.files << " files, " << r.bytes / 1024
            << " KiB)\n";
  std::cout << "    upload it as the autograder; its image needs the CUDA 13 toolkit and a GPU (docs/batch.md)\n";
  for (const auto& n : r.notes) std::cout << "  " << Style::yellow("note: ") << n << "\n";
  for (const auto& w : r.warnings) std::cerr << Style::yellow("warning: ") << w << "\n";
  return kExitPass;
}

}  // namespace

Command package_command() {
  return {"package", "Package a lab as an autograder (gradescope): its class copy and the scripts that grade",
          [](CLI::App& sub, GlobalOptions& g) -> std::function<int()> {
            auto o = std::make_shared<PackageCommandOptions>();
            sub.add_option("target", o->target, "where the package runs: gradescope")
                ->required()
                ->check(CLI::IsMember({"gradescope"}));
            sub.add_option("--lab", o->lab, "the lab the autograder grades, e.g. lab07")->required();
            sub.add_option("--out", o->out, "the .zip to write (written beside it, then renamed)")->required();
            sub.add_flag("--force", o->force, "replace the .zip if it exists");
            sub.add_flag("--from-working-tree", o->from_working_tree,
                         "package the files on disk, uncommitted edits included (default: the course's last commit)");
            sub.add_option("--hint-penalty", o->hint_penalty,
                           "points off per hint, stated in the copy and passed to grader gradescope")
                ->check(points_per_hint());
            return [o, &g] { return run_package(*o, g); };
          }};
}

}  // namespace grader
