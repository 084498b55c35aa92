// The build's defences that need no compiler: which included files a
// submission may use, and which host assembly it may not hold; and the build
// cache's entries, made once.
#include "builder.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <future>
#include <thread>

#include "builder_steps.hpp"
#include "text.hpp"

namespace grader {
namespace {

TEST(DependencyRule, ReadsEveryFileAfterTheTarget) {
  const auto files =
      parse_dependency_rule("kernel.o : /w/src/kernel.cu \\\n    /usr/include/stdio.h \\\n    /w/src/lab/lab.cuh\n");
  ASSERT_EQ(files.size(), 3u);
  EXPECT_EQ(files[0], "/w/src/kernel.cu");
  EXPECT_EQ(files[2], "/w/src/lab/lab.cuh");
}

TEST(DependencyRule, KeepsEscapedSpacesInANameAndAcceptsAGluedColon) {
  const auto files = parse_dependency_rule("k.o: /a\\ b/x.h /c.h");
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0], "/a b/x.h");
}

TEST(ForeignIncludes, TheStagedFilesAndSystemHeadersAreAllowed) {
  EXPECT_EQ(
      foreign_includes({"/w/src/kernel.cu", "/w/src/lab/lab.cuh", "/usr/include/stdio.h"}, {"/w/src", "/usr/include"}),
      "");
}

TEST(ForeignIncludes, ASolutionOrAnyOtherFileIsRefusedWithoutQuotingIt) {
  const std::string why =
      foreign_includes({"/w/src/kernel.cu", "/course/solutions/lab07/kernel.cu"}, {"/w/src", "/usr/include"});
  EXPECT_NE(why.find("kernel.cu"), std::string::npos);
  EXPECT_EQ(why.find("/course"), std::string::npos) << "the message names the file, not where it lives";
}

TEST(ForeignIncludes, APrefixThatIsNotAFolderDoesNotCount) {
  EXPECT_NE(foreign_includes({"/w/src-evil/x.h"}, {"/w/src"}), "");
}

TEST(ForeignIncludes, DotDotCannotClimbOutOfAnAllowedFolder) {
  EXPECT_NE(foreign_includes({"/w/src/../../etc/passwd"}, {"/w/src"}), "");
}

TEST(ForbiddenAssembly, OrdinaryCompilerOutputIsClean) {
  EXPECT_EQ(forbidden_assembly("\t.file\t\"kernel.cu\"\n\t.text\n_Z6launchPf:\n\tmovl\t$1, %eax\n\tret\n"
                               "\t.section\t.rodata\n.LC0:\n\t.string\t\"use .include or .incbin\"\n"),
            "");
}

TEST(ForbiddenAssembly, IncbinAndIncludeAreRefused) {
  EXPECT_NE(forbidden_assembly("\t.section .rodata\nleak:\n\t.incbin \"/course/solutions/lab07/kernel.cu\"\n"), "");
  EXPECT_NE(forbidden_assembly("  .include \"/etc/passwd\"\n"), "");
  EXPECT_NE(forbidden_assembly("x: .incbin \"f\"\n"), "");
  EXPECT_NE(forbidden_assembly("nop; .incbin \"f\"\n"), "");
}

TEST(ForbiddenAssembly, DirectivesThatBuildOtherDirectivesAreRefused) {
  EXPECT_NE(forbidden_assembly(".irp x,bin\n.inc\\x \"f\"\n.endr\n"), "");
  EXPECT_NE(forbidden_assembly(".macro m\n.endm\n"), "");
  EXPECT_NE(forbidden_assembly(".rept 1\n.endr\n"), "");
  EXPECT_NE(forbidden_assembly(".altmacro\n"), "");
}

TEST(ForbiddenAssembly, ACommentMentioningADirectiveIsNotOne) {
  EXPECT_EQ(forbidden_assembly("\tnop # .incbin here would be bad\n"), "");
}

