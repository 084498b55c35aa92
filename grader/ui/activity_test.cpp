// The spinner on a real pseudo-terminal: what it draws, that it erases its
// line, and that it draws nothing at all where it must not.
#include "activity.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>

using namespace grader;
using namespace std::chrono_literals;

namespace {

const std::string kErase = "\r\033[K";

// Points stderr at `fd` for the test's lifetime, with TERM as given, and
// configures Activity for it; puts everything back afterwards.
class StderrTo {
 public:
  StderrTo(int fd, const char* term) : saved_(::dup(STDERR_FILENO)) {
    if (const char* t = std::getenv("TERM")) saved_term_ = t;
    had_term_ = std::getenv("TERM") != nullptr;
    ::setenv("TERM", term, 1);
    ::dup2(fd, STDERR_FILENO);
    Activity::configure(true);
  }
  ~StderrTo() {
    ::dup2(saved_, STDERR_FILENO);
    ::close(saved_);
    if (had_term_)
      ::setenv("TERM", saved_term_.c_str(), 1);
    else
      ::unsetenv("TERM");
    Activity::configure(false);
  }

 private:
  int saved_;
  bool had_term_ = false;
  std::string saved_term_;
};

// A pseudo-terminal: writes to `terminal` arrive, unchanged, at `screen`.
struct Pty {
  int screen = -1, terminal = -1;
  Pty() {
    screen = ::posix_openpt(O_RDWR | O_NOCTTY);
    if (screen < 0 || ::grantpt(screen) != 0 || ::unlockpt(screen) != 0) throw std::runtime_error("no pty");
    terminal = ::open(::ptsname(screen), O_RDWR | O_NOCTTY);
    if (terminal < 0) throw std::runtime_error("no pty slave");
    ::fcntl(screen, F_SETFL, O_NONBLOCK);
  }
  ~Pty() {
    ::close(terminal);
    ::close(screen);
  }
  // Everything written so far: the kernel passes pty output on asynchronously,
  // so read until nothing more arrives for a tenth of a second.
  std::string read_all() const {
    std::string out;
    char buf[4096];
    pollfd p{screen, POLLIN, 0};
    while (::poll(&p, 1, 100) > 0) {
      const ssize_t n = ::read(screen, buf, sizeof buf);
      if (n <= 0) break;
      out.append(buf, static_cast<std::size_t>(n));
    }
    return out;
  }
};

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

TEST(Activity, OnATerminalItAnimatesThenErasesItsLine) {
  Pty pty;
  std::string screen;
  {
    StderrTo redirect(pty.terminal, "xterm");
    ASSERT_TRUE(Activity::enabled());
    Activity a("building kernel.cu");
    std::this_thread::sleep_for(450ms);
    a.update("timing 8192x8192");
    std::this_thread::sleep_for(250ms);
  }
  screen = pty.read_all();
  EXPECT_NE(screen.find("building kernel.cu"), std::string::npos) << screen;
  EXPECT_NE(screen.find("timing 8192x8192"), std::string::npos) << screen;
  EXPECT_NE(screen.find(" s"), std::string::npos) << screen;  // the elapsed seconds
  EXPECT_EQ(screen.find('\n'), std::string::npos) << screen;  // one line, redrawn in place
  EXPECT_TRUE(ends_with(screen, kErase)) << screen;
}

TEST(Activity, NestedActivitiesShareOneLineOutermostFirst) {
  Pty pty;
  {
    StderrTo redirect(pty.terminal, "xterm");
    Activity outer("checking lab07");
    Activity inner("timing 8192x8192");
    std::this_thread::sleep_for(400ms);
  }
  const std::string screen = pty.read_all();
  EXPECT_NE(screen.find("checking lab07 · timing 8192x8192"), std::string::npos) << screen;
  EXPECT_TRUE(ends_with(screen, kErase)) << screen;
}

TEST(Activity, QuickWorkDrawsNothing) {
  Pty pty;
  {
    StderrTo redirect(pty.terminal, "xterm");
    Activity a("building kernel.cu (cached)");
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_EQ(pty.read_all(), "");
}

TEST(Activity, AnExceptionUnwindingThroughItStillErasesTheLine) {
  Pty pty;
  {
    StderrTo redirect(pty.terminal, "xterm");
    try {
      Activity a("timing 8192x8192");
      std::this_thread::sleep_for(400ms);
      throw std::runtime_error("interrupted");
    } catch (const std::runtime_error&) {
    }
    // The line is gone before anything after the catch can print.
    const std::string screen = pty.read_all();
    EXPECT_NE(screen.find("timing 8192x8192"), std::string::npos) << screen;
    EXPECT_TRUE(ends_with(screen, kErase)) << screen;
  }
}

TEST(Activity, ADumbTerminalGetsNothing) {
  Pty pty;
  {
    StderrTo redirect(pty.terminal, "dumb");
    EXPECT_FALSE(Activity::enabled());
    Activity a("building kernel.cu");
    std::this_thread::sleep_for(400ms);
  }
  EXPECT_EQ(pty.read_all(), "");
}

TEST(Activity, APipeGetsNothing) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ::fcntl(fds[0], F_SETFL, O_NONBLOCK);
  {
    StderrTo redirect(fds[1], "xterm");
    EXPECT_FALSE(Activity::enabled());
    Activity a("building kernel.cu");
    std::this_thread::sleep_for(400ms);
  }
  char c;
  EXPECT_EQ(::read(fds[0], &c, 1), -1);  // empty (EAGAIN), not a byte
  ::close(fds[0]);
  ::close(fds[1]);
}

TEST(Activity, NotAllowedGetsNothingEvenOnATerminal) {
  Pty pty;
  {
    StderrTo redirect(pty.terminal, "xterm");
    Activity::configure(false);  // --json or --verbose
    Activity a("building kernel.cu");
    std::this_thread::sleep_for(400ms);
  }
  EXPECT_EQ(pty.read_all(), "");
}
