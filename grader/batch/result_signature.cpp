#include "result_signature.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "atomic_file.hpp"
#include "hmac.hpp"
#include "text.hpp"
#include "toolchain.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace grader {
namespace {

constexpr const char* kSignature = "signature";

fs::path key_file(const fs::path& out) { return out / "slurm" / "key"; }

// Why the key at `file` cannot be trusted, or "" when it can: a plain file
// (not a link someone planted), that no one but its owner may read or write.
std::string key_problem(const fs::path& file, bool must_be_mine) {
  struct stat st {};
  if (::lstat(file.c_str(), &st) != 0) return "missing";
  if (!S_ISREG(st.st_mode)) return "not a plain file";
  if ((st.st_mode & 077) != 0) return "others may read or write it (mode " + std::to_string(st.st_mode & 0777) + ")";
  if (must_be_mine && st.st_uid != ::geteuid()) return "owned by another user (uid " + std::to_string(st.st_uid) + ")";
  return "";
}

std::string random_hex(std::size_t bytes) {
  std::string raw(bytes, '\0');
  const int fd = ::open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  const bool ok = fd >= 0 && ::read(fd, raw.data(), raw.size()) == static_cast<ssize_t>(raw.size());
  if (fd >= 0) ::close(fd);
  if (!ok) throw EnvironmentError("cannot read /dev/urandom for the batch's signing key");
  static const char* digits = "0123456789abcdef";
  std::string hex;
  for (unsigned char c : raw) hex += {digits[c >> 4], digits[c & 15]};
  return hex;
}

std::string key_text(const fs::path& file) { return first_line(read_file(file).value_or("")); }

std::string unsigned_text(json doc) {
  doc.erase(kSignature);
  return doc.dump();
}

}  // namespace

std::string make_result_key(const fs::path& out) {
  const fs::path file = key_file(out);
  if (::access(file.c_str(), F_OK) != 0 && errno == ENOENT) {
    // Made 0600 before a byte is written, then moved into place whole.
    const fs::path temp = file.string() + ".new-" + std::to_string(::getpid());
    fs::create_directories(file.parent_path());
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) throw EnvironmentError("cannot create " + temp.string() + " for the batch's signing key");
    const std::string text = random_hex(32) + "\n";
    const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) && ::fsync(fd) == 0;
    ::close(fd);
    if (!ok || ::rename(temp.c_str(), file.c_str()) != 0) {
      ::unlink(temp.c_str());
      throw EnvironmentError("cannot write the batch's signing key " + file.string());
    }
  }
  const std::string problem = key_problem(file, true);
  if (!problem.empty())
    throw EnvironmentError("the batch's signing key " + file.string() + " cannot be trusted: " + problem +
                           "; remove it and run `grader batch --slurm` again");
  return key_text(file);
}

std::string read_result_key(const fs::path& out) {
  const fs::path file = key_file(out);
  const std::string problem = key_problem(file, false);
  if (problem == "missing")
    throw EnvironmentError("no signing key " + file.string() +
                           ": this batch was written by an older grader; run `grader batch --slurm` again");
  if (!problem.empty())
    throw EnvironmentError("the batch's signing key " + file.string() + " cannot be trusted: " + problem);
  const std::string key = key_text(file);
  if (key.size() != 64) throw EnvironmentError("the batch's signing key " + file.string() + " is not 64 hex digits");
  return key;
}

json signed_result(json doc, const std::string& key) {
  doc[kSignature] = hmac_sha256_hex(key, unsigned_text(doc));
  return doc;
}

bool signature_holds(const json& doc, const std::string& key) {
  if (!doc.is_object() || !doc.contains(kSignature) || !doc[kSignature].is_string()) return false;
  return same_text_constant_time(doc[kSignature].get<std::string>(), hmac_sha256_hex(key, unsigned_text(doc)));
}

}  // namespace grader
