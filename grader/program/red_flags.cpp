#include "red_flags.hpp"

#include <algorithm>
#include <regex>
#include <sstream>

namespace grader {
namespace {

// The source with every comment made blanks (its newlines kept, so lines stay
// where they were); string and character literals are kept, since a path such
// as "/proc/self/cmdline" is one.
std::string without_comments(const std::string& s) {
  std::string out = s;
  enum { code, line_comment, block_comment, string_lit, char_lit } state = code;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i], next = i + 1 < s.size() ? s[i + 1] : '\0';
    switch (state) {
      case code:
        if (c == '/' && next == '/')
          state = line_comment, out[i] = ' ';
        else if (c == '/' && next == '*')
          state = block_comment, out[i] = ' ', out[++i] = ' ';
        else if (c == '"')
          state = string_lit;
        else if (c == '\'')
          state = char_lit;
        break;
      case line_comment:
        if (c == '\n')
          state = code;
        else
          out[i] = ' ';
        break;
      case block_comment:
        if (c == '*' && next == '/')
          state = code, out[i] = ' ', out[++i] = ' ';
        else if (c != '\n')
          out[i] = ' ';
        break;
      case string_lit:
      case char_lit:
        if (c == '\\')
          ++i;
        else if ((state == string_lit && c == '"') || (state == char_lit && c == '\'') || c == '\n')
          state = code;
        break;
    }
  }
  return out;
}

struct Pattern {
  const char* kind;  // a lab.json's "teaches" names it (red_flag_kinds)
  std::regex re;
  const char* what;
};

const std::vector<Pattern>& patterns() {
  static const std::vector<Pattern> p = {
      {"proc", std::regex(R"(/proc/)"), "reads /proc (how it was started, or another process)"},
      {"environment", std::regex(R"(\b(getenv|secure_getenv|environ)\b)"), "reads the environment"},
      {"processes",
       std::regex(R"(\b(fork|vfork|execl|execle|execlp|execv|execve|execvp|system|popen|posix_spawnp?)\s*\()"),
       "starts processes"},
      {"threads", std::regex(R"(\b(std::thread|std::jthread|pthread_create|std::async)\b)"), "starts host threads"},
      {"streams", std::regex(R"(\bcudaStreamCreate\w*)"), "creates streams of its own"},
      {"graphs", std::regex(R"(\b(cudaGraph\w*|cudaStreamBeginCapture\w*)\b)"), "uses CUDA graphs"},
      {"l2_window",
       std::regex(
           R"(\b(accessPolicyWindow|cudaLimitPersistingL2CacheSize|cudaStreamSetAttribute|cudaCtxResetPersistingL2Cache|cudaLaunchAttributeAccessPolicyWindow|annotated_ptr|createpolicy)\b)"),
       "keeps lines in L2 across launches"},
      {"libraries", std::regex(R"(\b(cublas\w*|cusparse\w*|cub::|thrust::))"),
       "calls a library to do work the step's kernels must do"},
      {"dlopen", std::regex(R"(\b(dlopen|dlsym)\b)"), "loads code at run time"},
      {"other_processes", std::regex(R"(\b(ptrace|process_vm_readv|process_vm_writev)\b)"),
       "reads or writes another process"},
      {"sockets", std::regex(R"(\b(socket|connect)\s*\()"), "opens sockets"},
      {"signals", std::regex(R"(\b(kill|killpg|tgkill|sigqueue)\s*\()"), "signals other processes"},
      {"sessions", std::regex(R"(\b(setsid|daemon|setpgid)\s*\()"),
       "leaves its session (a process that outlives its run)"},
      {"constructors", std::regex(R"(__attribute__\s*\(\(\s*(constructor|destructor))"),
       "runs code before or after main"},
      {"device_state", std::regex(R"(\b(cudaDeviceReset|cudaSetDevice|cudaDeviceSetLimit|cudaDeviceSetCacheConfig)\b)"),
       "changes the device's state"},
      {"host_time", std::regex(R"(\b(clock_gettime|gettimeofday|std::chrono|cudaEventElapsedTime)\b)"),
       "measures time (a timed run can be told apart by it)"},
      {"gpu_clock", std::regex(R"(\b(clock64|clock|__globaltimer)\s*\(|%globaltimer)"),
       "reads a GPU clock inside a kernel"},
      {"driver_api",
       std::regex(R"(\b(cudaGetDriverEntryPoint\w*|cuGetProcAddress\w*|cuCtxCreate\w*|cuGreenCtxCreate\w*)\b)"),
       "reaches the driver API or makes a context of its own"},
      {"referee_socket", std::regex(R"(\b(recvmsg|sendmsg|recv|send|read|write)\s*\(\s*3\b|\b(recvmsg|sendmsg)\s*\()"),
       "touches the referee's socket (descriptor 3) or defines the calls that read it"},
      {"l2_hints", std::regex(R"(\b(apply_access_property|access_property|evict_last|discard_memory)\b)"),
       "gives the L2 cache hints about what to keep"},
  };
  return p;
}

}  // namespace

std::vector<RedFlag> red_flags(const std::string& source, const std::vector<std::string>& taught) {
  std::vector<RedFlag> out;
  std::istringstream in(without_comments(source));
  std::size_t n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    for (const auto& p : patterns())
      if (std::find(taught.begin(), taught.end(), p.kind) == taught.end() && std::regex_search(line, p.re))
        out.push_back({n, p.kind, p.what});
  }
  return out;
}

const std::vector<std::string>& red_flag_kinds() {
  static const std::vector<std::string> kinds = [] {
    std::vector<std::string> k;
    for (const auto& p : patterns()) k.push_back(p.kind);
    return k;
  }();
  return kinds;
}

}  // namespace grader
