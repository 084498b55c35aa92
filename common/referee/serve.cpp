#include "serve.cuh"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>

#include "lab/lab_api.cuh"
#include "lab/shared_memory.cuh"
#include "protocol/channel.hpp"
#include "protocol/referee_protocol.hpp"

using nlohmann::json;

namespace memlabs {
namespace {

json error_json(const CudaError& e, const std::string& phase, const std::string& case_name) {
  const std::string file = e.file();
  return {{"kind", "cuda"},
          {"name", cudaGetErrorName(e.code())},
          {"message", cudaGetErrorString(e.code())},
          {"call", e.call()},
          {"where", file.substr(file.find_last_of('/') + 1) + ":" + std::to_string(e.line())},
          {"phase", phase},
          {"case", case_name}};
}

Variant parse_variant(const json& request) {
  return request.value("variant", "candidate") == "baseline" ? Variant::baseline : Variant::candidate;
}

// Page-locked host bytes, which a copy engine reads and writes at the link's speed.
class PinnedBytes {
 public:
  PinnedBytes() = default;
  explicit PinnedBytes(std::size_t bytes) {
    void* p = nullptr;
    CUDA_CHECK(cudaMallocHost(&p, bytes));
    p_.reset(static_cast<unsigned char*>(p));
  }
  unsigned char* get() const { return p_.get(); }
  explicit operator bool() const { return p_ != nullptr; }
  void reset() { p_.reset(); }

 private:
  struct Free {
    void operator()(unsigned char* p) const { cudaFreeHost(p); }
  };
  std::unique_ptr<unsigned char, Free> p_;
};

class Server {
 public:
  Server(int fd, ServerRole role) : role_(role), channel_(fd), lab_(define_lab()), sentinel_(1) {}

  int loop() {
    for (;;) {
      std::optional<Message> m;
      try {
        m = channel_.receive(-1);
      } catch (const ChannelClosed&) {
        return 0;  // the referee is gone: nothing left to do
      }
      const json& q = m->body;
      const std::string op_name = q.value("op", "");
      phase_ = op_name;
      id_ = q.contains("id") ? q["id"] : json();  // every reply gives back its request's id
      try {
        const std::optional<Op> op = op_named(op_name);
        if (!op) throw std::runtime_error("unknown request \"" + op_name + "\"");
        json reply = handle(*op, q, m->fds);
        reply["ok"] = true;
        reply["id"] = id_;
        channel_.send(reply);
        if (*op == Op::close) return 0;
      } catch (const CudaError& e) {
        send_error(error_json(e, phase_, case_));
        // A CUDA error poisons the context: no further request can succeed, and
        // freeing what it held may itself fail or crash (after a reset).
        std::fflush(nullptr);
        std::_Exit(10);
      } catch (const std::exception& e) {
        send_error({{"kind", "exception"}, {"message", e.what()}, {"phase", phase_}, {"case", case_}});
      }
    }
  }

 private:
  void send_error(const json& error) {
    try {
      channel_.send({{"ok", false}, {"error", error}, {"id", id_}});
    } catch (const std::exception&) {
    }
  }

  Problem& problem(const json& set) {
    const auto it = problems_.find(set.get<int>());
    if (it == problems_.end()) throw std::runtime_error("no problem was opened as set " + set.dump());
    return *it->second;
  }

  template <class F>
  void each(const json& q, F&& f) {
    for (const auto& s : q.at("sets")) f(problem(s));
  }

  // A launcher that calls cudaDeviceReset() destroys this process's context:
  // its stream and the buffers shared with it are gone, and the runtime may
  // crash on their stale handles. The loss is reported as the CUDA error it
  // is, the moment the submission's code returns.
  void check_context() {
    cudaPointerAttributes a{};
    const cudaError_t e = cudaPointerGetAttributes(&a, sentinel_.data());
    if (e != cudaSuccess || a.type != cudaMemoryTypeDevice) {
      (void)cudaGetLastError();
      throw CudaError(cudaErrorContextIsDestroyed,
                      "cudaDeviceReset() or another teardown of the context in the lab's code", __FILE__, __LINE__);
    }
  }

  // Everything this process queued, on any stream: work a launcher puts on a
  // stream other than the one it was given still counts, and is waited for.
  void wait() { CUDA_CHECK(cudaDeviceSynchronize()); }

  cudaStream_t stream() {
    if (!stream_) CUDA_CHECK(cudaStreamCreate(&stream_));
    return stream_;
  }

