#include "progress.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <system_error>

#include "text.hpp"

namespace grader {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// JSON that parses but is not progress; caught inside load().
class ShapeError : public std::runtime_error {
  using runtime_error::runtime_error;
};

void need(bool ok, const std::string& path, const std::string& expected) {
  if (!ok) throw ShapeError(path + ": expected " + expected);
}

int read_int(const json& v, const std::string& path, int lo) {
  need(v.is_number_integer() && v.get<std::int64_t>() >= lo && v.get<std::int64_t>() <= std::numeric_limits<int>::max(),
       path, "an integer >= " + std::to_string(lo));
  return v.get<int>();
}

int read_step_key(const std::string& key, const std::string& path) {
  need(!key.empty() && key.size() <= 9 && key.find_first_not_of("0123456789") == std::string::npos, path,
       "step numbers as keys, got \"" + key + "\"");
  return std::stoi(key);
}

std::string read_text(const json& v, const std::string& path) {
  need(v.is_string(), path, "a string");
  return v.get<std::string>();
}

// Keys this grader does not know are skipped, so a newer grader's additions
// do not make an older one throw the whole file away.
LabProgress read_lab(const json& v, const std::string& path) {
  need(v.is_object(), path, "an object");
  LabProgress p;
  if (auto it = v.find("steps_passed"); it != v.end()) {
    need(it->is_array(), path + ".steps_passed", "an array of step numbers");
    for (std::size_t i = 0; i < it->size(); ++i)
      p.steps_passed.insert(read_int((*it)[i], path + ".steps_passed[" + std::to_string(i) + "]", 1));
  }
  if (auto it = v.find("hints_shown"); it != v.end()) {
    need(it->is_object(), path + ".hints_shown", "an object");
    for (const auto& item : it->items()) {
      const std::string at = path + ".hints_shown." + item.key();
      p.hints_shown[read_step_key(item.key(), at)] = read_int(item.value(), at, 0);
    }
  }
  if (auto it = v.find("best"); it != v.end()) {
    need(it->is_object(), path + ".best", "an object");
    for (const auto& item : it->items()) {
      need(item.value().is_number(), path + ".best." + item.key(), "a number");
      p.best[item.key()] = item.value().get<double>();
    }
  }
  if (auto it = v.find("last_summary"); it != v.end()) p.last_summary = read_text(*it, path + ".last_summary");
  if (auto it = v.find("graded_at"); it != v.end()) p.graded_at = read_text(*it, path + ".graded_at");
  return p;
}

std::map<std::string, LabProgress> read_progress(const json& j) {
  need(j.is_object(), "the top level", "an object");
  auto version = j.find("format_version");
  need(version != j.end() && *version == kProgressFormatVersion, "format_version",
       std::to_string(kProgressFormatVersion));
  auto labs = j.find("labs");
  need(labs != j.end() && labs->is_object(), "labs", "an object of labs");
  std::map<std::string, LabProgress> out;
  for (const auto& item : labs->items()) out[item.key()] = read_lab(item.value(), "labs." + item.key());
  return out;
}

json to_json(const std::map<std::string, LabProgress>& labs) {
  json out = json::object();
  for (const auto& [id, p] : labs) {
    json hints = json::object();
    for (const auto& [step, count] : p.hints_shown) hints[std::to_string(step)] = count;
    out[id] = {{"steps_passed", p.steps_passed},
               {"hints_shown", hints},
               {"best", p.best},
               {"last_summary", p.last_summary},
               {"graded_at", p.graded_at}};
  }
  return {{"format_version", kProgressFormatVersion}, {"labs", out}};
}

// Why the file at `file` cannot be used as progress; empty when it can.
std::string read_problem(const fs::path& file, std::map<std::string, LabProgress>& labs) {
  std::error_code ec;
  if (fs::is_directory(file, ec)) return "is a folder";
  std::ifstream in(file, std::ios::binary);
  if (!in) return std::string("cannot be read (") + std::strerror(errno) + ")";
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return "cannot be read";
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    return "is not valid JSON (error at byte " + std::to_string(e.byte) + ")";
  }
  try {
    labs = read_progress(j);
  } catch (const ShapeError& e) {
    return std::string("is not progress data (") + e.what() + ")";
  }
  return "";
}

}  // namespace

