#include "publish.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <fstream>
#include <iostream>
#include <iterator>
#include <regex>
#include <set>

#include "calibrate.hpp"
#include "child_process.hpp"
#include "committed_course.hpp"
#include "diagnostics.hpp"
#include "gradebook.hpp"
#include "hint_policy.hpp"
#include "manifest.hpp"
#include "options.hpp"
#include "published_links.hpp"
#include "step_fixes.hpp"
#include "text.hpp"
#include "todo_regions.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace grader {
namespace {

// Copied whole (minus dot-files); tests/ without its fixtures, faults and
// adversarial submissions (solutions with one thing changed, or attacks).
const std::vector<std::string> kTrees = {"grader", "common", "tests"};
const std::vector<std::string> kExcludedTrees = {"tests/fixtures", "tests/faults", "tests/adversarial"};
// The rest of docs/ (the threat model, committed run logs): read from HEAD with
// the course, copied only where a published file links one (published_links.hpp).
constexpr const char* kLinkedDocs = "docs";
const std::vector<std::string> kSingleFiles = {"CMakeLists.txt",       "CMakePresets.json", "scripts/setup",
                                               "scripts/check-format", ".clang-format",     "docs/json-output.md",
                                               "docs/manifest.md"};

std::string read_course_file(const fs::path& p) {
  if (auto text = read_file(p)) return *text;
  throw PublishError("cannot read " + p.string(), kExitUsage);
}

void write_file(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary);
  out << text;
  if (!out.flush()) throw PublishError("cannot write " + p.string(), kExitEnvironment);
}

bool hidden(const fs::path& relative) {
  for (const auto& part : relative)
    if (!part.empty() && part.string()[0] == '.') return true;
  return false;
}

void add_tree(const fs::path& root, const fs::path& tree, std::vector<fs::path>& out) {
  std::error_code ec;
  if (!fs::is_directory(root / tree, ec))
    throw PublishError("the course has no " + tree.string() + "/ folder", kExitUsage);
  for (auto it = fs::recursive_directory_iterator(root / tree); it != fs::recursive_directory_iterator(); ++it) {
    const fs::path rel = fs::relative(it->path(), root);
    const std::string g = rel.generic_string();
    const bool excluded = std::any_of(kExcludedTrees.begin(), kExcludedTrees.end(),
                                      [&](const std::string& x) { return g == x || g.rfind(x + "/", 0) == 0; });
    if (excluded || hidden(fs::relative(it->path(), root / tree))) {
      if (it->is_directory()) it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file() && !it->is_symlink()) out.push_back(rel);
  }
}

// Every regular file under dir, relative and sorted.
std::vector<std::string> all_files(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file() && !e.is_symlink()) out.push_back(fs::relative(e.path(), dir).generic_string());
  std::sort(out.begin(), out.end());
  return out;
}

bool inside(const fs::path& child, const fs::path& parent) {
  const fs::path rel = child.lexically_relative(parent);
  return !rel.empty() && *rel.begin() != "..";
}

}  // namespace

