#include "seal.hpp"

#include <fcntl.h>
#include <grp.h>
#include <linux/types.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace memlabs {
namespace {

// Landlock's user API, spelled out here: the system headers of many
// distributions predate the rights and scopes this uses (linux/landlock.h).
constexpr __u64 kExecute = 1ull << 0, kWriteFile = 1ull << 1, kReadFile = 1ull << 2, kReadDir = 1ull << 3,
                kRefer = 1ull << 13, kTruncate = 1ull << 14, kIoctlDev = 1ull << 15;
constexpr __u64 kBindTcp = 1ull << 0, kConnectTcp = 1ull << 1;
constexpr __u64 kScopeAbstractUnixSocket = 1ull << 0, kScopeSignal = 1ull << 1;
constexpr int kCreateRulesetVersion = 1, kRulePathBeneath = 1;
// What a rule on a file, not a folder, may allow.
constexpr __u64 kFileRights = kExecute | kWriteFile | kReadFile | kTruncate | kIoctlDev;

struct RulesetAttr {
  __u64 handled_access_fs;
  __u64 handled_access_net;  // ABI 4
  __u64 scoped;              // ABI 6
};
struct __attribute__((packed)) PathBeneathAttr {
  __u64 allowed_access;
  __s32 parent_fd;
};

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

// Every filesystem right this ABI knows.
__u64 all_fs_rights(int abi) {
  __u64 all = (1ull << 13) - 1;
  if (abi >= 2) all |= kRefer;
  if (abi >= 3) all |= kTruncate;
  if (abi >= 5) all |= kIoctlDev;
  return all;
}

bool is_directory(int fd) {
  struct stat sb {};
  return ::fstat(fd, &sb) == 0 && S_ISDIR(sb.st_mode);
}

// Adds "`rights` beneath `path`"; a path that does not exist is skipped.
std::string add_rule(int ruleset, const std::string& path, __u64 rights) {
  const int fd = ::open(path.c_str(), O_PATH | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT ? "" : "cannot open " + path + ": " + std::strerror(errno);
  PathBeneathAttr rule{is_directory(fd) ? rights : (rights & kFileRights), fd};
  const long r = ::syscall(SYS_landlock_add_rule, ruleset, kRulePathBeneath, &rule, 0);
  const int err = errno;
  ::close(fd);
  return r == 0 ? "" : "cannot allow " + path + ": " + std::strerror(err);
}

std::string apply_landlock(const SealSpec& s, int abi) {
  const __u64 all = all_fs_rights(abi);
  RulesetAttr attr{all, 0, 0};
  std::size_t size = sizeof(__u64);
  if (abi >= 4) {
    // No TCP for a program the tools do not talk to: the tools' own link is TCP on 127.0.0.1.
    if (!s.under_tool) attr.handled_access_net = kBindTcp | kConnectTcp;
    size = 2 * sizeof(__u64);
  }
  if (abi >= 6) {
    attr.scoped = kScopeSignal | (s.under_tool ? 0 : kScopeAbstractUnixSocket);
    size = sizeof(RulesetAttr);
  }
  const int ruleset = static_cast<int>(::syscall(SYS_landlock_create_ruleset, &attr, size, 0));
  if (ruleset < 0) return std::string("cannot make a Landlock ruleset: ") + std::strerror(errno);
  const __u64 read = kExecute | kReadFile | kReadDir;
  std::string why;
  for (const auto& p : s.read)
    if (why.empty()) why = add_rule(ruleset, p, read);
  // The GPU's device files are written and take ioctls; /dev/shm holds POSIX shared memory.
  if (why.empty()) why = add_rule(ruleset, "/dev", read | kWriteFile | (all & (kIoctlDev | kTruncate)));
  if (why.empty()) why = add_rule(ruleset, "/dev/shm", all);
  // The CUDA runtime names its threads through /proc/self/task/*/comm.
  if (why.empty()) why = add_rule(ruleset, "/proc", read | kWriteFile | (all & kTruncate));
  for (const auto& p : s.write)
    if (why.empty()) why = add_rule(ruleset, p, all);
  if (why.empty() && ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    why = std::string("cannot set no_new_privs: ") + std::strerror(errno);
  if (why.empty() && ::syscall(SYS_landlock_restrict_self, ruleset, 0) != 0)
    why = std::string("cannot restrict this process: ") + std::strerror(errno);
  ::close(ruleset);
  return why;
}

void append_dirs_of(const char* list, std::vector<std::string>& out, bool entries_are_files) {
  if (!list) return;
  std::string s = list, item;
  for (std::size_t i = 0; i <= s.size(); ++i) {
    const bool end = i == s.size() || s[i] == ':' || s[i] == ' ';
    if (!end) {
      item += s[i];
      continue;
    }
    if (!item.empty() && item.front() == '/') {
      std::string dir = item;
      if (entries_are_files) dir = dir.substr(0, dir.find_last_of('/'));
      char resolved[PATH_MAX];
      if (::realpath(dir.c_str(), resolved)) dir = resolved;
      // A tool's injection library loads its siblings from its install's top
      // folders: two levels above the library's own folder.
      if (entries_are_files)
        for (int up = 0; up < 2 && dir.find('/', 1) != std::string::npos; ++up) {
          const std::string parent = dir.substr(0, dir.find_last_of('/'));
          if (std::count(parent.begin(), parent.end(), '/') < 2) break;  // never /opt or /usr as a whole
          dir = parent;
        }
      if (dir.size() > 1) out.push_back(dir);
    }
    item.clear();
  }
}

}  // namespace

int landlock_abi() {
  const long v = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, kCreateRulesetVersion);
  return v > 0 ? static_cast<int>(v) : 0;
}

std::vector<std::string> system_read_folders() {
  return {"/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/etc", "/sys"};
}

std::vector<std::string> library_folders_of_this_environment() {
  std::vector<std::string> out;
  append_dirs_of(std::getenv("LD_PRELOAD"), out, /*entries_are_files=*/true);
  append_dirs_of(std::getenv("CUDA_INJECTION64_PATH"), out, /*entries_are_files=*/true);
  append_dirs_of(std::getenv("LD_LIBRARY_PATH"), out, /*entries_are_files=*/false);
  return out;
}

std::string seal_this_process(const SealSpec& s, bool& landlock_applied) {
  landlock_applied = false;
  const rlimit no_core{0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);
  if (s.file_bytes > 0) {
    const rlimit l{s.file_bytes, s.file_bytes};
    if (::setrlimit(RLIMIT_FSIZE, &l) != 0) return std::string("cannot limit file sizes: ") + std::strerror(errno);
  }
  if (s.cpu_seconds > 0) {
    const rlimit l{static_cast<rlim_t>(s.cpu_seconds), static_cast<rlim_t>(s.cpu_seconds) + 1};
    if (::setrlimit(RLIMIT_CPU, &l) != 0) return std::string("cannot limit CPU time: ") + std::strerror(errno);
  }
  const int abi = landlock_abi();
  if (abi > 0) {
    const std::string why = apply_landlock(s, abi);
    if (!why.empty()) return why;
    landlock_applied = true;
  } else if (s.require_landlock) {
    return "Landlock is not available on this kernel (it needs Linux 5.13 or later with Landlock enabled, and no "
           "seccomp filter that refuses it), so the files a submission may read cannot be limited";
  }
  // Before the identity changes, while raising the limit is still allowed: a
  // lower one inherited from the tool's run would otherwise stay. The kernel
  // counts the processes of the user the process then is.
  if (s.processes > 0) {
    rlimit l{};
    ::getrlimit(RLIMIT_NPROC, &l);
    // Raising a hard limit needs CAP_SYS_RESOURCE, which containers often drop
    // even for root: a lower limit already in force holds instead.
    const rlim_t want = std::min<rlim_t>(s.processes, l.rlim_max);
    l.rlim_cur = l.rlim_max = want;
    if (::setrlimit(RLIMIT_NPROC, &l) != 0) return std::string("cannot limit processes: ") + std::strerror(errno);
  }
  return s.change_identity ? become_user(s) : "";
}

std::string become_user(const SealSpec& s) {
  if (::setgroups(0, nullptr) != 0 || ::setresgid(s.gid, s.gid, s.gid) != 0 || ::setresuid(s.uid, s.uid, s.uid) != 0)
    return std::string("cannot become user ") + std::to_string(s.uid) + ": " + std::strerror(errno);
  if (::geteuid() != s.uid || ::getuid() != s.uid) return "the user did not change";
  return "";
}

std::vector<std::string> seal_command(const std::string& launcher, const SealSpec& s,
                                      const std::vector<std::string>& program_argv) {
  std::vector<std::string> a = {launcher};
  for (const auto& p : s.read) a.insert(a.end(), {"--read", p});
  for (const auto& p : s.write) a.insert(a.end(), {"--write", p});
  if (s.change_identity) a.insert(a.end(), {"--uid", std::to_string(s.uid), "--gid", std::to_string(s.gid)});
  if (s.require_landlock) a.push_back("--require-landlock");
  if (s.under_tool) a.push_back("--under-tool");
  if (s.cpu_seconds > 0) a.insert(a.end(), {"--cpu-seconds", std::to_string(s.cpu_seconds)});
  if (s.file_bytes > 0) a.insert(a.end(), {"--file-bytes", std::to_string(s.file_bytes)});
  if (s.processes > 0) a.insert(a.end(), {"--processes", std::to_string(s.processes)});
  a.push_back("--");
  a.insert(a.end(), program_argv.begin(), program_argv.end());
  return a;
}

SealSpec parse_seal_args(const std::vector<std::string>& args, std::vector<std::string>& program) {
  SealSpec s;
  bool uid = false, gid = false;
  std::size_t i = 0;
  for (; i < args.size() && args[i] != "--"; ++i) {
    const std::string& k = args[i];
    if (k == "--require-landlock") {
      s.require_landlock = true;
      continue;
    }
    if (k == "--under-tool") {
      s.under_tool = true;
      continue;
    }
    if (i + 1 >= args.size()) throw std::invalid_argument("missing value after " + k);
    const std::string& v = args[++i];
    if (k == "--read") {
      s.read.push_back(v);
    } else if (k == "--write") {
      s.write.push_back(v);
    } else if (k == "--uid") {
      s.uid = static_cast<uid_t>(std::stoul(v));
      uid = true;
    } else if (k == "--gid") {
      s.gid = static_cast<gid_t>(std::stoul(v));
      gid = true;
    } else if (k == "--cpu-seconds") {
      s.cpu_seconds = std::stod(v);
    } else if (k == "--file-bytes") {
      s.file_bytes = std::stoull(v);
    } else if (k == "--processes") {
      s.processes = std::stoull(v);
    } else {
      throw std::invalid_argument("unknown option " + k);
    }
  }
  if (uid != gid) throw std::invalid_argument("--uid and --gid go together");
  s.change_identity = uid;
  if (i >= args.size() || i + 1 >= args.size()) throw std::invalid_argument("no program after --");
  program.assign(args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
  return s;
}

}  // namespace memlabs