ProgressStore::ProgressStore(fs::path file) : file_(std::move(file)) {}

std::vector<std::string> ProgressStore::load() {
  labs_.clear();
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(file_, ec))) return {};

  const std::string problem = read_problem(file_, labs_);
  if (problem.empty()) return {};
  labs_.clear();

  // Keep the damaged file for a human to look at; the timestamp keeps earlier ones.
  fs::path aside = file_;
  aside += ".corrupt-" + utc_now("%Y%m%dT%H%M%SZ");
  for (int n = 2; fs::exists(fs::symlink_status(aside, ec)); ++n) {
    aside = file_;
    aside += ".corrupt-" + utc_now("%Y%m%dT%H%M%SZ") + "-" + std::to_string(n);
  }
  fs::rename(file_, aside, ec);
  const std::string head = "progress file " + file_.string() + " " + problem;
  if (ec)
    return {head + "; could not move it aside (" + ec.message() +
            "), so progress starts empty and the next save replaces it"};
  return {head + "; moved it to " + aside.string() + " and started with empty progress"};
}

LabProgress& ProgressStore::lab(const std::string& lab_id) { return labs_[lab_id]; }

const LabProgress* ProgressStore::find(const std::string& lab_id) const {
  auto it = labs_.find(lab_id);
  return it == labs_.end() ? nullptr : &it->second;
}

void ProgressStore::record_best(const std::string& lab_id, const std::string& key, double value) {
  if (!std::isfinite(value)) return;
  auto& best = labs_[lab_id].best;
  auto it = best.find(key);
  if (it == best.end() || value > it->second) best[key] = value;
}

void ProgressStore::save() const {
  const fs::path dir = file_.parent_path();
  std::error_code ec;
  if (!dir.empty()) fs::create_directories(dir, ec);
  if (ec) throw ProgressError("cannot create " + dir.string() + " for progress: " + ec.message());

  // Summaries may quote compiler output; bad UTF-8 must not make saving fail.
  const std::string text = to_json(labs_).dump(2, ' ', false, json::error_handler_t::replace) + "\n";

  fs::path tmp = file_;
  tmp += ".tmp." + std::to_string(getpid());
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw ProgressError("cannot write " + tmp.string() + ": " + std::strerror(errno));
  bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size() && std::fflush(f) == 0 && fsync(fileno(f)) == 0;
  int err = errno;
  if (std::fclose(f) != 0 && ok) ok = false, err = errno;
  if (ok && std::rename(tmp.c_str(), file_.c_str()) != 0) ok = false, err = errno;
  if (!ok) {
    std::remove(tmp.c_str());
    throw ProgressError("cannot save progress to " + file_.string() + ": " + std::strerror(err));
  }

  // The rename is durable only once the folder's entry is on disk.
  int dfd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (dfd >= 0) {
    fsync(dfd);
    ::close(dfd);
  }
}

std::vector<std::string> ProgressStore::update(const std::function<void(ProgressStore&)>& change) {
  const fs::path dir = file_.parent_path();
  std::error_code ec;
  if (!dir.empty()) fs::create_directories(dir, ec);
  fs::path lock_file = file_;
  lock_file += ".lock";
  const int fd = ::open(lock_file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) throw ProgressError("cannot open " + lock_file.string() + ": " + std::strerror(errno));
  struct Unlock {
    int fd;
    ~Unlock() { ::close(fd); }  // closing releases the flock
  } unlock{fd};
  while (::flock(fd, LOCK_EX) != 0)
    if (errno != EINTR) throw ProgressError("cannot lock " + lock_file.string() + ": " + std::strerror(errno));

  // Every writer holds this lock while it saves, so a temporary file seen now
  // belongs to one that was killed before its rename.
  const std::string stale_prefix = file_.filename().string() + ".tmp";
  for (fs::directory_iterator it(dir.empty() ? fs::path(".") : dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().filename().string().rfind(stale_prefix, 0) == 0) fs::remove(it->path(), ec);

  std::vector<std::string> warnings = load();
  change(*this);
  save();
  return warnings;
}

std::string utc_now_iso8601() { return utc_now("%Y-%m-%dT%H:%M:%SZ"); }

}  // namespace grader
