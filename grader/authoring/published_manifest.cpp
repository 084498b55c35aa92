// The protected-file manifest of a class copy (.grader-manifest.json) and
// `grader verify`'s reading of it; declared in publish.hpp.
#include <algorithm>
#include <fstream>

#include "options.hpp"
#include "publish.hpp"
#include "sha256.hpp"
#include "text.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace grader {
namespace {

// Every regular file under dir, relative and sorted.
std::vector<std::string> files_to_hash(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file() && !e.is_symlink()) out.push_back(fs::relative(e.path(), dir).generic_string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

bool is_student_file(const std::string& relative, const std::vector<std::string>& student_files) {
  return std::find(student_files.begin(), student_files.end(), relative) != student_files.end();
}

json make_published_manifest(const fs::path& dir, const std::vector<std::string>& lab_folders,
                             const std::vector<std::string>& student_files) {
  json files = json::object();
  for (const auto& rel : files_to_hash(dir)) {
    if (rel == kPublishedManifest || is_student_file(rel, student_files)) continue;
    files[rel] = sha256_file(dir / rel);
  }
  return {{"schema", kPublishedSchema},
          {"published_at", utc_now("%Y-%m-%dT%H:%M:%SZ")},
          {"labs", lab_folders},
          {"student_files", student_files},
          {"files", files}};
}

VerifyResult verify_published(const fs::path& root) {
  VerifyResult v;
  v.root = root;
  const fs::path file = root / kPublishedManifest;
  std::error_code ec;
  if (!fs::exists(file, ec))
    throw PublishError(root.string() + " is not a published class copy (it has no " + kPublishedManifest +
                           "); `grader verify` checks copies made by `grader publish`",
                       kExitUsage);
  json m;
  try {
    std::ifstream in(file);
    m = json::parse(in);
    if (m.value("schema", "") != kPublishedSchema)
      throw std::runtime_error("its schema is not " + std::string(kPublishedSchema));
    if (!m.contains("files") || !m["files"].is_object()) throw std::runtime_error("it has no \"files\" object");
  } catch (const std::exception& e) {
    throw PublishError("cannot read " + file.string() + ": " + e.what(), kExitUsage);
  }
  for (const auto& [rel, want] : m["files"].items()) {
    ++v.checked;
    const fs::path p = root / rel;
    if (!fs::is_regular_file(p, ec)) {
      v.missing.push_back(rel);
      continue;
    }
    if (!want.is_string() || sha256_file(p) != want.get<std::string>()) v.modified.push_back(rel);
  }
  return v;
}

}  // namespace grader
