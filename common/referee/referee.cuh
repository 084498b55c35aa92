// The referee: the trusted program that grades one submission's runs. It owns
// every input and output on the GPU (shared_memory.cuh), starts the
// submission's program (the worker) in isolation and asks it to compute, runs
// the baseline, the library and a plain copy in a trusted server of its own,
// checks every output itself, times every request from outside, and writes
// the one result the grader reads: its own stdout, which no other process holds.
//
//   referee list
//   referee run  --worker W --case C... --seed S [--facts C]... [--variant baseline] [--timeout T]
//   referee time --worker W --case C --seed S [--cap-s X] [--decide ratio:threshold]... [--timeout T]
//   referee serve --fd 3   (its trusted server; see serve.cuh)
// plus --stdout F --stderr F (where the worker prints) and the isolation options (isolation.hpp).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "host/isolation.hpp"
#include "host/server_process.hpp"
#include "lab/lab_api.cuh"
#include "protocol/referee_protocol.hpp"

namespace memlabs {

// The grader's request (referee_protocol.hpp), and what the grader's run of
// the referee adds: where the programs are, their limits and their output.
struct RefereeArgs : RefereeRequest {
  std::string self;       // this program, for its trusted server
  std::string worker;     // the submission's program
  double timeout_s = 60;  // per request to the worker
  double warmup_ms = 100;
  std::size_t min_rounds = 10;
  std::string out_file, err_file;
  Isolation isolation;
  // time: the GPU's lock file (gpu_turn.hpp). The referee takes its own turns:
  // shared while it starts, alone for everything it times.
  std::string gpu_lock;
};

// A run that cannot go on: what the result's "failure" says about it (referee_failures.hpp).
class RunFailure : public std::runtime_error {
 public:
  explicit RunFailure(RunFailureReport failure) : std::runtime_error(failure.message), failure_(std::move(failure)) {}
  const RunFailureReport& failure() const { return failure_; }

 private:
  RunFailureReport failure_;
};

// The worker for a submission (or, with variant "baseline", the trusted server
// standing in for one).
ServerProcess start_worker(const RefereeArgs& args);
ServerProcess start_trusted_server(const RefereeArgs& args);

// Sends a request and returns the reply; throws RunFailure naming `who`,
// `phase` and `case_name` when there is no good reply. A worker that failed
// is killed first, so what it printed is complete.
nlohmann::json expect_reply(ServerProcess& server, const nlohmann::json& request, double timeout_s, ServerRole who,
                            const std::string& case_name, const std::vector<int>& fds = {});

// A problem of `case_name` built in the referee over exportable buffers, and
// opened as set `set` in `server` over the same buffers.
std::unique_ptr<Problem> open_shared(const LabDefinition& lab, const std::string& case_name, int set,
                                     ServerProcess& server, double timeout_s, ServerRole who,
                                     std::size_t* shared_bytes = nullptr);

nlohmann::json device_json();

}  // namespace memlabs
