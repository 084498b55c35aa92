#include "committed_course.hpp"

#include <unistd.h>

#include <atomic>

#include "child_process.hpp"
#include "options.hpp"
#include "publish.hpp"
#include "text.hpp"

namespace fs = std::filesystem;

namespace grader {
namespace {

struct Run {
  bool started = false, ok = false;
  std::string out, err;  // stdout, and the first line of stderr
};

// A program (git or tar) run in `cwd`, its output kept; interrupted, publish stops.
Run run_tool(const std::vector<std::string>& argv, const fs::path& cwd) {
  static std::atomic<int> counter{0};
  const fs::path err = fs::temp_directory_path() /
                       ("grader-publish-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + ".err");
  ChildOptions o;
  o.argv = argv;
  o.cwd = cwd;
  o.timeout_s = 300;
  o.capture_stdout_bytes = 64u << 20;
  o.stderr_file = err;
  o.max_file_bytes = 0;  // git archive writes the whole course
  const ChildResult r = run_child(o);
  Run out;
  out.started = r.started;
  out.ok = r.exited && r.exit_code == 0;
  out.out = r.stdout_text;
  out.err = first_line(trim(read_head(err, 4096)));
  if (out.err.empty()) out.err = r.started ? r.describe() : r.start_error;
  std::error_code ec;
  fs::remove(err, ec);
  if (r.interrupted) throw Interrupted();
  return out;
}

Run git(const fs::path& root, std::vector<std::string> args) {
  args.insert(args.begin(), "git");
  Run r = run_tool(args, root);
  if (!r.started)
    throw PublishError("git cannot be run (" + r.err +
                           "): publish reads the course as committed. Install git, or publish the files on disk with "
                           "--from-working-tree",
                       kExitEnvironment);
  return r;
}

std::string state_of(char x, char y) {
  if (x == '?') return "untracked";
  for (const char c : {x, y}) {
    if (c == 'D') return "deleted";
    if (c == 'U') return "unmerged";
  }
  if (x == 'A') return "added, not committed";
  if (x == 'R') return "renamed";
  if (x == 'C') return "copied";
  if (x == 'T' || y == 'T') return "type changed";
  return "modified";
}

}  // namespace

CourseSnapshot::~CourseSnapshot() {
  std::error_code ec;
  if (owned_) fs::remove_all(root_, ec);
}

std::vector<UncommittedFile> parse_git_status(const std::string& z, const std::string& prefix) {
  std::vector<UncommittedFile> out;
  std::vector<std::string> fields;
  for (std::size_t start = 0; start < z.size();) {
    const auto end = z.find('\0', start);
    fields.push_back(z.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const std::string& f = fields[i];
    if (f.size() < 4) continue;
    const char x = f[0], y = f[1];
    std::string path = f.substr(3);
    if (x == 'R' || x == 'C') ++i;  // the name it had before follows
    if (!prefix.empty() && path.rfind(prefix, 0) == 0) path = path.substr(prefix.size());
    out.push_back({path, state_of(x, y)});
  }
  return out;
}

std::unique_ptr<CourseSnapshot> committed_course(const fs::path& root, const std::vector<std::string>& paths,
                                                 const std::function<bool(const std::string&)>& matters) {
  const std::string how =
      "Publish a class copy from a commit of the course, or pass --from-working-tree to publish "
      "the files on disk as they are (uncommitted edits and stray files included)";
  Run where = git(root, {"rev-parse", "--show-prefix"});
  if (!where.ok) {
    if (where.err.find("not a git repository") != std::string::npos)
      throw PublishError(root.string() +
                             " is not in a git repository, so publish cannot tell the course's committed files from "
                             "edits and leftovers (a half-done kernel.cu, a scratch file in a lab folder). " +
                             how + ".",
                         kExitUsage);
    throw PublishError("git cannot read the course's repository (" + where.err + "). " + how + ".", kExitUsage);
  }
  const std::string prefix = trim(where.out);
  const Run head = git(root, {"rev-parse", "--short", "--verify", "--quiet", "HEAD^{commit}"});
  if (!head.ok) throw PublishError("the course's git repository has no commit yet. " + how + ".", kExitUsage);

  std::vector<std::string> args = {"status", "--porcelain=v1", "-z", "--untracked-files=all", "--"};
  args.insert(args.end(), paths.begin(), paths.end());
  const Run status = git(root, args);
  if (!status.ok) throw PublishError("git status failed in " + root.string() + ": " + status.err, kExitUsage);
  std::vector<std::string> changed;
  for (const auto& f : parse_git_status(status.out, prefix))
    if (matters(f.path)) changed.push_back(f.path + " (" + f.state + ")");
  if (!changed.empty()) {
    const std::size_t shown = std::min<std::size_t>(changed.size(), 30);
    std::string list = join(std::vector<std::string>(changed.begin(), changed.begin() + shown), "\n  ");
    if (changed.size() > shown) list += "\n  … and " + std::to_string(changed.size() - shown) + " more";
    throw PublishError(
        "these files of the course differ from its last commit, and a class copy is made from the last commit "
        "(HEAD " +
            trim(head.out) + "), so what is on disk is not what would be published:\n  " + list +
            "\nCommit what belongs in the copy (git add, git commit), set the rest aside (git stash "
            "--include-untracked) or delete it, and publish again; or pass --from-working-tree to publish the files "
            "on disk as they are.",
        kExitUsage);
  }

  static std::atomic<int> counter{0};
  const fs::path dir = fs::temp_directory_path() /
                       ("grader-publish-head-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir);
  auto snapshot = std::make_unique<CourseSnapshot>(dir, "commit " + trim(head.out) + " (HEAD)", true);
  fs::permissions(dir, fs::perms::owner_all, ec);  // the export holds the solutions
  // In a subfolder of its repository, `git archive HEAD` takes that folder only, its paths relative to it.
  const fs::path tar = dir / ".head.tar";
  const Run archive = git(root, {"archive", "--format=tar", "-o", tar.string(), "HEAD"});
  if (!archive.ok) throw PublishError("git archive HEAD failed in " + root.string() + ": " + archive.err, kExitUsage);
  const Run untar = run_tool({"tar", "-x", "-f", tar.string(), "-C", dir.string()}, dir);
  if (!untar.ok) throw PublishError("cannot unpack the course's last commit with tar: " + untar.err, kExitEnvironment);
  fs::remove(tar, ec);
  return snapshot;
}

std::unique_ptr<CourseSnapshot> working_tree(const fs::path& root) {
  return std::make_unique<CourseSnapshot>(root, "the working tree (--from-working-tree)", false);
}

}  // namespace grader
