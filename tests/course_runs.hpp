// Helpers the course-level tests share: running the real grader binary on the
// course, telling whether a GPU is visible, and enumerating graded submission
// files (tests/fixtures/<lab>/*.cu, tests/faults/<lab>/*.cu).
// COURSE_ROOT and GRADER_BIN come from tests/CMakeLists.txt.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "child_process.hpp"
#include "course.hpp"

namespace course_runs {

namespace fs = std::filesystem;
using nlohmann::json;

inline const fs::path kRoot = COURSE_ROOT;

inline std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

struct GraderRun {
  int exit_code = -1;
  json out;
  std::string raw, err;
  std::string ended;  // how the grader ended: "exited with code 1", "killed by SIGSEGV ...", ...
};

// `grader --json --root kRoot ARGS...`; no_gpu sets GRADER_NO_GPU=1, else any
// GRADER_NO_GPU of the test's own environment is dropped. extra_env ("K=V")
// is added, e.g. the isolation settings of batch grading (sandbox.hpp); the
// rest of the test's environment goes with it (GRADER_ISOLATE=rlimits grades
// the fault suite in that mode).
inline GraderRun run_grader(const std::vector<std::string>& args, bool no_gpu,
                            const std::vector<std::string>& extra_env = {}) {
  static int counter = 0;
  const fs::path dir =
      fs::temp_directory_path() / ("grader-run-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
  fs::create_directories(dir);
  grader::ChildOptions o;
  o.argv = {GRADER_BIN, "--json", "--root", kRoot.string()};
  o.argv.insert(o.argv.end(), args.begin(), args.end());
  // A GPU grade waits its turn for the GPU behind every grade the other shards run (8 at once in
  // scripts/gpu-check: a lab06 attack took over 15 minutes so, most of it waiting); the tests' own
  // ctest limit is 1800 s, and this ends first so the test says what it was running.
  o.timeout_s = 1700;
  o.stdout_file = dir / "out";
  o.stderr_file = dir / "err";
  // extra_env replaces what the test's own environment says of the same names.
  std::vector<std::string> replaced = {"GRADER_NO_GPU="};
  for (const auto& kv : extra_env) replaced.push_back(kv.substr(0, kv.find('=') + 1));
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string entry(*e);
    bool keep = true;
    for (const auto& name : replaced) keep = keep && entry.rfind(name, 0) != 0;
    if (keep) env.push_back(entry);
  }
  if (no_gpu) env.emplace_back("GRADER_NO_GPU=1");
  env.insert(env.end(), extra_env.begin(), extra_env.end());
  o.env = env;
  const auto r = grader::run_child(o);
  GraderRun g;
  g.exit_code = r.exited ? r.exit_code : -1;
  g.ended = r.started ? r.describe() : r.start_error;
  g.raw = read(o.stdout_file);
  g.err = read(o.stderr_file);
  try {
    g.out = json::parse(g.raw);
  } catch (...) {
  }
  fs::remove_all(dir);
  return g;
}

// The reason GPU tests cannot run here, or "" when a device is visible.
inline const std::string& no_gpu_reason() {
  static const std::string reason = [] {
    const GraderRun d = run_grader({"doctor"}, false);
    if (d.out.is_object() && d.out.contains("gpu") && !d.out["gpu"].is_null()) return std::string();
    if (d.out.is_object() && d.out.contains("no_gpu_reason"))
      return "no GPU: " + d.out["no_gpu_reason"].get<std::string>();
    return "no GPU (grader doctor: " + d.raw + d.err + ")";
  }();
  return reason;
}

#define REQUIRE_GPU()                                                                            \
  do {                                                                                           \
    if (!::course_runs::no_gpu_reason().empty()) GTEST_SKIP() << ::course_runs::no_gpu_reason(); \
  } while (0)

inline std::vector<std::string> lab_folders() {
  std::vector<std::string> labs;
  const auto course = grader::Course::open(kRoot);
  for (const auto& l : course.labs()) labs.push_back(l.folder);
  return labs;
}

// One submission file graded as `lab`'s kernel.cu.
struct Fixture {
  std::string lab, name;
  fs::path file;
};

// So test names and failure messages show "lab/fixture", not bytes.
inline void PrintTo(const Fixture& f, std::ostream* os) { *os << f.lab << "/" << f.name; }

// dir/<lab folder>/*.cu for every lab of the course, sorted; none when dir is
// missing (a published class copy ships neither fixtures nor faults).
inline std::vector<Fixture> fixtures_in(const fs::path& dir) {
  std::vector<Fixture> all;
  if (!fs::exists(dir)) return all;
  for (const auto& lab : lab_folders()) {
    if (!fs::exists(dir / lab)) continue;
    std::vector<fs::path> files;
    for (const auto& f : fs::directory_iterator(dir / lab))
      if (f.path().extension() == ".cu") files.push_back(f.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) all.push_back({lab, f.stem().string(), f});
  }
  return all;
}

inline std::string test_name(const std::string& s) {
  std::string n;
  for (char c : s) n += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return n;
}

// "lab07_infinite_loop" for labs/lab07-bank-conflicts' infinite_loop.cu.
inline std::string fixture_test_name(const Fixture& f) { return test_name(f.lab.substr(0, 5) + "_" + f.name); }

}  // namespace course_runs
