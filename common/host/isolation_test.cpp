#include "isolation.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "seal.hpp"

namespace memlabs {
namespace {

bool has_pair(const std::vector<std::string>& a, const std::string& k, const std::string& v) {
  for (std::size_t i = 0; i + 1 < a.size(); ++i)
    if (a[i] == k && a[i + 1] == v) return true;
  return false;
}

bool has(const std::vector<std::string>& a, const std::string& k) {
  return std::find(a.begin(), a.end(), k) != a.end();
}

TEST(Isolation, BwrapCommandHidesTheCourseAndKeepsTheProgramVisible) {
  Isolation iso;
  iso.mode = memlabs::IsolationMode::bwrap;
  iso.bwrap = "/usr/bin/bwrap";
  iso.hide = {"/tmp"};
  const auto a = bwrap_command(iso, {"/usr/bin"}, {}, {"/usr/bin/true", "x"});
  EXPECT_EQ(a.front(), "/usr/bin/bwrap");
  EXPECT_FALSE(has_pair(a, "--ro-bind", "/")) << "an allow-list, not the whole disk";
  EXPECT_TRUE(has_pair(a, "--ro-bind", "/usr"));
  EXPECT_TRUE(has_pair(a, "--tmpfs", "/tmp"));
  EXPECT_TRUE(has_pair(a, "--ro-bind", "/usr/bin"));
  // Its own user, pid and network namespace, and it dies with its parent.
  for (const char* flag : {"--unshare-user", "--unshare-pid", "--unshare-net", "--die-with-parent", "--new-session"})
    EXPECT_TRUE(has(a, flag)) << flag;
  EXPECT_TRUE(has_pair(a, "--uid", "65534"));
  // The program comes last, after "--".
  const auto dash = std::find(a.begin(), a.end(), "--");
  ASSERT_NE(dash, a.end());
  EXPECT_EQ(*(dash + 1), "/usr/bin/true");
  EXPECT_EQ(a.back(), "x");
}

// Only the system's folders, the environment's libraries and the folders named
// are mounted: a course checked out in /work, /opt or /srv is not there at all.
TEST(Isolation, BwrapMountsOnlyTheAllowList) {
  Isolation iso;
  iso.mode = memlabs::IsolationMode::bwrap;
  iso.bwrap = "bwrap";
  const auto a = bwrap_command(iso, {"/opt/course/.grader/cache/worker-1"}, {"/tmp/own"}, {"/bin/true"});
  std::vector<std::string> allowed = system_read_folders();
  for (const auto& d : library_folders_of_this_environment()) allowed.push_back(d);
  allowed.insert(allowed.end(), {"/opt/course/.grader/cache/worker-1", "/tmp/own"});
  for (std::size_t i = 0; i + 1 < a.size() && a[i] != "--"; ++i) {
    if (a[i] != "--ro-bind" && a[i] != "--bind" && a[i] != "--dev-bind") continue;
    const std::string& source = a[i + 1];
    bool inside = source.rfind("/dev/", 0) == 0;
    for (const auto& d : allowed) inside = inside || source == d || source.rfind(d + "/", 0) == 0;
    EXPECT_TRUE(inside) << a[i] << " " << source << " is not on the allow-list";
  }
}

// A hidden folder outside every mount is simply absent: no empty tmpfs in its
// place that a program could write to and take for the real one.
TEST(Isolation, AHiddenFolderOutsideTheMountsIsNotThereAtAll) {
  const std::filesystem::path course = std::filesystem::current_path() / "isolation_test_course";
  std::filesystem::create_directories(course / ".grader");
  Isolation iso;
  iso.mode = memlabs::IsolationMode::bwrap;
  iso.bwrap = "bwrap";
  iso.hide = {(course / ".grader").string()};
  const auto a = bwrap_command(iso, {}, {}, {"/bin/true"});
  EXPECT_FALSE(has_pair(a, "--tmpfs", std::filesystem::weakly_canonical(course / ".grader").string()));
  EXPECT_TRUE(has_pair(a, "--tmpfs", "/tmp"));
  std::filesystem::remove_all(course);
}

TEST(Isolation, BindsComeAfterTheFoldersTheyPierce) {
  Isolation iso;
  iso.mode = memlabs::IsolationMode::bwrap;
  iso.bwrap = "bwrap";
  const auto a = bwrap_command(iso, {"/tmp"}, {}, {"/bin/true"});
  std::size_t tmpfs = a.size(), bind = a.size();
  for (std::size_t i = 0; i + 1 < a.size(); ++i) {
    if (a[i] == "--tmpfs" && a[i + 1] == "/tmp") tmpfs = i;
    if (a[i] == "--ro-bind" && a[i + 1] == "/tmp") bind = i;
  }
  ASSERT_LT(tmpfs, a.size());
  ASSERT_LT(bind, a.size());
  EXPECT_LT(tmpfs, bind);
}

TEST(Isolation, ASubmissionGetsOnlyTheEnvironmentCudaNeeds) {
  const auto env = submission_environment(
      {"PATH=/bin", "GITHUB_TOKEN=secret", "CUDA_VISIBLE_DEVICES=0", "LD_LIBRARY_PATH=/usr/local/nvidia/lib64",
       "HOME=/root", "GRADER_ISOLATE=bwrap", "CUDA_DEVICE_MAX_CONNECTIONS=1", "CUDA_DEVICE_MAX_CONNECTIONS=8"});
  EXPECT_TRUE(has(env, "PATH=/bin"));
  EXPECT_TRUE(has(env, "CUDA_VISIBLE_DEVICES=0"));
  EXPECT_TRUE(has(env, "LD_LIBRARY_PATH=/usr/local/nvidia/lib64"));
  EXPECT_FALSE(has(env, "GITHUB_TOKEN=secret"));
  EXPECT_FALSE(has(env, "HOME=/root"));
  EXPECT_FALSE(has(env, "GRADER_ISOLATE=bwrap"));
  // The program's context gets the driver's default hardware queues, not the
  // referee's one, nor whatever the caller's shell set.
  for (const auto& kv : env) EXPECT_NE(kv.rfind("CUDA_DEVICE_MAX_CONNECTIONS", 0), 0u) << kv;
}

TEST(Isolation, ArgumentsRoundTrip) {
  Isolation iso;
  iso.mode = memlabs::IsolationMode::bwrap;
  iso.bwrap = "/usr/bin/bwrap";
  iso.hide = {"/course", "/subs"};
  iso.cpu_seconds = 50;
  iso.processes = 512;
  std::vector<std::string> args = {"run", "--case", "1x1"};
  for (const auto& a : isolation_args(iso)) args.push_back(a);
  const Isolation back = take_isolation_args(args);
  EXPECT_EQ(args, (std::vector<std::string>{"run", "--case", "1x1"}));
  EXPECT_EQ(back.mode, memlabs::IsolationMode::bwrap);
  EXPECT_EQ(back.bwrap, "/usr/bin/bwrap");
  EXPECT_EQ(back.hide, iso.hide);
  EXPECT_EQ(back.cpu_seconds, 50);
  EXPECT_EQ(back.processes, 512u);
}

TEST(Isolation, EveryModeIsReadBackByItsName) {
  for (IsolationMode m : kEveryIsolationMode) {
    EXPECT_EQ(isolation_mode_named(name_of(m)), m) << name_of(m);
    std::vector<std::string> args = {"--isolate", name_of(m), "--bwrap", "/usr/bin/bwrap"};
    EXPECT_EQ(take_isolation_args(args).mode, m);
  }
  EXPECT_EQ(isolation_mode_named("Bwrap"), std::nullopt);
}

TEST(Isolation, BadArgumentsAreRefused) {
  std::vector<std::string> a = {"--isolate", "chroot"};
  EXPECT_THROW(take_isolation_args(a), std::invalid_argument);
  std::vector<std::string> b = {"--isolate", "bwrap"};
  EXPECT_THROW(take_isolation_args(b), std::invalid_argument) << "bwrap mode needs the program";
  std::vector<std::string> c = {"--hide"};
  EXPECT_THROW(take_isolation_args(c), std::invalid_argument);
}

}  // namespace
}  // namespace memlabs
