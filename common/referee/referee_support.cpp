#include <fcntl.h>
#include <unistd.h>

#include "lab/shared_memory.cuh"
#include "referee.cuh"

using nlohmann::json;

namespace memlabs {
namespace {

int open_output(const std::string& file) {
  if (file.empty()) return -1;
  return ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

// The phase a failed request belongs to, in the words the grader uses.
std::string phase_of(const std::string& op_name, ServerRole who) {
  const std::optional<Op> op = op_named(op_name);
  if (!op) return op_name;
  switch (*op) {
    case Op::run:
    case Op::before:
    case Op::after:
      return who == ServerRole::worker ? "candidate" : "baseline";
    case Op::library:
      return "library";
    case Op::open:
    case Op::inputs:
      return "setup";
    case Op::facts:
      return "facts";
    case Op::copy:
    case Op::nop:
    case Op::close:
      return op_name;
  }
  return op_name;  // not reached
}

}  // namespace

ServerProcess start_worker(const RefereeArgs& a) {
  SpawnOptions o;
  if (a.variant == "baseline") {
    o.argv = {a.self, "serve", "--fd", "3"};
  } else {
    o.argv = {a.worker, "serve", "--fd", "3"};
    o.untrusted = true;
    o.isolation = a.isolation;
  }
  const Fd out(open_output(a.out_file)), err(open_output(a.err_file));
  o.stdout_fd = out.get();
  o.stderr_fd = err.get();
  try {
    return ServerProcess::spawn(o);
  } catch (const std::exception& e) {
    throw RunFailure(failure_of(FailureKind::no_start, std::string("could not start your program: ") + e.what()));
  }
}

ServerProcess start_trusted_server(const RefereeArgs& a) {
  SpawnOptions o;
  o.argv = {a.self, "serve", "--fd", "3"};
  try {
    return ServerProcess::spawn(o);
  } catch (const std::exception& e) {
    throw RunFailure(failure_of(FailureKind::referee, std::string("could not start the trusted server: ") + e.what()));
  }
}

json expect_reply(ServerProcess& server, const json& request, double timeout_s, ServerRole who,
                  const std::string& case_name, const std::vector<int>& fds) {
  const std::string op = request.value("op", "");
  Reply r = server.request(request, timeout_s, fds);
  const std::string phase = phase_of(op, who);
  const auto fail = [&](FailureKind kind, const std::string& message,
                        std::optional<ProgramError> error = std::nullopt) -> json {
    server.kill_all();
    RunFailureReport f = failure_of(kind, message);
    f.who = who;
    f.phase = phase;
    f.case_name = case_name;
    f.op = op;
    f.ending = server.ending();
    f.recent = server.recent();
    f.error = std::move(error);
    if (server.crashed()) f.signal = server.signal();
    throw RunFailure(f);
  };
  if (!r.ok) {
    if (r.failure == NoReply::timeout)
      return fail(FailureKind::timeout, "did not answer within " + std::to_string(static_cast<int>(timeout_s)) + " s");
    if (r.failure == NoReply::gone) {
      server.kill_all();
      return fail(server.crashed() ? FailureKind::crash : FailureKind::exit,
                  "ended (" + server.ending() + ") in the middle of a request");
    }
    return fail(FailureKind::protocol, "answered outside the protocol: " + r.detail);
  }
  if (!r.body.value("ok", false)) {
    // The program's own account of what failed (serve.cpp's error_json), read as
    // data: a text that is missing or not a text is empty.
    const json said = r.body.value("error", json::object());
    const auto text = [&](const char* key) {
      return said.is_object() && said.contains(key) && said[key].is_string() ? said[key].get<std::string>() : "";
    };
    const ProgramError error{text("name"), text("message"), text("call"), text("where")};
    return fail(text("kind") == "cuda" ? FailureKind::cuda_error : FailureKind::error,
                error.message.empty() ? "failed" : error.message, error);
  }
  r.body["seconds"] = r.seconds;
  return r.body;
}

std::unique_ptr<Problem> open_shared(const LabDefinition& lab, const std::string& case_name, int set,
                                     ServerProcess& server, double timeout_s, ServerRole who,
                                     std::size_t* shared_bytes) {
  std::unique_ptr<Problem> p;
  std::vector<SharedAllocation> shared;
  {
    ExportScope scope;
    p = lab.make(case_name);
    shared = scope.take();
  }
  std::vector<int> fds;
  json sizes = json::array();
  std::size_t total = 0;
  for (const auto& a : shared) {
    fds.push_back(a.fd);
    sizes.push_back(a.bytes);
    total += a.bytes;
  }
  if (shared_bytes) *shared_bytes = total;
  try {
    expect_reply(server, {{"op", Op::open}, {"case", case_name}, {"set", set}, {"bytes", sizes}}, timeout_s, who,
                 case_name, fds);
  } catch (...) {
    for (int fd : fds) ::close(fd);
    throw;
  }
  for (int fd : fds) ::close(fd);
  return p;
}

json device_json() {
  json d;
  int dev = 0;
  cudaDeviceProp p{};
  if (cudaGetDevice(&dev) == cudaSuccess && cudaGetDeviceProperties(&p, dev) == cudaSuccess) {
    d["name"] = p.name;
    d["cc"] = std::to_string(p.major) + "." + std::to_string(p.minor);
    d["sms"] = p.multiProcessorCount;
    d["l2_bytes"] = p.l2CacheSize;
  }
  return d;
}

}  // namespace memlabs
