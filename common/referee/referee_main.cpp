// main() of the referee (see referee.cuh): parses its arguments, runs one
// mode, and prints the one result document on stdout.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <random>

#include "device_checks.cuh"
#include "host/gpu_turn.hpp"
#include "host/hardware_queues.hpp"
#include "lab/compare.hpp"
#include "protocol/referee_protocol.hpp"
#include "referee.cuh"
#include "referee_phases.hpp"
#include "serve.cuh"
#include "timing.cuh"

namespace fs = std::filesystem;
using nlohmann::json;

namespace memlabs {
namespace {

class UsageError : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

RefereeArgs parse_args(int argc, char** argv) {
  RefereeArgs a;
  if (argc < 2) throw UsageError("missing mode (list, run, time, serve)");
  const std::optional<RefereeMode> mode = enum_named(argv[1], kEveryRefereeMode);
  if (!mode) throw UsageError(std::string("unknown mode \"") + argv[1] + "\" (list, run, time, serve)");
  a.mode = *mode;
  char self[4096] = {};
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) throw UsageError("cannot find this program's own path");
  a.self = self;
  std::vector<std::string> rest(argv + 2, argv + argc);
  a.isolation = take_isolation_args(rest);
  for (std::size_t i = 0; i < rest.size(); ++i) {
    const std::string key = rest[i];
    if (i + 1 >= rest.size()) throw UsageError("missing value after " + key);
    const std::string value = rest[++i];
    try {
      if (read_request_option(a, key, value)) continue;
    } catch (const std::logic_error& e) {  // std::invalid_argument and std::out_of_range alike
      throw UsageError(key + " " + value + ": " + e.what());
    }
    if (key == "--worker")
      a.worker = value;
    else if (key == "--timeout")
      a.timeout_s = std::stod(value);
    else if (key == "--warmup-ms")
      a.warmup_ms = std::stod(value);
    else if (key == "--min-rounds")
      a.min_rounds = std::stoul(value);
    else if (key == "--stdout")
      a.out_file = value;
    else if (key == "--stderr")
      a.err_file = value;
    else if (key == "--gpu-lock")
      a.gpu_lock = value;
    else if (key == "--fd")
      continue;  // serve's descriptor: always 3
    else
      throw UsageError("unknown option " + key);
  }
  if (a.variant != "candidate" && a.variant != "baseline") throw UsageError("--variant is candidate or baseline");
  if (a.mode != RefereeMode::list && a.variant == "candidate" && a.worker.empty())
    throw UsageError(std::string(name_of(a.mode)) + " needs --worker PROGRAM");
  return a;
}

void check_cases(const LabDefinition& lab, const std::vector<std::string>& cases) {
  for (const auto& name : cases) {
    bool found = false;
    for (const auto& c : lab.cases) found = found || c.name == name;
    if (found) continue;
    std::string known;
    for (const auto& c : lab.cases) known += (known.empty() ? "" : ", ") + c.name;
    throw UsageError("unknown case \"" + name + "\" (this driver has: " + known + ")");
  }
}

// ---- run: the correctness of each case against the float64 oracle ----

std::vector<std::vector<unsigned char>> read_inputs(const Problem& p) {
  std::vector<std::vector<unsigned char>> copies;
  for (const auto& in : p.inputs()) {
    copies.emplace_back(in.bytes);
    if (in.bytes > 0) CUDA_CHECK(cudaMemcpy(copies.back().data(), in.data, in.bytes, cudaMemcpyDefault));
  }
  return copies;
}

OutputReport output_report(const Output& o, const OutputSnapshot& s) {
  OutputReport r;
  r.name = o.name();
  r.dtype = dtype_name(o.type());
  r.count = o.count();
  r.dims = o.dims();
  r.rtol = o.tolerance().rtol;
  r.atol = o.tolerance().atol;
  r.unwritten = s.unwritten;
  r.first_unwritten = format_index(s.first_unwritten, o.dims());
  r.guard_before_intact = s.guard_before_intact;
  r.guard_after_intact = s.guard_after_intact;
  return r;
}

bool clean(const OutputSnapshot& s) { return s.unwritten == 0 && s.guard_before_intact && s.guard_after_intact; }

class CaseRunner {
 public:
  CaseRunner(const LabDefinition& lab, const RefereeArgs& a, ServerProcess& worker)
      : lab_(lab), a_(a), worker_(worker) {}

