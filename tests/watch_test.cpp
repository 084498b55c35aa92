// `grader watch`, by the real grader binary, on a temporary copy of lab07:
// it grades once at start, grades again when kernel.cu is saved (in place
// while polling, by an atomic rename with inotify), and Ctrl-C ends it with
// 130. GRADER_NO_GPU=1: only the static checks run, so the skeleton's grade
// fails step 1 (exit 1) on any machine. The first build of an edited file
// takes nvcc a while: the timeouts are generous.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <thread>

namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

extern char** environ;

namespace {

const fs::path kRoot = COURSE_ROOT;
const std::string kLab = "lab07-bank-conflicts";
const std::string kWaiting = "waiting for changes to labs/" + kLab + "/kernel.cu (Ctrl-C to stop)";
constexpr auto kTimeout = 900s;

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

// The grader running in the background, its output going to files the test
// reads while it runs (run_child would block until it ends).
class Watch {
 public:
  Watch(const fs::path& dir, std::vector<std::string> args) : out_(dir / "watch.out"), err_(dir / "watch.err") {
    std::vector<std::string> argv = {GRADER_BIN};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<std::string> env;
    for (char** e = environ; *e; ++e) {
      const std::string v(*e);
      if (v.rfind("GRADER_NO_GPU=", 0) != 0 && v.rfind("CUDA_LABS_ROOT=", 0) != 0) env.push_back(v);
    }
    env.emplace_back("GRADER_NO_GPU=1");
    std::vector<char*> cargv, cenv;
    for (auto& a : argv) cargv.push_back(a.data());
    for (auto& v : env) cenv.push_back(v.data());
    cargv.push_back(nullptr);
    cenv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, 2, err_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (posix_spawn(&pid_, GRADER_BIN, &actions, nullptr, cargv.data(), cenv.data()) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
  }
  ~Watch() {
    if (pid_ > 0 && !exit_code_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  bool started() const { return pid_ > 0; }
  std::string out() const { return read(out_); }
  std::string err() const { return read(err_); }
  std::string both() const { return "stdout:\n" + out() + "\nstderr:\n" + err(); }

  // Whether `text` shows up in stdout (or stderr) before the grader exits or time runs out.
  bool shows(const std::string& text, bool on_stderr = false) {
    const auto until = std::chrono::steady_clock::now() + kTimeout;
    while (std::chrono::steady_clock::now() < until) {
      if ((on_stderr ? err() : out()).find(text) != std::string::npos) return true;
      if (finished()) return false;
      std::this_thread::sleep_for(100ms);
    }
    return false;
  }
  void interrupt() { ::kill(pid_, SIGINT); }
  // The exit code, or -1 when it did not exit by itself in time (it is killed then).
  int wait_exit() {
    const auto until = std::chrono::steady_clock::now() + kTimeout;
    while (!finished() && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(100ms);
    if (!finished()) return -1;
    return *exit_code_;
  }

 private:
  bool finished() {
    if (exit_code_) return true;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) != pid_) return false;
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return true;
  }
  fs::path out_, err_;
  pid_t pid_ = -1;
  std::optional<int> exit_code_;
};

class WatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root = fs::temp_directory_path() / ("watch_test-" + std::to_string(getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root);
    fs::create_directories(root / "labs");
    fs::copy(kRoot / "common", root / "common", fs::copy_options::recursive);
    fs::copy(kRoot / "labs" / kLab, root / "labs" / kLab, fs::copy_options::recursive);
    fs::copy_file(kRoot / "syllabus.md", root / "syllabus.md");
    // The solution, as in the instructor's course (a grade never builds it, but
    // the course layout keeps it beside the lab).
    for (const char* where : {"solutions"})
      if (fs::exists(kRoot / where / kLab)) {
        fs::create_directories(root / where);
        fs::copy(kRoot / where / kLab, root / where / kLab, fs::copy_options::recursive);
      }
    // Builds are keyed by content: share the course's cache, so the skeleton
    // and the edit below are compiled once for all runs of this test.
    fs::create_directories(kRoot / ".grader" / "cache");
    fs::create_directories(root / ".grader");
    fs::create_directory_symlink(kRoot / ".grader" / "cache", root / ".grader" / "cache");
    kernel = root / "labs" / kLab / "kernel.cu";
    edited = read(kernel) + "\n// edited while grader watch runs\n";
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(root);  // kept after a failure, to look at
  }

  std::vector<std::string> args(std::vector<std::string> more) const {
    std::vector<std::string> a = {"--no-color", "--root", root.string(), "watch", "lab07"};
    a.insert(a.end(), more.begin(), more.end());
    return a;
  }

  fs::path root, kernel;
  std::string edited;
};

TEST_F(WatchTest, PollingGradesAgainAfterAnInPlaceSave) {
  Watch w(root, args({"--poll", "--max-grades", "2"}));
  ASSERT_TRUE(w.started());
  ASSERT_TRUE(w.shows(kWaiting)) << w.both();
  // The status line names the current step: the skeleton is at step 1.
  EXPECT_NE(w.out().find("lab07 step 1: "), std::string::npos) << w.out();
  std::ofstream(kernel, std::ios::binary | std::ios::trunc) << edited;
  EXPECT_EQ(w.wait_exit(), 1) << w.both();
  const std::string out = w.out();
  EXPECT_EQ(count(out, "── grader watch lab07 · grade "), 2u) << out;
  EXPECT_NE(out.find("── grader watch lab07 · grade 2 · "), std::string::npos) << out;
  // --max-grades 2: it stops after the second grade, without waiting again.
  EXPECT_EQ(count(out, kWaiting), 1u) << out;
}

TEST_F(WatchTest, InotifyGradesAgainAfterAnAtomicSave) {
  Watch w(root, args({"--json", "--max-grades", "2"}));
  ASSERT_TRUE(w.started());
  // With --json, stdout holds only the reports and the status line goes to stderr.
  ASSERT_TRUE(w.shows(kWaiting, true)) << w.both();
  EXPECT_EQ(w.err().find("polling"), std::string::npos) << "inotify should work in " << root << ": " << w.err();
  // As vim, VS Code and JetBrains save: a temporary file renamed over kernel.cu.
  const fs::path tmp = kernel.parent_path() / ".kernel.cu.swp";
  std::ofstream(tmp, std::ios::binary) << edited;
  fs::rename(tmp, kernel);
  EXPECT_EQ(w.wait_exit(), 1) << w.both();
  std::istringstream lines(w.out());
  int reports = 0;
  for (std::string line; std::getline(lines, line);) {
    const json j = json::parse(line, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << "not a JSON line: " << line;
    EXPECT_EQ(j["schema"], "cuda-memory-labs/grade/1");
    EXPECT_EQ(j["current_step"], 1);
    ++reports;
  }
  EXPECT_EQ(reports, 2) << w.both();
}

TEST_F(WatchTest, CtrlCWhileWaitingExitsWith130) {
  Watch w(root, args({}));
  ASSERT_TRUE(w.started());
  ASSERT_TRUE(w.shows(kWaiting)) << w.both();
  w.interrupt();
  EXPECT_EQ(w.wait_exit(), 130) << w.both();
  EXPECT_NE(w.out().find("stopped watching labs/" + kLab + "/kernel.cu"), std::string::npos) << w.out();
}

}  // namespace
