// The grader's command line as a newcomer meets it, by the real binary: a
// mistyped command gets a suggestion, `grader help` lists the commands, a bad
// argument under --json is a JSON error, a number option takes only a finite
// number in its range, a seed is read as printed, a made-up --arch is refused, and a
// grade says plainly what ran (no GPU: the static checks pass or not; a failed
// build grades nothing; --timings says where the time went; a deleted kernel.cu
// is named with the command that restores it; no toolkit is said to be the
// machine's, with what to install; what the compiler says of a submission is
// shown as text, never as terminal input or JSON that cannot be written). A class copy with a hint
// penalty shows no paid hint without the student's agreement.
//
// The GPU is hidden from every grade here (CUDA_VISIBLE_DEVICES empty), so the
// verdicts are the same on a machine with one. Grades need nvcc.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "child_process.hpp"
#include "sandbox.hpp"
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

struct Result {
  int exit_code = -1;
  std::string out, err;
};

// The environment of this process with the GPU hidden and nvcc findable.
std::vector<std::string> environment_without_gpu() {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string kv = *e;
    if (kv.rfind("CUDA_VISIBLE_DEVICES=", 0) != 0) env.push_back(kv);
  }
  env.push_back("CUDA_VISIBLE_DEVICES=");
  return env;
}

