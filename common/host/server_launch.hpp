// How a server's process is started (ServerProcess::spawn): everything the
// child needs is prepared before fork, since the referee has CUDA's threads
// and the child may only make async-signal-safe calls between fork and exec.
// Host-only; private to server_process.cpp and server_launch.cpp.
#pragma once

#include <sys/resource.h>
#include <sys/types.h>

#include <string>
#include <vector>

#include "server_process.hpp"

namespace memlabs::server_detail {

struct ChildLaunch {
  std::vector<std::string> argv_s, env_s;
  std::vector<char*> argv, envp;
  int sock = -1, out = -1, err = -1, in = -1;
  bool drop_privileges = false;
  bool limit = false;
  rlimit cpu{}, fsize{}, nproc{};
  bool limit_cpu = false, limit_nproc = false;
  pid_t parent = 0;
  const char* cwd = "/";
};

// Fills in `p`'s command line, environment and limits from `o`; the
// descriptors are the caller's. An untrusted program run as nobody is run
// from a copy in `copied_program_dir`; `bwrap` says whether it runs under bwrap.
void prepare_launch(const SpawnOptions& o, ChildLaunch& p, std::string& copied_program_dir, bool& bwrap);

// The child's side of fork: never returns.
[[noreturn]] void exec_child(const ChildLaunch& p);

}  // namespace memlabs::server_detail
