// `grader publish` end to end, by the real grader binary: publish lab07 into a
// temporary folder, check that nothing of the solution is in it (no source, no
// binary, no PTX), build the copy's own grader the way its README says, and
// grade lab07 there without solutions/ and without a GPU: the static steps are
// graded for real, with the referee built from the copy's own public files.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "child_process.hpp"
#include "course.hpp"
#include "publish.hpp"
#include "sha256.hpp"
#include "toolchain.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const fs::path kRoot = COURSE_ROOT;
const std::string kLab = "lab07-bank-conflicts";

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

struct Run {
  int exit_code = -1;
  json out;
  std::string raw, err;
};

// Runs a program with GRADER_NO_GPU=1 and no CUDA_LABS_ROOT, so the copy is
// found from cwd exactly as a student's shell would find it.
Run run(std::vector<std::string> argv, const fs::path& cwd, double timeout_s = 900) {
  static int counter = 0;
  const fs::path dir = fs::temp_directory_path() /
                       ("published_copy_test-out-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
  fs::create_directories(dir);
  grader::ChildOptions o;
  o.argv = std::move(argv);
  o.cwd = cwd;
  o.timeout_s = timeout_s;
  o.stdout_file = dir / "out";
  o.stderr_file = dir / "err";
  o.max_file_bytes = 0;
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string v(*e);
    if (v.rfind("GRADER_NO_GPU=", 0) != 0 && v.rfind("CUDA_LABS_ROOT=", 0) != 0) env.push_back(v);
  }
  env.emplace_back("GRADER_NO_GPU=1");
  o.env = env;
  const auto r = grader::run_child(o);
  Run g;
  g.exit_code = r.exited ? r.exit_code : -1;
  g.raw = read(o.stdout_file);
  g.err = read(o.stderr_file);
  if (!r.exited) g.err += "\n[" + r.describe() + "]";
  try {
    g.out = json::parse(g.raw);
  } catch (...) {
  }
  fs::remove_all(dir);
  return g;
}

const json* first_failing_step(const json& report) {
  for (const auto& s : report["steps"])
    if (s["status"] == "fail") return &s;
  return nullptr;
}

class Published : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kRoot / "solutions"))
      GTEST_SKIP() << "this is a published class copy (no solutions/): only the instructor's course can be published";
    work = fs::temp_directory_path() / ("published_copy_test-" + std::to_string(getpid()));
    fs::remove_all(work);
    fs::create_directories(work);
  }
  void TearDown() override {
    // Kept after a failure, to look at.
    if (!work.empty() && !HasFailure()) fs::remove_all(work);
  }
  fs::path work;
};

TEST_F(Published, RefusesToOverwriteWithoutForceOrSomethingThatIsNotACopy) {
  fs::create_directories(work / "taken");
  std::ofstream(work / "taken" / "notes.txt") << "someone's notes\n";
  auto g = run({GRADER_BIN, "--json", "--root", kRoot.string(), "publish", "--from-working-tree", "--out",
                (work / "taken").string(), "--labs", "lab07"},
               work);
  EXPECT_EQ(g.exit_code, 2) << g.raw << g.err;
  EXPECT_NE(g.out.value("error", "").find("already exists; --force"), std::string::npos) << g.raw;
  g = run({GRADER_BIN, "--json", "--root", kRoot.string(), "publish", "--from-working-tree", "--out",
           (work / "taken").string(), "--labs", "lab07", "--force"},
          work);
  EXPECT_EQ(g.exit_code, 2) << g.raw << g.err;
  EXPECT_NE(g.out.value("error", "").find("not a published copy"), std::string::npos) << g.raw;
  EXPECT_EQ(read(work / "taken" / "notes.txt"), "someone's notes\n");
  g = run({GRADER_BIN, "--json", "--root", kRoot.string(), "publish", "--from-working-tree", "--out",
           (kRoot / "labs" / "x").string()},
          work);
  EXPECT_EQ(g.exit_code, 2) << g.raw << g.err;
  EXPECT_FALSE(fs::exists(kRoot / "labs" / "x"));
}

