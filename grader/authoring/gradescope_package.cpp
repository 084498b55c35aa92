#include "gradescope_package.hpp"

#include <unistd.h>

#include <fstream>
#include <sstream>

#include "options.hpp"
#include "publish.hpp"
#include "text.hpp"
#include "zip_writer.hpp"

namespace fs = std::filesystem;

namespace grader {

std::string gradescope_setup_script() {
  return R"(#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image: the
# packages the grader needs (scripts/setup installs what is missing), then the
# grader itself. The image must already hold the CUDA 13 toolkit (nvcc, ncu and
# compute-sanitizer: a base image such as nvidia/cuda:13.0.0-devel-ubuntu24.04)
# and must run on a machine with an NVIDIA GPU and a driver for CUDA 13; without
# one, every grade says "not graded: no GPU" and scores nothing.
set -euo pipefail
cd /autograder/source
bash scripts/setup
)";
}

std::string gradescope_run_script(const std::string& lab_folder, std::optional<double> hint_penalty) {
  std::string penalty;
  if (hint_penalty) {
    std::ostringstream p;
    p << *hint_penalty;
    penalty = " --hint-penalty " + p.str();
  }
  return R"(#!/usr/bin/env bash
# Gradescope runs this for each submission: grader gradescope grades the upload in
# /autograder/submission and writes /autograder/results/results.json (exit 0),
# or says why it could not grade (exit 4: no GPU, no sandbox; the file says so too).
cd /autograder/source || exit 4
exec build/bin/grader gradescope --lab )" +
         lab_folder + penalty + "\n";
}

GradescopePackageResult package_gradescope(const Course& course, const GradescopePackageOptions& o) {
  if (o.out.empty()) throw PublishError("--out names the .zip to write", kExitUsage);
  if (fs::exists(o.out) && !o.force)
    throw PublishError(o.out.string() + " exists: pass --force to replace it", kExitUsage);
  char pattern[] = "/tmp/grader-gradescope-XXXXXX";
  if (!::mkdtemp(pattern)) throw PublishError("cannot make a folder to build the package in", kExitEnvironment);
  const fs::path staging = pattern;
  struct Cleanup {
    fs::path dir;
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  } cleanup{staging};

  PublishOptions po;
  po.out = staging / "source";
  po.labs = {o.lab};
  po.hint_penalty = o.hint_penalty;
  po.from_working_tree = o.from_working_tree;
  const PublishResult published = publish(course, po);
  if (published.labs.size() != 1) throw PublishError("one lab per autograder: name it with --lab", kExitUsage);

  GradescopePackageResult r;
  r.lab = published.labs.front();
  r.source = published.source;
  r.notes = published.notes;
  r.warnings = published.warnings;
  std::vector<ZipEntry> entries = zip_entries_of(po.out);
  for (const auto& e : entries)
    if (e.name == "setup.sh" || e.name == "run_autograder")
      throw PublishError("the class copy already holds " + e.name + ", which the package would replace", kExitUsage);
  entries.push_back({"setup.sh", gradescope_setup_script(), 0755});
  entries.push_back({"run_autograder", gradescope_run_script(r.lab, o.hint_penalty), 0755});
  const std::string zip = zip_archive(entries);

  // Whole or not at all: written beside the target, then renamed over it.
  const fs::path tmp = o.out.string() + ".tmp-" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(zip.data(), static_cast<std::streamsize>(zip.size()));
    if (!out) {
      std::error_code ec;
      fs::remove(tmp, ec);
      throw PublishError("cannot write " + tmp.string(), kExitEnvironment);
    }
  }
  fs::rename(tmp, o.out);
  r.out = o.out;
  r.files = entries.size();
  r.bytes = zip.size();
  return r;
}

}  // namespace grader
