// The submissions folder of `grader batch`: what counts as a submission and
// its id, which files are refused before anything is built, and what a row
// records of each (the content hash, the hints the student asked for).
#include <algorithm>
#include <fstream>
#include <map>
#include <stdexcept>

#include "batch.hpp"
#include "content_hash.hpp"
#include "text.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace grader {
namespace {

// Strict UTF-8 (see utf8_sequence_length), and no NUL.
bool is_utf8_text(const std::string& s) {
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t len = s[i] == '\0' ? 0 : utf8_sequence_length(s, i);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

}  // namespace

std::vector<Submission> discover_submissions(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw std::runtime_error("no submissions folder at " + dir.string());
  std::vector<fs::directory_entry> entries;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) entries.push_back(*it);
  if (ec) throw std::runtime_error("cannot list " + dir.string() + ": " + ec.message());
  std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.path() < b.path(); });

  std::vector<Submission> out;
  std::map<std::string, std::size_t> seen;
  for (const auto& e : entries) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name[0] == '.') continue;
    Submission s;
    const fs::file_status st = fs::symlink_status(e.path(), ec);
    if (fs::is_symlink(st)) {
      s.id = name;
      s.problem = "a symbolic link, not a submission (links could point anywhere)";
    } else if (fs::is_directory(st)) {
      s.id = name;
      s.folder = e.path();
      s.source = e.path() / "kernel.cu";
      if (!fs::exists(fs::symlink_status(s.source, ec))) s.problem = "missing: the folder has no kernel.cu";
    } else if (fs::is_regular_file(st) && e.path().extension() == ".cu") {
      s.id = e.path().stem().string();
      s.source = e.path();
    } else {
      s.id = name;
      s.problem = "not a submission: expected a folder holding kernel.cu or a file <id>.cu";
    }
    if (s.id.empty()) continue;
    if (auto it = seen.find(s.id); it != seen.end()) {
      s.problem = "duplicate id: " + out[it->second].id + " is already a submission (" + name + " skipped)";
      s.id += " (" + name + ")";
    }
    seen.emplace(s.id, out.size());
    out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end(), [](const Submission& a, const Submission& b) { return a.id < b.id; });
  return out;
}

std::string check_submission_file(const fs::path& file) {
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(file, ec);
  if (!fs::exists(st)) return "missing: " + file.filename().string() + " does not exist";
  if (fs::is_symlink(st)) return file.filename().string() + " is a symbolic link (links could point anywhere)";
  if (!fs::is_regular_file(st)) return file.filename().string() + " is not a regular file";
  const auto size = fs::file_size(file, ec);
  if (ec) return "cannot read " + file.filename().string() + ": " + ec.message();
  if (size == 0) return "empty: " + file.filename().string() + " has no content";
  if (size > kMaxSubmissionBytes)
    return "too large: " + std::to_string(size) + " bytes (a submission may have at most 1 MiB)";
  std::ifstream in(file, std::ios::binary);
  if (!in) return "cannot read " + file.filename().string();
  const std::string text = read_file(file).value_or("");
  if (text.find('\0') != std::string::npos)
    return "binary: " + file.filename().string() + " holds NUL bytes, not source code";
  if (!is_utf8_text(text)) return "binary: " + file.filename().string() + " is not UTF-8 text";
  return "";
}

std::string submission_hash(const fs::path& file) {
  std::error_code ec;
  if (file.empty() || !fs::is_regular_file(fs::symlink_status(file, ec))) return "";
  return ContentHash().add_file(file).hex();
}

int hints_used(const fs::path& folder, const std::string& lab_id) {
  if (folder.empty()) return 0;
  const fs::path file = folder / ".grader" / "progress.json";
  std::error_code ec;
  if (!fs::is_regular_file(fs::symlink_status(file, ec)) || fs::file_size(file, ec) > kMaxSubmissionBytes) return 0;
  try {
    const json j = json::parse(read_file(file).value_or(""));
    const json& hints = j.at("labs").at(lab_id).at("hints_shown");
    int total = 0;
    for (const auto& [step, count] : hints.items())
      if (count.is_number_integer() && count.get<int>() > 0) total += count.get<int>();
    return total;
  } catch (const std::exception&) {
    return 0;
  }
}

}  // namespace grader