TEST_F(Published, Lab07CopyHoldsNothingOfTheSolutionBuildsAndGrades) {
  const fs::path copy = work / "class";
  auto g = run({GRADER_BIN, "--json", "--root", kRoot.string(), "publish", "--from-working-tree", "--out",
                copy.string(), "--labs", "lab07"},
               work, 600);
  ASSERT_EQ(g.exit_code, 0) << g.raw << g.err;
  EXPECT_EQ(g.out["schema"], "cuda-memory-labs/publish/2");
  EXPECT_EQ(g.out["labs"], json::array({kLab}));
  for (const auto& e : fs::directory_iterator(work))
    EXPECT_EQ(e.path().filename(), "class") << "left behind: " << e.path();

  // ---- what is in the copy ----
  EXPECT_FALSE(fs::exists(copy / "solutions"));
  EXPECT_FALSE(fs::exists(copy / "tests" / "fixtures"));
  EXPECT_FALSE(fs::exists(copy / "scripts" / "gpu-check"));
  std::vector<std::string> labs;
  for (const auto& e : fs::directory_iterator(copy / "labs"))
    if (e.is_directory()) labs.push_back(e.path().filename().string());
  EXPECT_EQ(labs, std::vector<std::string>{kLab});
  EXPECT_TRUE(fs::is_regular_file(copy / "labs" / "symptom_hints.json"));  // the hints every lab shares
  for (const char* f :
       {"CMakeLists.txt", "CMakePresets.json", "scripts/setup", "docs/json-output.md", "docs/manifest.md",
        "grader/cli/main.cpp", "common/referee/referee_main.cpp", "tests/labs_test.cpp"})
    EXPECT_TRUE(fs::is_regular_file(copy / f)) << f;
  EXPECT_TRUE((fs::status(copy / "scripts/setup").permissions() & fs::perms::owner_exec) != fs::perms::none);

  // Nothing built: no program, no object, no PTX or cubin, so no form of the solution's kernels.
  for (const auto& e : fs::recursive_directory_iterator(copy)) {
    if (!e.is_regular_file()) continue;
    const std::string bytes = read(e.path());
    EXPECT_NE(bytes.rfind("\x7f"
                          "ELF",
                          0),
              0u)
        << e.path() << " is a binary";
    EXPECT_EQ(bytes.find('\0'), std::string::npos) << e.path() << " is not text";
    const std::string ext = e.path().extension().string();
    for (const char* built : {".ptx", ".cubin", ".fatbin", ".o", ".a", ".so"})
      EXPECT_NE(ext, built) << e.path() << " is built code";
  }

  const std::string syllabus = read(copy / "syllabus.md");
  EXPECT_NE(syllabus.find("| lab07-bank-conflicts |"), std::string::npos) << syllabus;
  EXPECT_EQ(syllabus.find("| lab06-"), std::string::npos) << syllabus;
  const std::string readme = read(copy / "README.md");
  EXPECT_NE(readme.find("## For students"), std::string::npos);
  EXPECT_EQ(readme.find("For instructors"), std::string::npos);
  EXPECT_EQ(readme.find("grader publish"), std::string::npos);

  // No solution source anywhere: not byte for byte, and not its filled-in regions.
  const auto course = grader::Course::open(kRoot);
  std::vector<grader::SolutionProbe> probes;
  for (const auto& lab : course.labs()) {
    const std::string solution = read(course.solution_kernel(lab));
    probes.push_back(grader::make_solution_probe(lab.folder, read(lab.dir / "kernel.cu"), solution));
    for (const auto& e : fs::recursive_directory_iterator(copy))
      if (e.is_regular_file()) EXPECT_NE(read(e.path()), solution) << e.path() << " is " << lab.folder << "'s solution";
  }
  EXPECT_EQ(grader::find_solution_leaks(copy, probes), std::vector<std::string>{});

  const json manifest = json::parse(read(copy / grader::kPublishedManifest));
  EXPECT_EQ(manifest["schema"], grader::kPublishedSchema);
  EXPECT_EQ(manifest["student_files"], json::array({"labs/" + kLab + "/kernel.cu"}));
  EXPECT_FALSE(manifest["files"].contains("labs/" + kLab + "/kernel.cu"));
  EXPECT_EQ(manifest["files"]["labs/" + kLab + "/driver.cu"], grader::sha256_file(copy / "labs" / kLab / "driver.cu"));
  // The skeleton as handed out, for `grader reset`, protected like the lab's files.
  const std::string skeleton_file = ".reference/" + kLab + "/skeleton/kernel.cu";
  EXPECT_EQ(read(copy / skeleton_file), read(kRoot / "labs" / kLab / "kernel.cu"));
  EXPECT_EQ(manifest["files"][skeleton_file], grader::sha256_file(copy / skeleton_file));

  g = run({GRADER_BIN, "--json", "--root", kRoot.string(), "publish", "--from-working-tree", "--out", copy.string(),
           "--labs", "lab07"},
          work);
  EXPECT_EQ(g.exit_code, 2) << g.raw << g.err;

  // ---- the copy's README build: its own CMake, the grader target only ----
  // Unoptimised: the copy's sources are the course's, which this build compiled with the preset's
  // flags already; what is new here is whether the copy holds every file its build needs, and an
  // -O0 build shows that for half the CPU time (77 against 142 seconds on this suite's 2-core machine).
  const auto cmake = grader::find_on_path("cmake");
  ASSERT_TRUE(cmake) << "cmake is not on PATH";
  g = run({cmake->string(), "--preset", "default", "-DCMAKE_CXX_FLAGS_RELEASE=-O0"}, copy, 900);
  ASSERT_EQ(g.exit_code, 0) << g.raw << g.err;
  g = run({cmake->string(), "--build", "--preset", "default", "--target", "grader"}, copy, 1500);
  ASSERT_EQ(g.exit_code, 0) << g.raw.substr(g.raw.size() > 4000 ? g.raw.size() - 4000 : 0) << g.err;
  const std::string grader_bin = (copy / "build" / "bin" / "grader").string();

  // ---- grading in the copy, no GPU: the skeleton fails step 1's ptx check ----
  g = run({grader_bin, "--json", "lab07"}, copy);
  ASSERT_TRUE(g.out.is_object()) << g.raw << g.err;
  EXPECT_EQ(g.exit_code, 1) << g.out.dump(1);
  EXPECT_EQ(g.out["expected_from"], "oracle") << g.out.dump(1);
  const json* step = first_failing_step(g.out);
  ASSERT_NE(step, nullptr) << g.out.dump(1);
  EXPECT_EQ((*step)["id"], 1);
  bool ptx_failed = false;
  for (const auto& c : (*step)["checks"]) ptx_failed = ptx_failed || (c["kind"] == "ptx" && c["status"] == "fail");
  EXPECT_TRUE(ptx_failed) << step->dump(1);

  // ---- the solution as the student's kernel.cu passes every static check ----
  fs::copy_file(kRoot / "solutions" / kLab / "kernel.cu", copy / "labs" / kLab / "kernel.cu",
                fs::copy_options::overwrite_existing);
  g = run({grader_bin, "--json", "lab07"}, copy);
  ASSERT_TRUE(g.out.is_object()) << g.raw << g.err;
  EXPECT_EQ(g.exit_code, 4) << g.out.dump(1);
  EXPECT_EQ(first_failing_step(g.out), nullptr) << g.out.dump(1);

  // Editing kernel.cu is the student's job: the copy is still intact.
  g = run({grader_bin, "--json", "verify"}, copy);
  EXPECT_EQ(g.exit_code, 0) << g.raw << g.err;
  EXPECT_EQ(g.out["ok"], true) << g.raw;

  // ---- an edited driver: verify names the file ----
  std::ofstream(copy / "labs" / kLab / "driver.cu", std::ios::app) << "\n// edited\n";
  g = run({grader_bin, "--json", "verify"}, copy);
  EXPECT_EQ(g.exit_code, 1) << g.raw << g.err;
  EXPECT_EQ(g.out["modified"], json::array({"labs/" + kLab + "/driver.cu"})) << g.raw;

  // ---- grader reset: the skeleton back from the copy's .reference/, never from git ----
  g = run({grader_bin, "--json", "reset", "lab07", "--yes"}, copy);
  EXPECT_EQ(g.exit_code, 0) << g.raw << g.err;
  EXPECT_NE(g.out.value("skeleton_from", "").find(skeleton_file), std::string::npos) << g.raw;
  EXPECT_EQ(read(copy / "labs" / kLab / "kernel.cu"), read(kRoot / "labs" / kLab / "kernel.cu"));
  EXPECT_EQ(read(copy / g.out.value("backup", "none")), read(kRoot / "solutions" / kLab / "kernel.cu"));
}

}  // namespace
