// grader publish --out DIR — a class copy of the course without its
// solutions in any form (publish.hpp).
#include <iostream>
#include <memory>
#include <optional>

#include "app.hpp"
#include "course.hpp"
#include "json_text.hpp"
#include "publish.hpp"
#include "terminal.hpp"

namespace grader {
namespace {

struct PublishCommandOptions {
  std::string out;
  std::vector<std::string> labs;
  bool force = false, from_working_tree = false;
  std::optional<double> hint_penalty;
};

int run_publish(const PublishCommandOptions& o, const GlobalOptions& g) {
  const Course course = Course::discover(g.root);
  PublishOptions po;
  po.out = o.out;
  po.labs = o.labs;
  po.force = o.force;
  po.hint_penalty = o.hint_penalty;
  po.from_working_tree = o.from_working_tree;
  PublishResult r;
  try {
    r = publish(course, po);
  } catch (const PublishError& e) {
    if (g.json) {
      std::cout << json_text(nlohmann::json{
                       {"schema", "cuda-memory-labs/error/1"}, {"error", e.what()}, {"exit_code", e.exit_code}})
                << "\n";
    } else {
      std::cerr << Style::red("error: ") << e.what() << "\n";
    }
    return e.exit_code;
  } catch (const std::filesystem::filesystem_error& e) {
    const std::string msg = std::string("cannot write the class copy (nothing was published): ") + e.what();
    if (g.json)
      std::cout << json_text(nlohmann::json{
                       {"schema", "cuda-memory-labs/error/1"}, {"error", msg}, {"exit_code", kExitEnvironment}})
                << "\n";
    else
      std::cerr << Style::red("error: ") << msg << "\n";
    return kExitEnvironment;
  }
  if (g.json) {
    std::cout << json_text(nlohmann::json{
                     {"schema", "cuda-memory-labs/publish/2"},
                     {"out", r.out.string()},
                     {"labs", r.labs},
                     {"files", r.files},
                     {"protected_files", r.protected_files},
                     {"source", r.source},
                     {"notes", r.notes},
                     {"warnings", r.warnings},
                     {"hint_penalty", o.hint_penalty ? nlohmann::json(*o.hint_penalty) : nlohmann::json(nullptr)},
                     {"seconds", r.seconds}})
              << "\n";
    return kExitPass;
  }
  std::cout << Style::pass_mark() << " published " << r.labs.size() << " lab" << (r.labs.size() == 1 ? "" : "s")
            << " from " << r.source << " to " << Style::bold(r.out.string()) << " (" << r.files
            << " files, no solution in any form)\n";
  std::cout << "    " << r.protected_files << " protected files hashed in " << kPublishedManifest
            << ": `grader verify` in the copy lists any that changed\n";
  for (const auto& n : r.notes) std::cout << "  " << Style::yellow("note: ") << n << "\n";
  for (const auto& w : r.warnings) std::cerr << Style::yellow("warning: ") << w << "\n";
  return kExitPass;
}

}  // namespace

Command publish_command() {
  return {"publish", "Write a class copy of the course without its solutions",
          [](CLI::App& sub, GlobalOptions& g) -> std::function<int()> {
            auto o = std::make_shared<PublishCommandOptions>();
            sub.add_option("--out", o->out, "the folder to create (written beside it as DIR.tmp-PID, then renamed)")
                ->required();
            sub.add_option("--labs", o->labs, "labs to publish, e.g. lab00,lab07 (default: every lab)")->delimiter(',');
            sub.add_flag("--force", o->force, "replace DIR if it is an earlier published copy (or an empty folder)");
            sub.add_flag("--from-working-tree", o->from_working_tree,
                         "publish the files on disk, uncommitted edits and untracked files included (default: the "
                         "course's last commit, refused while what it publishes differs from it; needed where the "
                         "course is not in git)");
            sub.add_option("--hint-penalty", o->hint_penalty,
                           "points off per hint shown in this class: stated in the copy's README and by grader hint "
                           "(use the same number with grader batch)")
                ->check(points_per_hint());
            return [o, &g] { return run_publish(*o, g); };
          }};
}

}  // namespace grader
