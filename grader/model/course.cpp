#include "course.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <regex>
#include <system_error>
#include <utility>

#include "edit_distance.hpp"
#include "sha256.hpp"
#include "text.hpp"

namespace grader {
namespace {

namespace fs = std::filesystem;

std::string in_quotes(const std::string& s) { return "\"" + s + "\""; }

// "a", "a or b", "a, b or c": reads as a sentence in "did you mean ...?".
std::string join_or(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += i + 1 == items.size() ? " or " : ", ";
    out += items[i];
  }
  return out;
}

std::string lab_ids(const std::vector<LabInfo>& labs) {
  if (labs.empty()) return "none: labs/ holds no labNN-topic folder";
  std::string out;
  for (const auto& lab : labs) out += (out.empty() ? "" : ", ") + lab.id;
  return out;
}

std::vector<LabInfo> scan_labs(const fs::path& labs_dir) {
  static const std::regex folder_re("^lab([0-9]{2})-([a-z0-9]+(-[a-z0-9]+)*)$");
  std::vector<LabInfo> labs;
  std::error_code ec;
  for (fs::directory_iterator it(labs_dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::smatch m;
    const std::string name = it->path().filename().string();
    std::error_code type_ec;
    if (!it->is_directory(type_ec) || !std::regex_match(name, m, folder_re)) continue;
    labs.push_back({name, "lab" + m[1].str(), std::stoi(m[1].str()), m[2].str(), it->path()});
  }
  if (ec) throw CourseError("cannot list " + labs_dir.string() + ": " + ec.message());

  std::sort(labs.begin(), labs.end(), [](const LabInfo& a, const LabInfo& b) {
    return a.number != b.number ? a.number < b.number : a.folder < b.folder;
  });
  // "lab07" and "7" must name one lab.
  for (std::size_t i = 1; i < labs.size(); ++i)
    if (labs[i].number == labs[i - 1].number)
      throw CourseError("labs/" + labs[i - 1].folder + " and labs/" + labs[i].folder + " both use number " +
                        labs[i].id.substr(3) + "; each lab needs its own number (in " + labs_dir.string() + ")");
  return labs;
}

}  // namespace

bool Course::is_root(const fs::path& dir) {
  std::error_code ec;
  return fs::is_directory(dir / "labs", ec) && fs::is_regular_file(dir / "syllabus.md", ec);
}

Course Course::open(const fs::path& root) {
  const std::string shown = in_quotes(root.string());
  if (root.empty()) throw CourseError("no course root given (an empty path)");
  std::error_code ec;
  if (!fs::exists(root, ec)) throw CourseError(shown + " is not a course root: no such folder");
  if (!fs::is_directory(root, ec)) throw CourseError(shown + " is not a course root: it is not a folder");

  std::vector<std::string> missing;
  if (!fs::is_directory(root / "labs", ec)) missing.push_back("no labs/ folder");
  if (!fs::is_regular_file(root / "syllabus.md", ec)) missing.push_back("no syllabus.md");
  if (!missing.empty())
    throw CourseError(shown + " is not a course root: it has " + missing[0] +
                      (missing.size() > 1 ? " and " + missing[1] : "") +
                      " (a course root holds both labs/ and syllabus.md)");

  Course course;
  course.root_ = fs::canonical(root, ec);
  if (ec) course.root_ = fs::absolute(root).lexically_normal();
  course.labs_ = scan_labs(course.root_ / "labs");
  course.state_dir_ = state_dir_for(course.root_, ::geteuid(), course.state_note_);
  return course;
}

Course Course::discover(const fs::path& explicit_root) {
  if (!explicit_root.empty()) return open(explicit_root);

  if (const char* env = std::getenv("CUDA_LABS_ROOT"); env && *env) {
    try {
      return open(env);
    } catch (const CourseError& e) {
      // A stale variable is a likelier cause than a broken course: say where the path came from.
      throw CourseError(std::string("CUDA_LABS_ROOT: ") + e.what());
    }
  }

  std::vector<fs::path> starts;
  std::error_code ec;
  if (fs::path cwd = fs::current_path(ec); !ec) starts.push_back(cwd);
  // An installed grader finds its own course even when run from elsewhere.
  if (fs::path exe = fs::read_symlink("/proc/self/exe", ec); !ec) starts.push_back(exe.parent_path());

  std::string searched;
  for (const auto& start : starts) {
    for (fs::path dir = start;; dir = dir.parent_path()) {
      if (is_root(dir)) return open(dir);
      if (dir == dir.parent_path()) break;
    }
    searched += (searched.empty() ? "" : " and from ") + start.string();
  }
  throw CourseError("no course root found (a folder holding labs/ and syllabus.md); searched up from " +
                    (searched.empty() ? std::string("nowhere") : searched) +
                    ". Run the grader inside the course or set CUDA_LABS_ROOT");
}

const LabInfo& Course::resolve(const std::string& query) const {
  const std::string asked = trim(query);
  const std::string q = lower(asked);
  if (q.empty()) throw UnknownLab("no lab named; the labs are " + lab_ids(labs_), {});

  for (const auto& lab : labs_)
    if (q == lab.folder || q == lab.id || q == lab.topic) return lab;

  static const std::regex number_re("^(lab)?([0-9]{1,3})$");
  if (std::smatch m; std::regex_match(q, m, number_re)) {
    const int n = std::stoi(m[2].str());
    for (const auto& lab : labs_)
      if (lab.number == n) return lab;
    // Numbers close in spelling are not close in meaning: list what exists instead.
    throw UnknownLab("no lab number " + std::to_string(n) + "; the labs are " + lab_ids(labs_), {});
  }

  std::vector<const LabInfo*> prefixed;
  for (const auto& lab : labs_)
    if (lab.topic.compare(0, q.size(), q) == 0) prefixed.push_back(&lab);
  if (prefixed.size() == 1) return *prefixed[0];
  if (prefixed.size() > 1) {
    std::vector<std::string> matches;
    for (const auto* lab : prefixed) matches.push_back(lab->folder);
    throw AmbiguousLab(
        "lab " + in_quotes(asked) + " is ambiguous: it could be " + join_or(matches) + "; give more of the name",
        matches);
  }

  const std::size_t limit = std::max<std::size_t>(1, q.size() / 3);
  std::vector<std::pair<std::size_t, const LabInfo*>> close;
  for (const auto& lab : labs_) {
    std::size_t d = std::min({edit_distance(q, lab.topic), edit_distance(q, lab.id), edit_distance(q, lab.folder)});
    if (d <= limit) close.emplace_back(d, &lab);
  }
  std::stable_sort(close.begin(), close.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> suggestions;
  for (std::size_t i = 0; i < close.size() && i < 3; ++i) suggestions.push_back(close[i].second->folder);

  if (suggestions.empty()) throw UnknownLab("no lab " + in_quotes(asked) + "; the labs are " + lab_ids(labs_), {});
  throw UnknownLab("no lab " + in_quotes(asked) + "; did you mean " + join_or(suggestions) + "?", suggestions);
}

fs::path Course::solution_kernel(const LabInfo& lab) const { return root_ / "solutions" / lab.folder / "kernel.cu"; }

namespace {

// Why this user cannot keep its state in `dir` (root/.grader), or "".
std::string cannot_keep_state_in(const fs::path& dir, unsigned euid) {
  struct stat st {};
  const bool exists = ::lstat(dir.c_str(), &st) == 0;
  const fs::path writable = exists ? dir : dir.parent_path();
  if (exists && !S_ISDIR(st.st_mode)) return dir.string() + " is not a folder";
  if (exists && st.st_uid != euid) return dir.string() + " belongs to another user";
  if (!exists && ::stat(writable.c_str(), &st) == 0 && st.st_uid != euid)
    return "the course folder belongs to another user";
  if (::access(writable.c_str(), W_OK) != 0)
    return std::string("the course folder is not writable here (") + std::strerror(errno) + ")";
  return "";
}

}  // namespace

fs::path state_dir_for(const fs::path& root, unsigned euid, std::string& note) {
  note.clear();
  const std::string why = cannot_keep_state_in(root / ".grader", euid);
  if (why.empty()) return root / ".grader";
  fs::path base;
  if (const char* xdg = std::getenv("XDG_STATE_HOME"); xdg && *xdg == '/')
    base = xdg;
  else if (const char* home = std::getenv("HOME"); home && *home == '/')
    base = fs::path(home) / ".local" / "state";
  else
    base = fs::temp_directory_path() / ("cuda-memory-labs-" + std::to_string(euid));
  const fs::path dir =
      base / "cuda-memory-labs" / (root.filename().string() + "-" + sha256_hex(root.string()).substr(0, 12));
  note = why + ": your progress, runs and builds are kept in " + dir.string();
  // Made first by someone else (a shared /tmp without a HOME, say): it could
  // hold anything they like, so it is never used.
  struct stat st {};
  if (::lstat(dir.c_str(), &st) == 0 && (!S_ISDIR(st.st_mode) || st.st_uid != euid))
    throw CourseError(dir.string() + " is not a folder of this user's, and the grader would keep its state there (" +
                      why + "): remove it, or set XDG_STATE_HOME to a folder of your own");
  return dir;
}

}  // namespace grader
