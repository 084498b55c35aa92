// grader-seal: seals itself (seal.hpp), then becomes the program after "--".
//
//   grader-seal [--read DIR]... [--write DIR]... [--uid N --gid N] [--require-landlock]
//               [--under-tool] [--cpu-seconds S] [--file-bytes B] [--processes N] -- PROGRAM ARGS...
//
// The grader puts it in front of nvcc and of the program ncu or
// compute-sanitizer start; the referee in front of the submission's program.
// It is trusted code that runs first, so it also allows the folders of the
// libraries the tools inject (LD_PRELOAD), which only it can see.
#include <unistd.h>

#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "seal.hpp"

int main(int argc, char** argv) {
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
  bool landlock = false;
  const std::string why = memlabs::seal_this_process(spec, landlock);
  if (!why.empty()) {
    std::fprintf(stderr, "grader-seal: cannot seal the submission's code: %s\n", why.c_str());
    return memlabs::kSealUnavailable;
  }
  std::vector<char*> args;
  for (auto& a : program) args.push_back(a.data());
  args.push_back(nullptr);
  ::execvp(args[0], args.data());
  std::perror(("grader-seal: cannot run " + program[0]).c_str());
  return 127;
}
