#include "prebuilt_reference.hpp"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <regex>

#include "child_process.hpp"
#include "sha256.hpp"

namespace fs = std::filesystem;

namespace grader {
namespace {

constexpr double kFatBuildTimeout = 1800;  // several archs of a cuBLAS-linked lab on a slow machine

std::vector<fs::path> files_with(const fs::path& dir, const std::vector<std::string>& extensions, bool recursive) {
  std::vector<fs::path> out;
  std::error_code ec;
  const auto consider = [&](const fs::directory_entry& e) {
    if (e.is_regular_file() &&
        std::find(extensions.begin(), extensions.end(), e.path().extension().string()) != extensions.end())
      out.push_back(e.path());
  };
  if (recursive)
    for (const auto& e : fs::recursive_directory_iterator(dir, ec)) consider(e);
  else
    for (const auto& e : fs::directory_iterator(dir, ec)) consider(e);
  std::sort(out.begin(), out.end());
  return out;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string utc_now() {
  char buf[32];
  const std::time_t t = std::time(nullptr);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

}  // namespace

std::string reference_source_hash(const fs::path& course_root, const fs::path& lab_dir) {
  // Each file as "name NUL sha256 LF": renaming or moving content between files changes the hash.
  Sha256 h;
  const auto add = [&](const std::string& name, const fs::path& file) {
    h.update(name).update("\0", 1).update(sha256_file(file)).update("\n");
  };
  add("lab/driver.cu", lab_dir / "driver.cu");
  for (const auto& f : files_with(lab_dir, {".cuh", ".h", ".hpp"}, false)) add("lab/" + f.filename().string(), f);
  const fs::path common = course_root / "common";
  for (const auto& f : files_with(common, {".cu", ".cuh", ".hpp", ".h"}, true))
    add("common/" + fs::relative(f, common).generic_string(), f);
  return h.hex();
}

std::optional<int> sm_number(const std::string& arch) {
  static const std::regex re("^sm_([1-9][0-9]{1,2})$");
  std::smatch m;
  if (!std::regex_match(arch, m, re)) return std::nullopt;
  return std::stoi(m[1]);
}

bool prebuilt_runs_on(const std::vector<std::string>& archs, const std::string& ptx, const std::string& device_arch) {
  const auto dev = sm_number(device_arch);
  if (!dev) return false;
  for (const auto& a : archs) {
    const auto n = sm_number(a);
    if (n && *n / 10 == *dev / 10 && *n <= *dev) return true;
  }
  if (ptx.rfind("compute_", 0) == 0) {
    const auto n = sm_number("sm_" + ptx.substr(8));
    if (n && *n <= *dev) return true;
  }
  return false;
}

std::optional<PrebuiltReference> find_prebuilt_reference(const fs::path& course_root, const std::string& lab_folder) {
  const fs::path dir = course_root / kReferenceDir / lab_folder;
  std::error_code ec;
  if (!fs::exists(dir / "runner", ec)) return std::nullopt;
  PrebuiltReference r;
  r.runner = dir / "runner";
  r.info_file = dir / "runner.json";
  r.lab = lab_folder;
  if (!fs::is_regular_file(r.runner, ec) || access(r.runner.c_str(), X_OK) != 0) {
    r.problem = r.runner.string() + " is not an executable file";
    return r;
  }
  try {
    std::ifstream in(r.info_file);
    if (!in) throw std::runtime_error("it is missing");
    const auto j = nlohmann::json::parse(in);
    if (j.value("schema", "") != kReferenceSchema)
      throw std::runtime_error("its schema is not " + std::string(kReferenceSchema));
    r.archs = j.at("archs").get<std::vector<std::string>>();
    r.ptx = j.at("ptx").get<std::string>();
    r.nvcc_version = j.value("nvcc", "");
    r.source_sha256 = j.at("source_sha256").get<std::string>();
  } catch (const std::exception& e) {
    r.problem = "cannot read " + r.info_file.string() + ": " + e.what();
  }
  return r;
}

bool build_fat_reference(const Toolchain& toolchain, const FatBuildRequest& q, std::string& log) {
  if (q.archs.empty()) {
    log = "no architectures to build for";
    return false;
  }
  fs::create_directories(q.out_dir);
  const fs::path work = q.out_dir / ("build.tmp-" + std::to_string(getpid()));
  fs::create_directories(work);
  // Compiled under a neutral name in a scratch folder, so no path of the
  // instructor's solution ends up in the shipped binary.
  fs::copy_file(q.solution, work / "kernel.cu", fs::copy_options::overwrite_existing);
  const fs::path common = q.course_root / "common";
  std::vector<std::string> argv = {toolchain.nvcc.string(), "-std=c++17", "-O3"};
  for (const auto& a : q.archs) {
    const std::string n = a.substr(3);
    argv.insert(argv.end(), {"-gencode", "arch=compute_" + n + ",code=sm_" + n});
  }
  const std::string top = q.archs.back().substr(3);
  argv.insert(argv.end(), {"-gencode", "arch=compute_" + top + ",code=compute_" + top});
  argv.insert(argv.end(), {"-I" + q.lab_dir.string(), "-I" + common.string(), (common / "runner_main.cu").string(),
                           (common / "timing.cu").string(), (q.lab_dir / "driver.cu").string(),
                           (work / "kernel.cu").string()});
  for (const auto& l : q.link_libraries) argv.push_back("-l" + l);
  argv.insert(argv.end(), {"-o", (q.out_dir / "runner").string()});
  if (q.verbose) {
    std::string line = "$";
    for (const auto& a : argv) line += " " + a;
    std::fprintf(stderr, "%s\n", line.c_str());
  }
  ChildOptions o;
  o.argv = argv;
  o.cwd = work;
  o.timeout_s = kFatBuildTimeout;
  o.stdout_file = o.stderr_file = work / "nvcc.log";
  o.max_file_bytes = 0;  // a fat binary of a cuBLAS lab is large
  const ChildResult r = run_child(o);
  if (r.interrupted) {
    std::error_code ec;
    fs::remove_all(work, ec);
    throw Interrupted();
  }
  log = read_file(work / "nvcc.log");
  std::error_code ec;
  fs::remove_all(work, ec);
  if (!r.started) {
    log += "could not start " + argv[0] + ": " + r.start_error + "\n";
    return false;
  }
  if (!(r.exited && r.exit_code == 0)) {
    log += "nvcc " + r.describe() + "\n";
    return false;
  }
  nlohmann::json info = {{"schema", kReferenceSchema},
                         {"lab", q.lab_folder},
                         {"archs", q.archs},
                         {"ptx", "compute_" + top},
                         {"nvcc", toolchain.version},
                         {"source_sha256", reference_source_hash(q.course_root, q.lab_dir)},
                         {"built_at", utc_now()}};
  std::ofstream(q.out_dir / "runner.json") << info.dump(2) << "\n";
  return true;
}

}  // namespace grader