std::vector<fs::path> select_files(const fs::path& root, const std::vector<std::string>& lab_folders) {
  std::vector<fs::path> out;
  for (const auto& lab : lab_folders) add_tree(root, fs::path("labs") / lab, out);
  for (const auto& t : kTrees) add_tree(root, t, out);
  std::error_code ec;
  // The thresholds of each GPU model the course was calibrated on (model/calibration.hpp).
  if (fs::is_directory(root / kCalibrationFolder, ec)) add_tree(root, kCalibrationFolder, out);
  // The course's shared symptom hints, where the course has them.
  if (fs::is_regular_file(root / "labs" / kCourseSymptomHints, ec))
    out.push_back(fs::path("labs") / kCourseSymptomHints);
  for (const auto& f : kSingleFiles) {
    if (!fs::is_regular_file(root / f, ec))
      throw PublishError("the course has no " + f + " (a class copy needs it)", kExitUsage);
    out.emplace_back(f);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string filter_syllabus(const std::string& syllabus, const std::vector<std::string>& lab_folders) {
  static const std::regex row(R"(^\s*\|\s*(lab[0-9]{2}-[a-z0-9-]+)\s*\|)");
  std::string out;
  for (const auto& line : split_lines(syllabus)) {
    std::smatch m;
    if (std::regex_search(line, m, row) &&
        std::find(lab_folders.begin(), lab_folders.end(), m[1].str()) == lab_folders.end())
      continue;
    out += line + "\n";
  }
  return out;
}

std::string student_readme(const std::string& readme) {
  std::string out;
  bool in_code = false, in_instructor_section = false, in_instructor_block = false, has_students = false;
  for (const auto& line : split_lines(readme)) {
    const std::string t = trim(line);
    if (t == "<!-- instructor-only -->") {
      in_instructor_block = true;
      continue;
    }
    if (t == "<!-- /instructor-only -->") {
      if (!in_instructor_block)
        throw PublishError("README.md: <!-- /instructor-only --> without its opening marker", kExitUsage);
      in_instructor_block = false;
      continue;
    }
    if (t.rfind("```", 0) == 0) in_code = !in_code;
    const bool heading = !in_code && (line.rfind("# ", 0) == 0 || line.rfind("## ", 0) == 0);
    if (heading) {
      in_instructor_section = line.rfind("## For instructors", 0) == 0;
      has_students = has_students || line.rfind("## For students", 0) == 0;
    }
    if (in_instructor_section || in_instructor_block) continue;
    out += line + "\n";
  }
  if (in_instructor_block) throw PublishError("README.md: <!-- instructor-only --> is never closed", kExitUsage);
  if (!has_students) throw PublishError("README.md has no \"## For students\" section to publish", kExitUsage);
  // Two blank lines where a section was cut read as a mistake.
  out = std::regex_replace(out, std::regex("\n{3,}"), "\n\n");
  return out;
}

std::vector<std::string> find_solution_leaks(const fs::path& dir, const std::vector<SolutionProbe>& probes) {
  std::vector<std::string> leaks;
  for (const auto& rel : all_files(dir)) {
    const std::string content = read_course_file(dir / rel);
    for (const auto& p : probes)
      if (contains_solution(content, p)) leaks.push_back(rel + ": holds " + p.name);
  }
  return leaks;
}

bool read_by_publish(const std::string& relative) {
  if (relative == "README.md" || relative == "syllabus.md" ||
      std::find(kSingleFiles.begin(), kSingleFiles.end(), relative) != kSingleFiles.end())
    return true;
  for (const auto& x : kExcludedTrees)
    if (relative == x || relative.rfind(x + "/", 0) == 0) return false;
  // Linked docs go out as committed, whatever the working tree holds: an edit there blocks nothing.
  if (relative.rfind(std::string(kLinkedDocs) + "/", 0) == 0) return false;
  return !hidden(fs::path(relative));
}

fs::path published_skeleton(const fs::path& root, const std::string& lab_folder, const std::string& student_file) {
  return root / kReferenceDir / lab_folder / "skeleton" / student_file;
}

namespace {

// The labs to publish, in course order, with their manifests and student files.
struct PublishedLabs {
  std::vector<const LabInfo*> labs;
  std::vector<std::string> folders, student_files;
  std::vector<Manifest> manifests;
};

PublishedLabs labs_to_publish(const Course& course, const PublishOptions& o) {
  PublishedLabs p;
  if (o.labs.empty())
    for (const auto& l : course.labs()) p.labs.push_back(&l);
  for (const auto& q : o.labs) {
    const LabInfo& l = course.resolve(q);
    if (std::find(p.labs.begin(), p.labs.end(), &l) == p.labs.end()) p.labs.push_back(&l);
  }
  if (p.labs.empty()) throw PublishError("the course has no labs to publish", kExitUsage);
  std::sort(p.labs.begin(), p.labs.end(), [](const LabInfo* a, const LabInfo* b) { return a->number < b->number; });
  std::error_code ec;
  for (const auto* l : p.labs) {
    if (!fs::is_regular_file(course.solution_kernel(*l), ec))
      throw PublishError("no solution at solutions/" + l->folder + "/kernel.cu: the copy is searched for " +
                             "every solution's text before it is written (publish from the instructor's course, " +
                             "not from a class copy)",
                         kExitUsage);
    p.manifests.push_back(load_manifest(l->dir / "lab.json"));
    p.folders.push_back(l->folder);
    p.student_files.push_back("labs/" + l->folder + "/" + p.manifests.back().student_file);
  }
  return p;
}

// --out as an absolute folder outside the course, checked before anything is
// built; `exists` says whether an earlier copy (or an empty folder) is replaced.
fs::path publish_destination(const fs::path& root, const PublishOptions& o, bool& exists) {
  if (o.out.empty()) throw PublishError("--out: no folder given", kExitUsage);
  const fs::path out = fs::absolute(o.out).lexically_normal();
  const fs::path out_clean = out.filename().empty() ? out.parent_path() : out;
  if (out_clean == root || inside(root, out_clean))
    throw PublishError("--out " + o.out.string() + " would hold the course itself; choose a folder outside it",
                       kExitUsage);
  for (const char* tree :
       {"labs", "solutions", "grader", "common", "tests", "scripts", "docs", ".reference", ".grader"})
    if (inside(out_clean, root / tree) || out_clean == root / tree)
      throw PublishError(
          "--out " + o.out.string() + " is inside the course's " + tree + "/; choose a folder outside it", kExitUsage);
  std::error_code ec;
  exists = fs::exists(out_clean, ec);
  if (exists) {
    if (!o.force) throw PublishError(out_clean.string() + " already exists; --force replaces it", kExitUsage);
    const bool empty_dir = fs::is_directory(out_clean, ec) && fs::is_empty(out_clean, ec);
    if (!empty_dir && !fs::exists(out_clean / kPublishedManifest, ec))
      throw PublishError(out_clean.string() + " exists and is not a published copy (no " + kPublishedManifest +
                             "); --force only replaces an earlier copy or an empty folder. Remove it yourself",
                         kExitUsage);
  }
  if (!fs::is_directory(out_clean.parent_path(), ec))
    throw PublishError(
        "cannot publish into " + out_clean.string() + ": " + out_clean.parent_path().string() + " is not a folder",
        kExitUsage);
  return out_clean;
}

// The copy's files in `tmp`: the course's public files, the student README and
// syllabus, each skeleton as handed out, and the manifest, after a search for
// any solution's text.
void write_copy(const fs::path& root, const fs::path& tmp, const PublishedLabs& p, const std::vector<fs::path>& files,
                const std::string& readme, const std::string& syllabus, const std::vector<SolutionProbe>& probes,
                const std::vector<FixSource>& fixes, const PublishOptions& o, PublishResult& res) {
  for (const auto& rel : files) {
    fs::create_directories((tmp / rel).parent_path());
    fs::copy_file(root / rel, tmp / rel, fs::copy_options::overwrite_existing);
    fs::permissions(tmp / rel, fs::status(root / rel).permissions());
  }
  // A calibration as a class copy carries it: the thresholds, not the names and
  // medians of the course's fixtures (which would say what the fixtures try).
  for (const auto& rel : files)
    if (*rel.begin() == kCalibrationFolder && rel.extension() == ".json" && rel.filename() != kDesignGpuFile)
      write_file(tmp / rel, calibration_to_json(published_calibration(read_calibration(root / rel))).dump(2) + "\n");
  write_file(tmp / "README.md", readme);
  write_file(tmp / "syllabus.md", syllabus);
  res.files = files.size() + 2;
  // The run logs and docs the lessons and the README cite come along; a link
  // that still leads nowhere is the course's to fix.
  const auto dead = complete_links(root, tmp, res.files);
  if (!dead.empty())
    throw PublishError("a link in the class copy leads nowhere, so nothing was published:\n  " + join(dead, "\n  ") +
                           "\nLink to a file the copy holds (docs/ files are copied when linked), or drop the link.",
                       kExitUsage);
  // The student files as handed out, so `grader reset` can restore one.
  for (std::size_t i = 0; i < p.labs.size(); ++i) {
    const fs::path skeleton = published_skeleton(tmp, p.labs[i]->folder, p.manifests[i].student_file);
    fs::create_directories(skeleton.parent_path());
    fs::copy_file(tmp / p.student_files[i], skeleton);
    res.files += 1;
  }

  const auto leaks = find_solution_leaks(tmp, probes);
  if (!leaks.empty())
    throw PublishError("solution source found in the class copy, so nothing was published:\n  " + join(leaks, "\n  ") +
                           "\nRemove it from the course (or move it out of the published folders) and publish again.",
                       kExitUsage);
  std::vector<std::pair<std::string, std::string>> texts;
  for (const auto& rel : all_files(tmp)) texts.emplace_back(rel, read_course_file(tmp / rel));
  const auto given = find_given_fixes(texts, fixes);
  if (!given.empty())
    throw PublishError("a step's fix is in the class copy, so nothing was published:\n  " + join(given, "\n  ") +
                           "\nA free hint may point at a fix but not state it (the paid hints may); no other file may "
                           "hold one, under any names. `grader check --static-only` lists the same.",
                       kExitUsage);

  json manifest = make_published_manifest(tmp, p.folders, p.student_files);
  if (o.hint_penalty) manifest["hint_penalty"] = *o.hint_penalty;
  res.protected_files = manifest["files"].size();
  write_file(tmp / kPublishedManifest, manifest.dump(2) + "\n");
  res.files += 1;
}

// `tmp` becomes `out`; an earlier copy there is put back if that fails.
void swap_into_place(const fs::path& tmp, const fs::path& out, bool exists) {
  if (!exists) {
    fs::rename(tmp, out);
    return;
  }
  std::error_code ec;
  const fs::path old = out.parent_path() / (out.filename().string() + ".old-" + std::to_string(getpid()));
  fs::rename(out, old);
  try {
    fs::rename(tmp, out);
  } catch (...) {
    fs::rename(old, out, ec);  // put the earlier copy back
    throw;
  }
  fs::remove_all(old, ec);
}

}  // namespace

namespace {

// The lab folders asked for, as the course on disk names them: what publish
// reads is known before the last commit is read.
std::vector<std::string> chosen_folders(const Course& course, const PublishOptions& o) {
  std::vector<std::string> out;
  if (o.labs.empty())
    for (const auto& l : course.labs()) out.push_back(l.folder);
  for (const auto& q : o.labs) out.push_back(course.resolve(q).folder);
  return out;
}

// Everything publish reads, relative to the course root: git status looks here.
std::vector<std::string> read_paths(const std::vector<std::string>& folders) {
  std::vector<std::string> out = {"README.md", "syllabus.md", "labs/" + std::string(kCourseSymptomHints)};
  for (const auto& f : folders) {
    out.push_back("labs/" + f);
    out.push_back("solutions/" + f);
  }
  out.insert(out.end(), kTrees.begin(), kTrees.end());
  out.insert(out.end(), kSingleFiles.begin(), kSingleFiles.end());
  out.push_back(kLinkedDocs);
  return out;
}

}  // namespace

PublishResult publish(const Course& disk, const PublishOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  PublishResult res;
  bool exists = false;
  const fs::path out = publish_destination(disk.root(), o, exists);
  res.out = out;
  if (o.hint_penalty && !(*o.hint_penalty >= 0))
    throw PublishError("--hint-penalty must be a number of points >= 0", kExitUsage);
  const auto snapshot = o.from_working_tree
                            ? working_tree(disk.root())
                            : committed_course(disk.root(), read_paths(chosen_folders(disk, o)), read_by_publish);
  res.source = snapshot->source();
  // From here on every file is read from the snapshot.
  const Course course = Course::open(snapshot->root());
  const fs::path root = course.root();
  const PublishedLabs labs = labs_to_publish(course, o);
  res.labs = labs.folders;

  // Read everything that can fail for a course reason before building anything.
  const std::vector<fs::path> files = select_files(root, labs.folders);
  const std::string readme =
      with_hint_policy(student_readme(read_course_file(root / "README.md")), HintPolicy{o.hint_penalty});
  const std::string syllabus = filter_syllabus(read_course_file(root / "syllabus.md"), labs.folders);
  std::vector<SolutionProbe> probes;
  std::vector<FixSource> fixes;
  std::error_code ec;
  for (const auto& l : course.labs()) {
    const fs::path sol = course.solution_kernel(l);
    if (!fs::is_regular_file(sol, ec)) continue;
    const std::string name = "solutions/" + l.folder + "/kernel.cu";
    const std::string skeleton = read_course_file(l.dir / "kernel.cu"), solution = read_course_file(sol);
    probes.push_back(make_solution_probe(name, skeleton, solution));
    fixes.push_back({name, step_fixes(skeleton, solution), {}});
    // A lab's free hints are shown in that lab only.
    for (std::size_t i = 0; i < labs.labs.size(); ++i)
      if (labs.labs[i]->folder == l.folder) fixes.back().hints = free_hints(labs.manifests[i]);
  }

  const fs::path tmp = out.parent_path() / (out.filename().string() + ".tmp-" + std::to_string(getpid()));
  fs::remove_all(tmp, ec);
  fs::create_directories(tmp);
  try {
    write_copy(root, tmp, labs, files, readme, syllabus, probes, fixes, o, res);
    swap_into_place(tmp, out, exists);
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
  if (o.from_working_tree)
    res.notes.push_back(
        "published from the working tree: the files on disk as they are, uncommitted edits and untracked files "
        "included");
  if (!o.hint_penalty)
    res.notes.push_back(
        "no --hint-penalty: the copy tells students that hints are counted and may cost points; "
        "publish with --hint-penalty P (0 for free hints) to state what they cost");
  if (const std::string w = hint_penalty_warning(o.hint_penalty); !w.empty()) res.warnings.push_back(w);
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return res;
}

}  // namespace grader