// stdin is /dev/null (run_child's), so never a terminal.
Result run(std::vector<std::string> args, const fs::path& cwd = kRoot, double timeout_s = 1200) {
  static int counter = 0;
  const fs::path dir =
      fs::temp_directory_path() / ("cli_test-out-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
  fs::create_directories(dir);
  grader::ChildOptions o;
  o.argv = {GRADER_BIN};
  o.argv.insert(o.argv.end(), args.begin(), args.end());
  o.cwd = cwd;
  o.timeout_s = timeout_s;
  o.env = environment_without_gpu();
  o.stdout_file = dir / "out";
  o.stderr_file = dir / "err";
  const auto r = grader::run_child(o);
  Result g;
  g.exit_code = r.exited ? r.exit_code : -1;
  g.out = read(o.stdout_file);
  g.err = read(o.stderr_file);
  if (!r.exited) g.err += "\n[" + r.describe() + "]";
  fs::remove_all(dir);
  return g;
}

bool have_nvcc() { return grader::find_nvcc().has_value(); }

#define REQUIRE_NVCC()                                                               \
  do {                                                                               \
    if (!have_nvcc()) GTEST_SKIP() << "no nvcc on this machine: no grade can build"; \
  } while (0)

TEST(Cli, AMistypedCommandGetsASuggestion) {
  for (const auto& [typed, meant] :
       {std::pair<std::string, std::string>{"grde", "grade"}, {"lsit", "list"}, {"doctr", "doctor"}}) {
    const auto r = run({typed, "lab07"});
    EXPECT_EQ(r.exit_code, 2) << typed << "\n" << r.out << r.err;
    EXPECT_NE(r.err.find("did you mean `grader " + meant + "`"), std::string::npos) << typed << "\n" << r.err;
  }
}

TEST(Cli, AMistypedCommandUnderJsonIsAJsonError) {
  const auto r = run({"--json", "grde", "lab07"});
  EXPECT_EQ(r.exit_code, 2);
  const json j = json::parse(r.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << r.out;
  EXPECT_EQ(j["schema"], "cuda-memory-labs/error/1");
  EXPECT_EQ(j["exit_code"], 2);
  EXPECT_NE(j["error"].get<std::string>().find("grade"), std::string::npos) << j.dump();
}

TEST(Cli, HelpListsEveryCommandAndEachCommandsOptions) {
  const auto all = run({"help"});
  EXPECT_EQ(all.exit_code, 0) << all.err;
  for (const char* cmd :
       {"grade", "list", "hint", "bench", "check", "publish", "package", "batch", "watch", "reset", "doctor"})
    EXPECT_NE(all.out.find(std::string("  ") + cmd + " "), std::string::npos) << cmd << " missing from:\n" << all.out;
  const auto grade = run({"help", "grade"});
  EXPECT_EQ(grade.exit_code, 0) << grade.err;
  EXPECT_NE(grade.out.find("--timings"), std::string::npos) << grade.out;
  EXPECT_NE(grade.out.find("--submission"), std::string::npos) << grade.out;
}

// A refused command line is said in the grader's words: the command, the word
// it did not expect, the option probably meant, where its help is; rc 2. (CLI11
// said "The following arguments were not expected: 5 --sed", `grader help foo`
// printed the general help with rc 0, `grader reset` said "lab is required".)
TEST(Cli, ARefusedCommandLineSaysWhatWasMeant) {
  const auto sed = run({"grade", "lab07", "--sed", "5"});
  EXPECT_EQ(sed.exit_code, 2);
  EXPECT_NE(sed.err.find("grader grade: no option --sed; did you mean --seed?"), std::string::npos) << sed.err;
  EXPECT_NE(sed.err.find("grader grade --help"), std::string::npos) << sed.err;
  const auto jobs = run({"batch", "class", "--lab", "7", "--job", "3"});
  EXPECT_EQ(jobs.exit_code, 2);
  EXPECT_NE(jobs.err.find("did you mean --jobs?"), std::string::npos) << jobs.err;
  const auto extra = run({"grade", "lab07", "extra"});
  EXPECT_EQ(extra.exit_code, 2);
  EXPECT_NE(extra.err.find("grader grade: unexpected \"extra\""), std::string::npos) << extra.err;
  const auto reset = run({"reset"});
  EXPECT_EQ(reset.exit_code, 2);
  EXPECT_NE(reset.err.find("grader reset needs its lab: grader reset LAB (e.g. grader reset lab07"), std::string::npos)
      << reset.err;
  const auto help = run({"help", "foo"});
  EXPECT_EQ(help.exit_code, 2) << help.out;
  EXPECT_NE(help.err.find("no command \"foo\""), std::string::npos) << help.err;
  const auto typo = run({"help", "gradee"});
  EXPECT_EQ(typo.exit_code, 2) << typo.out;
  EXPECT_NE(typo.err.find("did you mean `grader help grade`?"), std::string::npos) << typo.err;
}

TEST(Cli, ABadArgumentUnderJsonIsAJsonError) {
  const auto r = run({"--json", "grade", "lab07", "--no-such-option"});
  EXPECT_EQ(r.exit_code, 2);
  const json j = json::parse(r.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << "not JSON: " << r.out;
  EXPECT_EQ(j["schema"], "cuda-memory-labs/error/1");
  EXPECT_NE(j["error"].get<std::string>().find("--no-such-option"), std::string::npos) << j.dump();
}

// A number option holds a finite number in its range, or the command stops
// before doing anything and names the option: a NaN or infinite --cap would
// never end a timing, a NaN --hint-penalty would put NaN in a gradebook, and
// "--seed -5" once became seed 18446744073709551611.
// --isolation is one of three names: a typo is refused, never read as auto
// (gradescope took any text but rlimits and bwrap as auto).
TEST(Cli, AnIsolationNothingKnowsIsRefused) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"batch", "class", "--lab", "lab07", "--isolation", "bwarp"},
        std::vector<std::string>{"gradescope", "--lab", "lab07", "--isolation", "bwarp"}}) {
    const auto r = run(args);
    EXPECT_EQ(r.exit_code, 2) << args[0] << "\n" << r.out << r.err;
    EXPECT_NE(r.err.find("--isolation must be auto, bwrap or rlimits, got \"bwarp\""), std::string::npos)
        << args[0] << "\n"
        << r.err;
  }
}

TEST(Cli, ANumberOptionRefusesWhatIsNotAFiniteNumberInItsRange) {
  const std::vector<std::vector<std::string>> bad = {
      {"grade", "lab07", "--seed", "banana"},
      {"grade", "lab07", "--seed", "-5"},
      {"grade", "lab07", "--seed", "12abc"},
      {"grade", "lab07", "--seed", "18446744073709551616"},
      {"grade", "lab07", "--cap", "nan"},
      {"grade", "lab07", "--cap", "inf"},
      {"grade", "lab07", "--cap", "0"},
      {"grade", "lab07", "--decide-margin", "nan"},
      {"check", "lab07", "--cap", "-1"},
      {"bench", "lab07", "--seed", "0xZZ"},
      {"batch", "class", "--lab", "lab07", "--hint-penalty", "nan"},
      {"batch", "class", "--lab", "lab07", "--jobs", "0"},
      {"batch", "class", "--lab", "lab07", "--timeout", "inf"},
      {"gradescope", "--lab", "lab07", "--hint-penalty", "inf"},
      {"gradescope", "--lab", "lab07", "--timeout", "nan"},
      {"collect", "out", "--lab", "lab07", "--hint-penalty", "-1"},
      {"publish", "--out", "copy", "--hint-penalty", "nan"},
  };
  for (const auto& args : bad) {
    std::string line;
    for (const auto& a : args) line += " " + a;
    const auto r = run(args);
    EXPECT_EQ(r.exit_code, 2) << line << "\n" << r.out << r.err;
    EXPECT_NE(r.err.find(args[args.size() - 2] + ":"), std::string::npos) << line << ": names the option\n" << r.err;
    EXPECT_NE(r.err.find(args.back()), std::string::npos) << line << ": quotes the value\n" << r.err;
  }
  const auto step = run({"hint", "lab07", "--step", "0"});
  EXPECT_EQ(step.exit_code, 2) << step.out << step.err;
  EXPECT_NE(step.err.find("no step 0"), std::string::npos) << "not the current step's hint:\n" << step.out << step.err;
}

