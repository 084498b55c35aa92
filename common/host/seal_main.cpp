// grader-seal: seals itself (seal.hpp), then becomes the program after "--".
//
//   grader-seal [--read DIR]... [--write DIR]... [--uid N --gid N] [--require-landlock]
//               [--under-tool] [--cpu-seconds S] [--file-bytes B] [--processes N] -- PROGRAM ARGS...
//   grader-seal --bwrap-under-tool BWRAP-COMMAND...   (bwrap mode, under ncu or compute-sanitizer)
//
// The grader puts it in front of nvcc and of the program ncu or
// compute-sanitizer start; the referee in front of the submission's program.
// It is trusted code that runs first, so it also allows the folders of the
// libraries the tools inject (LD_PRELOAD), which only it can see.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "seal.hpp"

namespace {

// `grader-seal --bwrap-under-tool BWRAP ARGS... -- PROGRAM...`: runs bwrap with
// the folders of the libraries the tool injects (LD_PRELOAD, CUDA_INJECTION64_PATH:
// seen only here, in what the tool started) bound read-only before its "--".
// bwrap mounts an allow-list, and ncu's libraries may live anywhere (/opt/nvidia).
int bwrap_under_tool(std::vector<std::string> command) {
  const auto dash = std::find(command.begin() + 1, command.end(), "--");
  if (command.empty() || dash == command.end()) {
    std::fprintf(stderr, "grader-seal: --bwrap-under-tool needs bwrap's command line, up to its \"--\"\n");
    return 2;
  }
  std::vector<std::string> binds;
  for (const auto& d : memlabs::library_folders_of_this_environment()) binds.insert(binds.end(), {"--ro-bind", d, d});
  command.insert(dash, binds.begin(), binds.end());
  std::vector<char*> args;
  for (auto& a : command) args.push_back(a.data());
  args.push_back(nullptr);
  ::execvp(args[0], args.data());
  std::perror(("grader-seal: cannot run " + command[0]).c_str());
  return 127;
}

// Forks a child that becomes the run's user and runs `then` there; -1 when
// there is no child. The child never returns.
template <class Then>
pid_t fork_as_the_user(const memlabs::SealSpec& spec, Then then) {
  const pid_t child = ::fork();
  if (child != 0) return child;
  const std::string why = memlabs::become_user(spec);
  if (!why.empty()) {
    std::fprintf(stderr, "grader-seal: cannot seal the submission's code: %s\n", why.c_str());
    ::_exit(memlabs::kSealUnavailable);
  }
  then();
  ::_exit(127);
}

// Under a tool, with a user of the run's own: the program runs as a child, and
// once it has ended every other process of that user is ended too. ncu and
// compute-sanitizer wait for every process of the program's tree, so a daemon
// it left behind (two forks and a new session) kept them waiting for their time
// limit, and the grade charged a timeout; bwrap's pid namespace ends such a
// daemon with the sandbox, and this does the same here. kill(-1) from that
// user reaches each of its processes, however it left its group or session.
// This process keeps the caller's identity (root), sealed otherwise: the
// program, another user without privileges, can neither stop nor kill it, so
// the ending always comes (a launcher of the program's own user was its prey).
// The exit status is the program's.
int run_then_end_the_user(std::vector<char*>& args, const memlabs::SealSpec& spec) {
  const pid_t child = fork_as_the_user(spec, [&] {
    ::execvp(args[0], args.data());
    std::perror((std::string("grader-seal: cannot run ") + args[0]).c_str());
  });
  if (child < 0) {
    std::perror("grader-seal: fork");
    return 127;
  }
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  const pid_t ender = fork_as_the_user(spec, [] {
    for (int round = 0; round < 3; ++round) {  // a process forking at that moment gets a second look
      ::kill(-1, SIGKILL);
      ::usleep(1000);
    }
    ::_exit(0);
  });
  while (ender > 0 && ::waitpid(ender, nullptr, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) {  // the tool reports the program's signal, as if it had been its own
    std::signal(WTERMSIG(status), SIG_DFL);
    ::raise(WTERMSIG(status));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "--bwrap-under-tool")
    return bwrap_under_tool(std::vector<std::string>(argv + 2, argv + argc));
  std::vector<std::string> program;
  memlabs::SealSpec spec;
  try {
    spec = memlabs::parse_seal_args(std::vector<std::string>(argv + 1, argv + argc), program);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "grader-seal: %s\n", e.what());
    return 2;
  }
  for (const auto& d : memlabs::system_read_folders()) spec.read.push_back(d);
  for (const auto& d : memlabs::library_folders_of_this_environment()) spec.read.push_back(d);
  // Under a tool with a user of the run's own, only the program becomes that
  // user (run_then_end_the_user); this process seals itself otherwise.
  const bool launcher_stays = spec.under_tool && spec.change_identity;
  memlabs::SealSpec own = spec;
  if (launcher_stays) own.change_identity = false;
  bool landlock = false;
  const std::string why = memlabs::seal_this_process(own, landlock);
  if (!why.empty()) {
    std::fprintf(stderr, "grader-seal: cannot seal the submission's code: %s\n", why.c_str());
    return memlabs::kSealUnavailable;
  }
  std::vector<char*> args;
  for (auto& a : program) args.push_back(a.data());
  args.push_back(nullptr);
  if (launcher_stays) return run_then_end_the_user(args, spec);
  ::execvp(args[0], args.data());
  std::perror(("grader-seal: cannot run " + program[0]).c_str());
  return 127;
}