  // One run of the candidate on the problem's current inputs; snapshots of the outputs.
  std::vector<OutputSnapshot> run_once(Problem& p, int set, const std::string& name) {
    for (auto* o : p.outputs()) o->poison(nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    const json sets = json::array({set});
    const std::string variant = a_.variant;
    if (p.host_steps())
      expect_reply(worker_, {{"op", Op::before}, {"sets", sets}, {"variant", variant}}, a_.timeout_s,
                   ServerRole::worker, name);
    expect_reply(worker_, {{"op", Op::run}, {"sets", sets}, {"variant", variant}, {"finish", p.host_steps()}},
                 a_.timeout_s, ServerRole::worker, name);
    std::vector<OutputSnapshot> snaps;
    for (auto* o : p.outputs()) snaps.push_back(o->snapshot());
    return snaps;
  }

  // Each output against the driver's oracle, into c.outputs: whether every
  // output is clean (its poison and guards as they must be) and every one matches.
  std::pair<bool, bool> judge_outputs(Problem& p, const std::vector<OutputSnapshot>& snaps, CaseReport& c) {
    const auto expected = p.oracle();
    auto outputs = p.outputs();
    if (expected.size() != outputs.size())
      throw std::logic_error("the driver's oracle gives " + std::to_string(expected.size()) + " outputs for " +
                             std::to_string(outputs.size()));
    bool all_clean = true, all_match = true;
    for (std::size_t k = 0; k < outputs.size(); ++k) {
      const Output& o = *outputs[k];
      OutputReport r = output_report(o, snaps[k]);
      if (expected[k].size() != o.count())
        throw std::logic_error("the oracle's output " + o.name() + " has another size");
      const auto cmp = compare_values(DType::f64, expected[k].data(), o.type(), snaps[k].bytes.data(), o.count(),
                                      o.dims(), o.tolerance());
      r.mismatches = cmp.mismatches;
      r.max_abs_error = value_json(cmp.max_abs_error);
      r.max_rel_error = value_json(cmp.max_rel_error);
      for (const auto& m : cmp.first) r.first.push_back({m.where, value_json(m.expected), value_json(m.got)});
      all_clean = all_clean && clean(snaps[k]);
      all_match = all_match && cmp.ok();
      c.outputs.push_back(std::move(r));
    }
    return {all_clean, all_match};
  }

  // The case run once more: the first output whose values differ from the
  // first run's (a race), if any.
  std::optional<Rerun> rerun_differs(Problem& p, int set, const std::string& name,
                                     const std::vector<OutputSnapshot>& snaps) {
    const auto again = run_once(p, set, name);
    const auto outputs = p.outputs();
    for (std::size_t k = 0; k < outputs.size(); ++k) {
      const Output& o = *outputs[k];
      const auto cmp = compare_values(o.type(), snaps[k].bytes.data(), o.type(), again[k].bytes.data(), o.count(),
                                      o.dims(), o.tolerance());
      if (!cmp.ok()) return Rerun{o.name(), cmp.mismatches, o.count()};
    }
    return std::nullopt;
  }

  // The facts the program reports of this case (an api check), judged by the driver.
  std::vector<FactReport> judged_facts(Problem& p, int set, const std::string& name) {
    const json reply = expect_reply(worker_, {{"op", Op::facts}, {"set", set}}, a_.timeout_s, ServerRole::worker, name);
    std::vector<Fact> reported;
    const json& facts = reply.contains("facts") && reply["facts"].is_array() ? reply["facts"] : json::array();
    for (const auto& f : facts)
      if (f.is_object())
        reported.push_back({f.value("name", std::string()), f.value("ok", false), f.value("detail", std::string())});
    std::vector<FactReport> out;
    for (const auto& f : p.judge(reported)) out.push_back({f.name, f.ok, f.detail});
    return out;
  }

  CaseReport run_case(const std::string& name, int set) {
    CaseReport c;
    c.name = name;
    auto p = open_shared(lab_, name, set, worker_, a_.timeout_s, ServerRole::worker);
    const std::uint64_t host_seed = host_seed_of(a_.seed);  // the program never learns the device inputs' seed
    p->fill(a_.seed, host_seed);
    CUDA_CHECK(cudaDeviceSynchronize());
    expect_reply(worker_, {{"op", Op::inputs}, {"sets", {set}}, {"seed", host_seed}}, a_.timeout_s, ServerRole::worker,
                 name);
    const auto inputs_before = read_inputs(*p);
    const auto snaps = run_once(*p, set, name);

    // Inputs are read-only: a kernel that writes into one (through a cast)
    // may still produce the right output, so they are compared, not trusted.
    const auto inputs_after = read_inputs(*p);
    const auto inputs = p->inputs();
    for (std::size_t k = 0; k < inputs.size(); ++k)
      if (inputs_after[k] != inputs_before[k]) c.modified_inputs.push_back(inputs[k].name);
    // And nothing is written just before or after one (shared_memory.cuh's guard zones).
    for (const auto& in : inputs)
      if (!guard_zones_intact(in.data)) c.written_around_inputs.push_back(in.name);

    const auto [all_clean, all_match] = judge_outputs(*p, snaps, c);
    // A wrong result that changes from run to run is a race, not a wrong formula.
    if (!all_match) c.rerun = rerun_differs(*p, set, name, snaps);
    if (std::find(a_.fact_cases.begin(), a_.fact_cases.end(), name) != a_.fact_cases.end())
      c.facts = judged_facts(*p, set, name);
    c.status = !all_clean ? CaseStatus::bad_output : !all_match ? CaseStatus::mismatch : CaseStatus::ok;
    problems_.push_back(std::move(p));  // the worker keeps its view of the buffers until the end
    return c;
  }

 private:
  const LabDefinition& lab_;
  const RefereeArgs& a_;
  ServerProcess& worker_;
  std::vector<std::unique_ptr<Problem>> problems_;
};

// `worker` was started before this process's CUDA, so that the two start at once.
json mode_run(const LabDefinition& lab, const RefereeArgs& a, ServerProcess& worker, json& result) {
  CaseRunner runner(lab, a, worker);
  result["cases"] = json::array();
  bool ok = true;
  try {
    int set = 0;
    for (const auto& name : a.cases) {
      result["cases"].push_back({{"case", name}, {"status", CaseStatus::running}});
      const auto begin = RefereePhases::Clock::now();
      const CaseReport report = runner.run_case(name, set++);
      result["cases"].back() = report;
      referee_phases().note("case " + name, begin);
      ok = ok && report.status == CaseStatus::ok;
    }
    expect_reply(worker, {{"op", Op::close}}, a.timeout_s, ServerRole::worker, "");
    // The outputs of cases only counted: the referee makes the problem and reads
    // its outputs' sizes, which depend on the case alone; the program is not asked.
    result["output_elements"] = json::object();
    for (const auto& name : a.count_cases) {
      const auto p = lab.make(name);
      std::size_t n = 0;
      for (const auto* o : p->outputs()) n += o->count();
      result["output_elements"][name] = n;
    }
  } catch (const RunFailure& f) {
    worker.kill_all();
    result["failure"] = f.failure();
    result["status"] = RefereeStatus::failed;
    return result;
  }
  worker.kill_all();
  result["status"] = ok ? RefereeStatus::ok : RefereeStatus::mismatch;
  return result;
}

json mode_list(const LabDefinition& lab) {
  json cases = json::array();
  for (const auto& c : lab.cases) cases.push_back({{"name", c.name}, {"description", c.description}});
  return cases;
}

bool no_device_error(cudaError_t e) {
  return e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver || e == cudaErrorDevicesUnavailable;
}

// run and time: the cases checked, CUDA started (a timing first takes its
// shared turn on the GPU), then the mode's work.
void run_or_time(const LabDefinition& lab, const RefereeArgs& a, json& result) {
  if (a.cases.empty()) throw UsageError("--case is required");
  check_cases(lab, a.cases);
  check_cases(lab, a.count_cases);
  if (a.mode == RefereeMode::time && a.cases.size() != 1) throw UsageError("time takes exactly one --case");
  result["seed"] = a.seed;
  // A timing shares the GPU while it starts (CUDA, its server, the first
  // buffers) and has it alone for what it times (timing.cpp); before CUDA
  // starts, no other grade may be timing.
  std::unique_ptr<GpuTurnFiles> turn;
  if (a.mode == RefereeMode::time && !a.gpu_lock.empty()) {
    turn = std::make_unique<GpuTurnFiles>(a.gpu_lock);
    take_gpu_turn(*turn, GpuUse::shared);
  }
  // A run starts the submission's program first: its CUDA starts while this
  // process's does (each takes a quarter of a second), not after it. The
  // grader holds the run's GPU turn for both.
  ServerProcess worker;
  if (a.mode == RefereeMode::run) {
    for (const auto& f : a.fact_cases)
      if (std::find(a.cases.begin(), a.cases.end(), f) == a.cases.end())
        throw UsageError("--facts " + f + " is not a --case");
    const auto begin = RefereePhases::Clock::now();
    worker = start_worker(a);
    referee_phases().note("starting your program", begin);
  }
  const auto cuda_begin = RefereePhases::Clock::now();
  const cudaError_t e = cudaFree(nullptr);
  referee_phases().note("starting CUDA", cuda_begin);
  if (e != cudaSuccess) {
    worker.kill_all();
    result["status"] = no_device_error(e) ? RefereeStatus::no_device : RefereeStatus::failed;
    result["failure"] = failure_of(no_device_error(e) ? FailureKind::no_device : FailureKind::referee,
                                   std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e));
  } else {
    result["device"] = device_json();
    if (a.mode == RefereeMode::run)
      mode_run(lab, a, worker, result);
    else
      time_mode(lab, a, result, turn.get());
  }
}

}  // namespace
}  // namespace memlabs

