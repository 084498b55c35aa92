#include "lab_reset.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

#include "child_process.hpp"
#include "publish.hpp"
#include "text.hpp"
#include "toolchain.hpp"

namespace fs = std::filesystem;

namespace grader {
namespace {

std::string read_skeleton_file(const fs::path& p) {
  if (auto text = read_file(p)) return *text;
  throw EnvironmentError("cannot read " + p.string());
}

// A new file holding `text`, fsynced, with `mode`; the caller moves it into place.
void write_new_file(const fs::path& p, const std::string& text, mode_t mode) {
  const int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) throw EnvironmentError("cannot create " + p.string() + ": " + std::strerror(errno));
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    done += static_cast<std::size_t>(n);
  }
  const int err = done == text.size() ? 0 : errno;
  const bool ok = done == text.size() && ::fchmod(fd, mode) == 0 && ::fsync(fd) == 0;
  const int why = ok ? 0 : (err ? err : errno);
  ::close(fd);
  if (!ok) {
    ::unlink(p.c_str());
    throw EnvironmentError("cannot write " + p.string() + ": " + std::strerror(why));
  }
}

fs::path temp_beside(const fs::path& file) {
  return file.parent_path() / ("." + file.filename().string() + ".grader-tmp-" + std::to_string(::getpid()));
}

Skeleton from_git(const Course& course, const LabInfo& lab, const std::string& student_file) {
  // "./" makes the path relative to the course root, wherever the repository's top is.
  const std::string object = "HEAD:./labs/" + lab.folder + "/" + student_file;
  const fs::path out = fs::temp_directory_path() / ("grader-reset-" + std::to_string(::getpid()) + ".out");
  const fs::path err = fs::temp_directory_path() / ("grader-reset-" + std::to_string(::getpid()) + ".err");
  ChildOptions o;
  o.argv = {"git", "show", object};
  o.cwd = course.root();
  o.timeout_s = 60;
  o.stdout_file = out;
  o.stderr_file = err;
  const ChildResult r = run_child(o);
  std::string bytes;
  if (std::ifstream raw(out, std::ios::binary); raw) bytes.assign(std::istreambuf_iterator<char>(raw), {});
  const std::string message = first_line(trim(read_head(err, 4096)));
  std::error_code ec;
  fs::remove(out, ec);
  fs::remove(err, ec);
  if (r.interrupted) throw Interrupted();
  const std::string why_not =
      "no skeleton of " + lab.id + " to restore: this is not a class copy made by `grader publish`, and ";
  if (!r.started)
    throw EnvironmentError(why_not + "git cannot be run to read the committed file (" + r.start_error + ")");
  if (!(r.exited && r.exit_code == 0))
    throw EnvironmentError(why_not + "`git show " + object + "` in " + course.root().string() + " failed (" +
                           (message.empty() ? r.describe() : message) + ")");
  return {bytes, "the course's last commit (git show " + object + ")"};
}

}  // namespace

Skeleton find_skeleton(const Course& course, const LabInfo& lab, const std::string& student_file) {
  std::error_code ec;
  if (!fs::exists(course.root() / kPublishedManifest, ec)) return from_git(course, lab, student_file);
  const fs::path copy = published_skeleton(course.root(), lab.folder, student_file);
  const std::string shown = fs::relative(copy, course.root()).generic_string();
  if (!fs::is_regular_file(copy, ec))
    throw EnvironmentError("no skeleton of " + lab.id + " to restore: this class copy has no " + shown +
                           " (copies published before `grader reset` existed lack it); ask your instructor for the "
                           "lab's kernel.cu or a fresh copy");
  return {read_skeleton_file(copy), "this class copy's " + shown};
}

fs::path backup_path(const fs::path& backups_dir, const std::string& student_file, std::time_t now) {
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", std::gmtime(&now));
  const fs::path name(student_file);
  return backups_dir / (name.stem().string() + "-" + stamp + name.extension().string());
}

fs::path write_backup(const fs::path& wanted, const std::string& text) {
  std::error_code ec;
  fs::create_directories(wanted.parent_path(), ec);
  if (ec) throw EnvironmentError("cannot create " + wanted.parent_path().string() + ": " + ec.message());
  const fs::path tmp = temp_beside(wanted);
  ::unlink(tmp.c_str());  // left by an earlier run of this pid that was killed
  write_new_file(tmp, text, 0644);
  // link() fails when the name exists, where rename() would replace it.
  for (int n = 1;; ++n) {
    fs::path p = wanted;
    if (n > 1) p.replace_filename(wanted.stem().string() + "-" + std::to_string(n) + wanted.extension().string());
    if (::link(tmp.c_str(), p.c_str()) == 0) {
      ::unlink(tmp.c_str());
      return p;
    }
    if (errno != EEXIST || n >= 1000) {
      const int why = errno;
      ::unlink(tmp.c_str());
      throw EnvironmentError("cannot write the backup " + p.string() + ": " + std::strerror(why));
    }
  }
}

void replace_file(const fs::path& file, const std::string& text) {
  struct stat st {};
  const mode_t mode = ::stat(file.c_str(), &st) == 0 ? (st.st_mode & 07777) : 0644;
  const fs::path tmp = temp_beside(file);
  ::unlink(tmp.c_str());
  write_new_file(tmp, text, mode);
  if (::rename(tmp.c_str(), file.c_str()) != 0) {
    const int why = errno;
    ::unlink(tmp.c_str());
    throw EnvironmentError("cannot replace " + file.string() + ": " + std::strerror(why));
  }
}

}  // namespace grader
