#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "child_process.hpp"

namespace grader {
namespace {

namespace fs = std::filesystem;

TEST(ReadHead, ReplacesWhatWouldWreckATerminal) {
  std::string tmpl = (fs::temp_directory_path() / "read_head.XXXXXX").string();
  const int fd = ::mkstemp(tmpl.data());
  ASSERT_GE(fd, 0);
  ::close(fd);
  std::ofstream(tmpl, std::ios::binary) << "ok\t\x1b[31mred\xff caf\xc3\xa9 \xc2\x9b \xe2\x82\r\n"
                                        << std::string("\0\x07", 2) << "end";
  EXPECT_EQ(read_head(tmpl, 1000),
            "ok\t\\x1b[31mred\xEF\xBF\xBD caf\xc3\xa9 \\u009b \xEF\xBF\xBD\xEF\xBF\xBD\n\\x00\\x07end");
  EXPECT_EQ(read_head(tmpl, 4), "ok\t\\x1b\n... [truncated: 27 bytes more]");
  fs::remove(tmpl);
  EXPECT_EQ(read_head(tmpl, 100), "");
}

// How a grade's messages name the ways a child can end.
TEST(ChildResultDescribe, NamesEachWayAChildCanEnd) {
  ChildResult r;
  r.start_error = "cannot run ./x: No such file or directory";
  EXPECT_EQ(r.describe(), "could not start: cannot run ./x: No such file or directory");
  r.started = true;
  r.exited = true;
  r.exit_code = 3;
  EXPECT_EQ(r.describe(), "exited with code 3");
  r.exited = false;
  r.signaled = true;
  r.signal = SIGSEGV;
  EXPECT_EQ(r.describe(), "killed by SIGSEGV (segmentation fault)");
  r.signal = 63;
  EXPECT_EQ(r.describe(), "killed by signal 63");
  r.signaled = false;
  r.timed_out = true;
  r.wall_s = 5.04;
  EXPECT_EQ(r.describe(), "timed out after 5.0 s");
  r.interrupted = true;
  r.interrupt_signal = SIGTERM;
  EXPECT_EQ(r.describe(), "stopped because the grader got SIGTERM");
}

}  // namespace
}  // namespace grader