  // The copy a lab's speed is compared with (Problem::peak_over_host_link):
  // `bytes` from device memory to device memory, or `bytes` of pinned host
  // memory to the device while as many come back on a stream of their own, the
  // link's two directions at once, as a pipeline that hides its kernels would.
  void copy(std::size_t bytes, int times, bool over_host_link) {
    if (copy_src_.size() != bytes) {
      copy_src_ = DeviceBuffer<unsigned char>(bytes);
      copy_dst_ = DeviceBuffer<unsigned char>(bytes);
      CUDA_CHECK(cudaMemsetAsync(copy_src_.data(), 1, bytes, stream()));
      host_src_.reset();
      host_dst_.reset();
    }
    if (!over_host_link) {
      for (int i = 0; i < times; ++i)
        CUDA_CHECK(cudaMemcpyAsync(copy_dst_.data(), copy_src_.data(), bytes, cudaMemcpyDeviceToDevice, stream()));
      return;
    }
    if (!host_src_) {
      host_src_ = PinnedBytes(bytes);
      host_dst_ = PinnedBytes(bytes);
    }
    if (!back_stream_) CUDA_CHECK(cudaStreamCreateWithFlags(&back_stream_, cudaStreamNonBlocking));
    for (int i = 0; i < times; ++i) {
      CUDA_CHECK(cudaMemcpyAsync(copy_dst_.data(), host_src_.get(), bytes, cudaMemcpyHostToDevice, stream()));
      CUDA_CHECK(cudaMemcpyAsync(host_dst_.get(), copy_src_.data(), bytes, cudaMemcpyDeviceToHost, back_stream_));
    }
  }

  // Long (about 80 lines) on purpose: one short branch per request of the
  // protocol, so that this function is the protocol's table of requests.
  json handle(Op op, const json& q, std::vector<int>& fds) {
    switch (op) {
      case Op::open: {
        case_ = q.at("case").get<std::string>();
        std::vector<SharedAllocation> shared;
        const auto& sizes = q.at("bytes");
        if (sizes.size() != fds.size()) throw std::runtime_error("open: descriptors and sizes differ");
        for (std::size_t i = 0; i < fds.size(); ++i) shared.push_back({fds[i], sizes[i].get<std::size_t>()});
        fds.clear();
        ImportScope scope(std::move(shared));
        auto p = lab_.make(case_);
        if (!scope.done()) throw SharedMemoryMismatch("the problem allocates fewer buffers than were shared with it");
        problems_[q.at("set").get<int>()] = std::move(p);
        return json::object();
      }
      case Op::inputs: {
        each(q, [&](Problem& p) { p.host_inputs(q.at("seed").get<std::uint64_t>()); });
        return json::object();
      }
      case Op::before: {
        const Variant v = parse_variant(q);
        each(q, [&](Problem& p) { p.prepare(v); });
        check_context();
        return json::object();
      }
      case Op::run: {
        const Variant v = parse_variant(q);
        // "finish": the host reads the results the moment run() returns, as the
        // lab's program would, so a launcher that returns before its GPU work is
        // done is caught. Timed runs wait first: the time is of the GPU side.
        const bool finish = q.value("finish", false);
        each(q, [&](Problem& p) {
          p.run(v, stream());
          check_context();
          CUDA_CHECK_LAUNCH();
          if (finish) p.finish(v, stream());
        });
        check_context();
        wait();
        return json::object();
      }
      case Op::after: {
        const Variant v = parse_variant(q);
        each(q, [&](Problem& p) { p.finish(v, stream()); });
        check_context();
        wait();
        return json::object();
      }
      case Op::library: {
        // The referee sends it to its trusted server only. In the worker,
        // driver.cu's run_library is Problem's empty default (the library code is
        // compiled under MEMLABS_REFEREE alone), and an answer would time nothing.
        if (role_ != ServerRole::trusted)
          throw std::runtime_error(
              "the library runs in the referee's trusted server, never in the submission's program");
        each(q, [&](Problem& p) { p.run_library(stream()); });
        CUDA_CHECK_LAUNCH();
        wait();
        return json::object();
      }
      case Op::copy: {
        copy(q.at("bytes").get<std::size_t>(), q.at("times").get<int>(), q.value("over_host_link", false));
        wait();
        return json::object();
      }
      case Op::nop: {
        launch_empty_kernel(stream());
        wait();
        return json::object();
      }
      case Op::facts: {
        json facts = json::array();
        for (const auto& f : problem(q.at("set")).facts())
          facts.push_back({{"name", f.name}, {"ok", f.ok}, {"detail", f.detail}});
        return {{"facts", facts}};
      }
      case Op::close: {
        problems_.clear();
        return json::object();
      }
    }
    throw std::runtime_error("a request outside the protocol");  // not reached: every Op is handled above
  }

  const ServerRole role_;
  Channel channel_;
  LabDefinition lab_;
  DeviceBuffer<unsigned char> sentinel_;  // lives as long as the context: check_context()
  std::map<int, std::unique_ptr<Problem>> problems_;
  cudaStream_t stream_ = nullptr;
  DeviceBuffer<unsigned char> copy_src_, copy_dst_;
  PinnedBytes host_src_, host_dst_;  // the host's side of a copy over the link
  cudaStream_t back_stream_ = nullptr;
  std::string phase_, case_;
  json id_;  // the id of the request being answered
};

}  // namespace

int serve(int fd, ServerRole role) {
  try {
    return Server(fd, role).loop();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "server: %s\n", e.what());
    return 11;
  }
}

}  // namespace memlabs
