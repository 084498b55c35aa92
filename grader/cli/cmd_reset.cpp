// grader reset LAB — start a lab over: the skeleton back in kernel.cu, the
// student's file kept as a backup, the recorded progress left as it is.
#include <unistd.h>

#include <ctime>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "app.hpp"
#include "json_text.hpp"
#include "lab_reset.hpp"
#include "manifest.hpp"
#include "terminal.hpp"

namespace fs = std::filesystem;

namespace grader {
namespace {

struct ResetOptions {
  std::string lab;
  bool yes = false;
};

std::optional<std::string> read_if_exists(const fs::path& p) {
  std::error_code ec;
  if (!fs::exists(p, ec)) return std::nullopt;
  std::ifstream in(p, std::ios::binary);
  if (!in) throw CourseError("cannot read " + p.string());
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Shown relative to the course root, as the labs/... path is.
std::string shown(const fs::path& p, const fs::path& root) {
  const fs::path rel = p.lexically_relative(root);
  return rel.empty() || *rel.begin() == ".." ? p.string() : rel.generic_string();
}

bool confirmed(const std::string& question) {
  std::cout << question << "  [y/N] " << std::flush;
  std::string answer;
  if (!std::getline(std::cin, answer)) return false;
  return !answer.empty() && (answer[0] == 'y' || answer[0] == 'Y');
}

int run_reset(const ResetOptions& o, const GlobalOptions& g) {
  const Course course = Course::discover(g.root);
  const LabInfo& lab = course.resolve(o.lab);
  const Manifest manifest = load_manifest(lab.dir / "lab.json");
  const fs::path file = lab.dir / manifest.student_file;
  const std::string name = shown(file, course.root());
  const Skeleton skeleton = find_skeleton(course, lab, manifest.student_file);
  const std::optional<std::string> current = read_if_exists(file);

  nlohmann::json out = {{"schema", "cuda-memory-labs/reset/1"},
                        {"lab", lab.folder},
                        {"file", name},
                        {"skeleton_from", skeleton.origin},
                        {"reset", false},
                        {"backup", nullptr},
                        {"progress_kept", true}};
  if (current == skeleton.text) {
    if (g.json)
      std::cout << json_text(out) << "\n";
    else
      std::cout << name << " is already the skeleton: it matches " << skeleton.origin << ". Nothing to do.\n";
    return kExitPass;
  }

  fs::path backup = backup_path(course.state_dir() / "backups" / lab.id, manifest.student_file, std::time(nullptr));
  // A missing file loses nothing, so it needs no backup and no question.
  if (current && !o.yes) {
    // With no one at a terminal to answer, replacing the student's work must be asked for explicitly.
    if (g.json || !isatty(STDIN_FILENO))
      throw CourseError("not replacing " + name + " with the skeleton: " +
                        (g.json ? std::string("--json cannot ask") : std::string("stdin is not a terminal to ask on")) +
                        " for confirmation; run `grader reset " + o.lab +
                        " --yes` to do it (your file would be kept in " + shown(backup.parent_path(), course.root()) +
                        "/)");
    if (!confirmed("Replace " + name + " with the skeleton? Your file is kept at " + shown(backup, course.root()))) {
      std::cout << "Nothing changed.\n";
      return kExitPass;
    }
  }
  if (current) backup = write_backup(backup, *current);
  replace_file(file, skeleton.text);

  out["reset"] = true;
  if (current) out["backup"] = shown(backup, course.root());
  if (g.json) {
    std::cout << json_text(out) << "\n";
  } else {
    std::cout << Style::green("Restored ") << name << " from " << skeleton.origin << ".\n";
    if (current)
      std::cout << "Your previous file is kept at " << shown(backup, course.root()) << "\n";
    else
      std::cout << "There was no " << name << " to keep.\n";
    std::cout << "Your progress in " << lab.id << " is kept: steps you passed stay passed.\n";
  }
  return kExitPass;
}

}  // namespace

Command reset_command() {
  return {"reset", "Restore a lab's skeleton into kernel.cu (your file is backed up first; progress is kept)",
          [](CLI::App& sub, GlobalOptions& g) -> std::function<int()> {
            auto o = std::make_shared<ResetOptions>();
            sub.add_option("lab", o->lab, "lab07, 7, bank-conflicts or lab07-bank-conflicts")->required();
            sub.add_flag("-y,--yes", o->yes, "do not ask (needed when stdin is not a terminal)");
            return [o, &g] { return run_reset(*o, g); };
          }};
}

}  // namespace grader