// Results go to a folder: a file given as --out is refused before anything is
// built, and left as it was.
TEST(Cli, ABatchOutThatIsAFileIsRefused) {
  const fs::path file = fs::temp_directory_path() / ("cli_test-out-file-" + std::to_string(getpid()));
  std::ofstream(file) << "notes\n";
  const auto r = run({"batch", kRoot.string(), "--lab", "lab07", "--out", file.string()});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("is a file: give a folder"), std::string::npos) << r.err;
  EXPECT_EQ(read(file), "notes\n");
  fs::remove(file);
}

// A seed is read as a grade prints it: decimal even with leading zeros, or hex after 0x.
TEST(Cli, ASeedIsReadAsAGradePrintsIt) {
  REQUIRE_NVCC();
  const std::string skeleton = (kRoot / "labs" / kLab / "kernel.cu").string();
  for (const auto& [typed, printed] :
       {std::pair<std::string, std::string>{"010", "seed 10\n"}, {"0x1F", "seed 31\n"}}) {
    const auto r = run({"--no-color", "grade", "lab07", "--submission", skeleton, "--seed", typed});
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    EXPECT_NE(r.out.find(printed), std::string::npos) << typed << ":\n" << r.out;
  }
}

TEST(Cli, AnArchitectureNvccCannotBuildIsRefused) {
  REQUIRE_NVCC();
  const auto r = run({"--arch", "banana", "grade", "lab07"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("--arch banana is not a GPU architecture"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("sm_90"), std::string::npos) << "names the architectures this nvcc builds for:\n" << r.err;
}

// No CUDA toolkit: a grade says what is missing and how to get it, with exit
// code 4 (the machine, not the student's code). The toolkit's folder is hidden
// by a bwrap mount, as if it had never been installed.
TEST(Cli, WithoutNvccAGradeSaysWhatToInstall) {
  REQUIRE_NVCC();
  const grader::BwrapStatus bw = grader::probe_bwrap();
  if (!bw.works) GTEST_SKIP() << "bwrap cannot hide the toolkit here: " << bw.reason;
  const fs::path toolkit = fs::canonical(*grader::find_nvcc()).parent_path().parent_path();
  const std::string where = toolkit.string();
  if (where.rfind("/usr/local/", 0) != 0 && where.rfind("/opt/", 0) != 0)
    GTEST_SKIP() << "the toolkit lies in " << where << ": hiding it would hide the system with it";
  grader::ChildOptions o;
  o.argv = {bw.program.string(), "--dev-bind", "/", "/", "--tmpfs", toolkit.string()};
  o.argv.insert(o.argv.end(), {"env", "-u", "CUDACXX", "-u", "CUDA_HOME", "PATH=/usr/bin:/bin"});
  o.argv.insert(o.argv.end(), {GRADER_BIN, "--json", "grade", "lab07"});
  o.cwd = kRoot;
  o.capture_stdout_bytes = 1 << 20;
  const auto r = grader::run_child(o);
  ASSERT_TRUE(r.exited) << r.describe();
  EXPECT_EQ(r.exit_code, 4) << r.stdout_text;
  const json j = json::parse(r.stdout_text, nullptr, false);
  ASSERT_TRUE(j.is_object()) << r.stdout_text;
  const std::string error = j.value("error", "");
  EXPECT_NE(error.find("nvcc (the CUDA compiler) was not found"), std::string::npos) << j;
  EXPECT_NE(error.find("Install the CUDA Toolkit"), std::string::npos) << j;
}

// A CUDA 12 nvcc first (simulated: a script that answers --version as CUDA 12.4's does):
// doctor and a grade say what the course needs and what to install, never a compile error.
TEST(Cli, AnOlderToolkitSaysWhatToInstall) {
  const fs::path dir = fs::temp_directory_path() / ("cli_test-cuda12-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path nvcc = dir / "nvcc";
  std::ofstream(nvcc) << "#!/bin/sh\necho 'nvcc: NVIDIA (R) Cuda compiler driver'\n"
                         "echo 'Cuda compilation tools, release 12.4, V12.4.131'\n";
  fs::permissions(nvcc, fs::perms::owner_all);
  for (const std::vector<std::string> command :
       {std::vector<std::string>{"--json", "doctor"}, std::vector<std::string>{"--json", "grade", "lab07"}}) {
    grader::ChildOptions o;
    o.argv = {GRADER_BIN};
    o.argv.insert(o.argv.end(), command.begin(), command.end());
    o.cwd = kRoot;
    std::vector<std::string> env = environment_without_gpu();
    env.push_back("CUDACXX=" + nvcc.string());
    o.env = env;
    o.capture_stdout_bytes = 1 << 20;
    const auto r = grader::run_child(o);
    ASSERT_TRUE(r.exited) << r.describe();
    EXPECT_EQ(r.exit_code, 4) << r.stdout_text;
    const std::string text = r.stdout_text;
    EXPECT_NE(text.find("needs CUDA 13 or newer"), std::string::npos) << text;
    EXPECT_NE(text.find("CUDA 12.4.131"), std::string::npos) << text;
    EXPECT_NE(text.find("cuda-toolkit-13-0"), std::string::npos) << text;
    EXPECT_NE(text.find("R580"), std::string::npos) << text;
  }
  fs::remove_all(dir);
}

TEST(Cli, WithoutAGpuAPassingStaticGradeSaysSoAndHowTheTimeWent) {
  REQUIRE_NVCC();
  const auto r = run({"--no-color", "grade", "lab07", "--submission",
                      (kRoot / "solutions" / kLab / "kernel.cu").string(), "--timings"});
  if (!fs::exists(kRoot / "solutions")) GTEST_SKIP() << "a class copy has no solutions";
  EXPECT_EQ(r.exit_code, 4) << r.out << r.err;  // the GPU steps could not run
  EXPECT_NE(r.out.find("The static checks pass. The other checks need a GPU"), std::string::npos) << r.out;
  const auto table = r.out.find("Where the time went:");
  ASSERT_NE(table, std::string::npos) << r.out;
  EXPECT_NE(r.out.find("building kernel.cu", table), std::string::npos) << r.out.substr(table);
  EXPECT_NE(r.out.find("in all", table), std::string::npos) << r.out.substr(table);
}

TEST(Cli, CalibrateWithoutAGpuSaysSoAndWritesNothing) {
  REQUIRE_NVCC();
  const fs::path out = fs::temp_directory_path() / ("cli_test-calibration-" + std::to_string(getpid()) + ".json");
  const auto r = run({"--no-color", "calibrate", "lab09", "--out", out.string()});
  EXPECT_EQ(r.exit_code, 4) << r.out << r.err;
  EXPECT_NE(r.err.find("grader calibrate times programs on a GPU"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
}

TEST(Cli, WithoutAGpuAFailingStaticCheckIsNotCalledAPass) {
  REQUIRE_NVCC();
  const auto r = run({"--no-color", "grade", "lab07", "--submission", (kRoot / "labs" / kLab / "kernel.cu").string()});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;  // the skeleton's step 1 PTX check fails without a GPU too
  EXPECT_EQ(r.out.find("The static checks pass"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Current step: 1"), std::string::npos) << r.out;
}

TEST(Cli, AFailedBuildSaysNothingWasGraded) {
  REQUIRE_NVCC();
  const fs::path broken = kRoot / "tests" / "fixtures" / kLab / "compile_error.cu";
  if (!fs::exists(broken)) GTEST_SKIP() << "no fixtures in a class copy";
  const auto r = run({"--no-color", "grade", "lab07", "--submission", broken.string()});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("no step is graded until kernel.cu builds"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("The static checks pass"), std::string::npos) << r.out;
}

// A submission chooses what its compiler says of it. An #error of terminal
// escapes and bytes that are not UTF-8 once rewrote a batch's terminal row and
// made every --json grade of it a grader error (exit 2, "type_error.316"): it
// is shown as text, on the terminal and in valid JSON, and the grade is what
// it is, a failed build (exit 3).
TEST(Cli, WhatTheCompilerSaysOfASubmissionIsShownAsText) {
  REQUIRE_NVCC();
  const fs::path dir = fs::temp_directory_path() / ("cli_test-hostile-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path kernel = dir / "kernel.cu";
  std::ofstream(kernel, std::ios::binary) << "#include \"lab.cuh\"\n"
                                          << "#error \x1b[2K\x1b[1G10/10 points \xff\xc0\xaf end\n";
  const std::string shown = "#error \\x1b[2K\\x1b[1G10/10 points \xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD end";

  const auto j = run({"--json", "grade", "lab07", "--submission", kernel.string()});
  EXPECT_EQ(j.exit_code, 3) << j.out << j.err;
  json report;
  ASSERT_NO_THROW(report = json::parse(j.out)) << j.out;
  ASSERT_EQ(report.value("schema", ""), "cuda-memory-labs/grade/1") << j.out;
  const std::string diagnostics = report["build"]["student"].value("diagnostics", "");
  EXPECT_NE(diagnostics.find(shown), std::string::npos) << diagnostics;

  const auto t = run({"--no-color", "grade", "lab07", "--submission", kernel.string()});
  EXPECT_EQ(t.exit_code, 3) << t.out << t.err;
  EXPECT_NE(t.out.find(shown), std::string::npos) << t.out;
  EXPECT_EQ(t.out.find('\x1b'), std::string::npos) << "an escape reached the terminal";
  fs::remove_all(dir);
}

// A student's kernel.cu deleted by mistake: the grade names the file and the
// command that brings it back, and `grader list` in a copy of one lab names
// that lab, not one the copy does not have.
TEST(Cli, AMissingKernelFileSaysHowToGetItBack) {
  REQUIRE_NVCC();
  if (!fs::exists(kRoot / "solutions")) GTEST_SKIP() << "a class copy cannot publish";
  const fs::path copy = fs::temp_directory_path() / ("cli_test-one-lab-" + std::to_string(getpid()));
  fs::remove_all(copy);
  ASSERT_EQ(run({"publish", "--from-working-tree", "--labs", "lab02", "--out", copy.string()}).exit_code, 0);
  EXPECT_NE(run({"list"}, copy).out.find("next: grader lab02 · a hint: grader hint lab02"), std::string::npos);

  fs::remove(copy / "labs" / "lab02-global" / "kernel.cu");
  const auto missing = run({"--json", "grade", "lab02"}, copy);
  EXPECT_EQ(missing.exit_code, 2) << missing.out << missing.err;
  const json j = json::parse(missing.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << missing.out;
  EXPECT_EQ(j["error"],
            "labs/lab02-global/kernel.cu is missing: it is the file you edit in lab02. "
            "`grader reset lab02` writes its starting version again.");
  EXPECT_EQ(run({"reset", "lab02"}, copy).exit_code, 0);
  EXPECT_TRUE(fs::is_regular_file(copy / "labs" / "lab02-global" / "kernel.cu"));
  fs::remove_all(copy);
}

// A class copy published with a hint penalty: a paid hint needs the student's yes.
TEST(Cli, APaidHintIsShownOnlyWithTheStudentsAgreement) {
  if (!fs::exists(kRoot / "solutions")) GTEST_SKIP() << "a class copy cannot publish";
  const fs::path copy = fs::temp_directory_path() / ("cli_test-class-" + std::to_string(getpid()));
  fs::remove_all(copy);
  const auto pub = run({"publish", "--from-working-tree", "--out", copy.string(), "--hint-penalty", "0.5"});
  ASSERT_EQ(pub.exit_code, 0) << pub.out << pub.err;
  // The instructor is told that an upload's hint count is the student's own word.
  EXPECT_NE(pub.err.find("warning: --hint-penalty 0.5: for uploads the penalty is on the honour system"),
            std::string::npos)
      << pub.err;
  EXPECT_NE(read(copy / "README.md").find("costs 0.5 points"), std::string::npos)
      << "the copy's README states the cost";

  const auto refused = run({"hint", "lab07"}, copy);
  EXPECT_EQ(refused.exit_code, 2) << refused.out << refused.err;
  EXPECT_NE(refused.err.find("costs 0.5 points"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("--yes"), std::string::npos) << refused.err;
  EXPECT_EQ(refused.out.find("hint 1/"), std::string::npos) << "no hint shown:\n" << refused.out;

  const auto agreed = run({"--json", "hint", "lab07", "--yes"}, copy);
  EXPECT_EQ(agreed.exit_code, 0) << agreed.out << agreed.err;
  const json j = json::parse(agreed.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << agreed.out;
  EXPECT_EQ(j["hint_penalty"], 0.5);
  EXPECT_EQ(j["shown"], 1) << j.dump();

  // The next one costs again, and is refused again without a yes.
  const auto next = run({"hint", "lab07"}, copy);
  EXPECT_EQ(next.exit_code, 2) << next.out << next.err;
  EXPECT_NE(next.err.find("hint 2/"), std::string::npos) << next.err;
  // What was paid for stays readable: hint 1 is shown again, free; hint 2 is not shown.
  EXPECT_NE(next.out.find("hint 1/"), std::string::npos) << next.out;
  EXPECT_EQ(next.out.find("hint 2/"), std::string::npos) << next.out;
  fs::remove_all(copy);
}

}  // namespace

// A course this user may not write to (a read-only mount, a class install,
// another user's checkout: here, as root, a copy that belongs to another user)
// still works: doctor, list and hints keep their state in a folder of the
// user's own ($XDG_STATE_HOME), and say where. Every command once failed with
// "cannot create directories: Read-only file system [.grader/runs/probe-...]".
TEST(Cli, ACourseThisUserMayNotWriteKeepsItsStateInAFolderOfItsOwn) {
  const fs::path base = fs::temp_directory_path() / ("cli_test-readonly-" + std::to_string(getpid()));
  fs::remove_all(base);
  const fs::path course = base / "course";
  fs::create_directories(course);
  for (const char* part : {"syllabus.md", "labs", "common"})
    fs::copy(kRoot / part, course / part, fs::copy_options::recursive);
  bool made_foreign = false;
  if (::geteuid() == 0) {
    for (auto it = fs::recursive_directory_iterator(course); it != fs::recursive_directory_iterator(); ++it)
      made_foreign = ::lchown(it->path().c_str(), 12345, 12345) == 0;
    made_foreign = made_foreign && ::chown(course.c_str(), 12345, 12345) == 0;
  } else {
    for (auto it = fs::recursive_directory_iterator(course); it != fs::recursive_directory_iterator(); ++it)
      if (it->is_directory()) fs::permissions(it->path(), fs::perms::owner_write, fs::perm_options::remove);
    fs::permissions(course, fs::perms::owner_write, fs::perm_options::remove);
    made_foreign = ::access(course.c_str(), W_OK) != 0;
  }
  if (!made_foreign) GTEST_SKIP() << "cannot make a course this user may not write";
  ::setenv("XDG_STATE_HOME", (base / "state").c_str(), 1);
  const Result doctor = run({"--json", "--root", course.string(), "doctor"});
  const Result list = run({"--root", course.string(), "list"});
  const Result hint = run({"--root", course.string(), "hint", "lab00"});
  ::unsetenv("XDG_STATE_HOME");
  for (const Result* r : {&doctor, &list, &hint}) {
    EXPECT_NE(r->exit_code, 2) << r->out << r->err;
    EXPECT_EQ((r->out + r->err).find("cannot create directories"), std::string::npos) << r->out << r->err;
  }
  EXPECT_EQ(list.exit_code, 0) << list.out << list.err;
  json j;
  ASSERT_NO_THROW(j = json::parse(doctor.out)) << doctor.out << doctor.err;
  const std::string state = j.value("state", "");
  EXPECT_EQ(state.rfind((base / "state" / "cuda-memory-labs").string(), 0), 0u) << doctor.out;
  EXPECT_NE(j.value("state_note", "").find(state), std::string::npos) << doctor.out;
  EXPECT_FALSE(fs::exists(course / ".grader"));
  EXPECT_TRUE(fs::exists(state)) << state;
  // That folder made first by someone else (a shared /tmp): never used.
  if (::geteuid() == 0 && ::chown(state.c_str(), 12345, 12345) == 0) {
    ::setenv("XDG_STATE_HOME", (base / "state").c_str(), 1);
    const Result foreign = run({"--root", course.string(), "list"});
    ::unsetenv("XDG_STATE_HOME");
    EXPECT_EQ(foreign.exit_code, 2) << foreign.out << foreign.err;
    EXPECT_NE(foreign.err.find("is not a folder of this user's"), std::string::npos) << foreign.err;
  }
  fs::permissions(course, fs::perms::owner_all, fs::perm_options::add);
  fs::remove_all(base);
}