// common/'s units compile side by side in one folder: each failing compile
// keeps its own errors (they once shared one log file, and a clean-up erased
// another compile's errors, so "does not build (common)" came with no reason).
TEST(ToolRuns, SideBySideInOneFolderEachKeepsItsOwnErrors) {
  const std::filesystem::path work =
      std::filesystem::temp_directory_path() / ("builder_test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(work);
  std::vector<std::future<std::pair<bool, std::string>>> runs;
  for (int i = 0; i < 8; ++i)
    runs.push_back(std::async(std::launch::async, [&, i] {
      std::string log;
      const bool ok = builder_detail::run_tool(
          {"/bin/sh", "-c",
           "sleep 0.0" + std::to_string(i) + "; echo error in unit " + std::to_string(i) + " >&2; exit 1"},
          work, log, false);
      return std::make_pair(ok, log);
    }));
  for (int i = 0; i < 8; ++i) {
    const auto [ok, log] = runs[i].get();
    EXPECT_FALSE(ok);
    EXPECT_NE(log.find("error in unit " + std::to_string(i)), std::string::npos) << i << ": " << log;
  }
  std::filesystem::remove_all(work);
}

// Two threads of one grader needing the same entry at once (`grader check`'s
// items of one lab) build it once; the second finds it complete.
TEST(CachedBuild, OneEntryNeededTwiceAtOnceIsBuiltOnce) {
  const std::filesystem::path cache =
      std::filesystem::temp_directory_path() / ("cached_build_test-" + std::to_string(::getpid()));
  std::filesystem::remove_all(cache);
  std::atomic<int> builds{0};
  const auto make = [&](const std::filesystem::path& work, std::string&) {
    ++builds;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    std::ofstream(work / "worker") << "built\n";
    return true;
  };
  auto first = std::async(std::launch::async, [&] { return builder_detail::cached_build(cache, "worker", "k", make); });
  auto second =
      std::async(std::launch::async, [&] { return builder_detail::cached_build(cache, "worker", "k", make); });
  const auto a = first.get(), b = second.get();
  EXPECT_EQ(builds.load(), 1);
  EXPECT_TRUE(a.ok && b.ok);
  EXPECT_NE(a.cached, b.cached) << "one built it, the other found it";
  EXPECT_TRUE(std::filesystem::exists(cache / "worker-k" / "worker"));
  std::filesystem::remove_all(cache);
}

// Two graders (processes) needing the same entry at once build it once: the
// second waits for the first's build and finds it complete.
TEST(CachedBuild, OneEntryNeededByTwoProcessesAtOnceIsBuiltOnce) {
  namespace fs = std::filesystem;
  const fs::path cache = fs::temp_directory_path() / ("cached_build_procs-" + std::to_string(::getpid()));
  fs::remove_all(cache);
  fs::create_directories(cache);
  const fs::path builds = cache / "builds.txt";
  const auto make = [&](const fs::path& work, std::string&) {
    std::ofstream(builds, std::ios::app) << ::getpid() << "\n";
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    std::ofstream(work / "referee") << "built\n";
    return true;
  };
  const pid_t child = ::fork();
  if (child == 0) {
    const bool ok = builder_detail::cached_build(cache, "referee", "k", make).ok;
    ::_exit(ok ? 0 : 1);
  }
  const auto mine = builder_detail::cached_build(cache, "referee", "k", make);
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_TRUE(mine.ok);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  std::ifstream in(builds);
  std::size_t lines = 0;
  for (std::string l; std::getline(in, l);) ++lines;
  EXPECT_EQ(lines, 1u) << "built by both processes";
  fs::remove_all(cache);
}

// An entry changed after it was built (the attack of a program that could write
// the cache: a script where the referee was) is rebuilt, never used; so is one
// that others may write, one with a planted link and one from an older grader.
TEST(CachedBuild, ATamperedEntryIsRebuiltNeverUsed) {
  namespace fs = std::filesystem;
  const fs::path cache = fs::temp_directory_path() / ("cached_build_tamper-" + std::to_string(::getpid()));
  fs::remove_all(cache);
  int builds = 0;
  const auto make = [&](const fs::path& work, std::string&) {
    ++builds;
    fs::create_directories(work / "bin");
    std::ofstream(work / "bin" / "referee") << "the real referee\n";
    return true;
  };
  const fs::path referee = cache / "referee-k" / "bin" / "referee";
  const auto expect_rebuilt = [&](const char* what) {
    const int before = builds;
    const auto e = builder_detail::cached_build(cache, "referee", "k", make);
    EXPECT_TRUE(e.ok && !e.cached) << what;
    EXPECT_EQ(builds, before + 1) << what;
    EXPECT_EQ(read_file(referee).value_or(""), "the real referee\n") << what;
    EXPECT_TRUE(builder_detail::cached_build(cache, "referee", "k", make).cached) << what << ": then kept";
  };
  ASSERT_TRUE(builder_detail::cached_build(cache, "referee", "k", make).ok);
  EXPECT_TRUE(builder_detail::cached_build(cache, "referee", "k", make).cached);

  std::ofstream(referee, std::ios::trunc) << "#!/bin/sh\necho forged\n";
  expect_rebuilt("a file's content changed");
  fs::permissions(referee, fs::perms::others_write, fs::perm_options::add);
  expect_rebuilt("a file others may write");
  fs::remove(referee);
  fs::create_symlink("/bin/true", referee);
  expect_rebuilt("a file replaced by a link");
  std::ofstream(cache / "referee-k" / "bin" / "extra") << "planted";
  expect_rebuilt("a file added");
  std::ofstream(cache / "referee-k" / ".complete", std::ios::trunc) << "ok\n";
  expect_rebuilt("an entry of an older grader");
  std::size_t left = 0;
  for (const auto& f : fs::directory_iterator(cache)) left += f.path().extension() != ".lock";
  EXPECT_EQ(left, 1u) << "nothing set aside is left";
  fs::remove_all(cache);
}

}  // namespace
}  // namespace grader