int main(int argc, char** argv) {
  using namespace memlabs;
  // The referee and its trusted server ("serve") use one stream each: one
  // hardware queue makes their contexts start about three times sooner.
  use_one_hardware_queue();
  if (argc >= 2 && std::string(argv[1]) == "serve") return serve(3, ServerRole::trusted);
  referee_phases();  // its clock starts here
  json result = {{"protocol", kRefereeProtocol}, {"status", RefereeStatus::error}};
  int code = 0;
  try {
    become_referee();
    const RefereeArgs a = parse_args(argc, argv);
    result["mode"] = a.mode;
    const LabDefinition lab = define_lab();
    switch (a.mode) {
      case RefereeMode::list:
        result["cases"] = mode_list(lab);
        result["status"] = RefereeStatus::ok;
        break;
      case RefereeMode::run:
      case RefereeMode::time:
        run_or_time(lab, a, result);
        break;
    }
  } catch (const UsageError& e) {
    result["status"] = RefereeStatus::usage;
    result["failure"] = failure_of(FailureKind::usage, e.what());
    code = 2;
  } catch (const CudaError& e) {
    // The referee's own CUDA failed: a problem of the machine or the course, not the submission's.
    result["status"] = no_device_error(e.code()) ? RefereeStatus::no_device : RefereeStatus::failed;
    result["failure"] = failure_of(no_device_error(e.code()) ? FailureKind::no_device : FailureKind::referee,
                                   std::string("the referee hit ") + cudaGetErrorName(e.code()) + " (" +
                                       cudaGetErrorString(e.code()) + ") at " + e.call());
    code = 10;
  } catch (const RunFailure& f) {
    result["status"] = RefereeStatus::failed;
    result["failure"] = f.failure();
  } catch (const std::exception& e) {
    result["status"] = RefereeStatus::failed;
    result["failure"] = failure_of(FailureKind::referee, e.what());
    code = 11;
  }
  result["phases"] = referee_phases().json();
  std::cout << result.dump() << std::endl;
  // No teardown: the driver frees this process's GPU memory and context when it
  // exits, and the servers it started die with it (PR_SET_PDEATHSIG) if they
  // are not gone already. A timing leaves gigabytes of buffers for this.
  std::_Exit(code);
}
