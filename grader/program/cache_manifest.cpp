#include "cache_manifest.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <vector>

#include "sha256.hpp"
#include "text.hpp"

namespace fs = std::filesystem;

namespace grader::builder_detail {
namespace {

constexpr const char* kManifest = ".complete";
constexpr const char* kFormat = "memlabs-cache-entry/1";

// Why a path of an entry is not the grader's own, or "".
std::string ownership_problem(const fs::path& p, const struct stat& st) {
  if (st.st_uid != ::geteuid()) return p.string() + " belongs to another user (uid " + std::to_string(st.st_uid) + ")";
  if ((st.st_mode & 022) != 0) return p.string() + " may be written by others";
  return "";
}

// "<sha256> <relative path>" for every file under dir but the manifest, sorted;
// the first problem found goes to `problem` (then the text is incomplete).
std::string manifest_text(const fs::path& dir, std::string& problem) {
  std::vector<std::string> lines;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& p = it->path();
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0) return problem = "cannot read " + p.string(), "";
    if (S_ISLNK(st.st_mode)) return problem = p.string() + " is a link", "";
    if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) return problem = p.string() + " is not a plain file", "";
    if (!(problem = ownership_problem(p, st)).empty()) return "";
    if (S_ISDIR(st.st_mode) || p.filename() == kManifest) continue;
    lines.push_back(sha256_file(p) + " " + fs::relative(p, dir).string());
  }
  if (ec) return problem = "cannot list " + dir.string() + ": " + ec.message(), "";
  std::sort(lines.begin(), lines.end());
  std::ostringstream text;
  text << kFormat << "\n";
  for (const auto& l : lines) text << l << "\n";
  return text.str();
}

}  // namespace

void write_entry_manifest(const fs::path& dir) {
  std::error_code ec;
  fs::permissions(dir, fs::perms::group_write | fs::perms::others_write, fs::perm_options::remove, ec);
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (!it->is_symlink())
      fs::permissions(it->path(), fs::perms::group_write | fs::perms::others_write, fs::perm_options::remove, ec);
  std::string problem;
  const std::string text = manifest_text(dir, problem);
  if (!problem.empty()) throw std::runtime_error("cannot seal the cache entry " + dir.string() + ": " + problem);
  std::ofstream(dir / kManifest, std::ios::binary | std::ios::trunc) << text;
  fs::permissions(dir / kManifest, fs::perms::group_write | fs::perms::others_write, fs::perm_options::remove, ec);
}

std::string entry_problem(const fs::path& dir) {
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return dir.string() + " is not a folder";
  if (std::string p = ownership_problem(dir, st); !p.empty()) return p;
  const auto recorded = read_file(dir / kManifest);
  if (!recorded || recorded->rfind(std::string(kFormat) + "\n", 0) != 0) return "no manifest of its files";
  std::string problem;
  std::string now;
  try {
    now = manifest_text(dir, problem);
  } catch (const std::exception& e) {
    return e.what();
  }
  if (!problem.empty()) return problem;
  if (now != *recorded) return "its files are not what was built";
  return "";
}

}  // namespace grader::builder_detail
