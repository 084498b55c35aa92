// One round's pieces: the timed slots (a request each, L2 flushed first, the
// submission's program running only while its own request is served), the
// fresh inputs before every batch and the checks of every candidate batch
// after it (outputs written, canaries and inputs intact, a random sample
// against the baseline). The protocol that orders them is timing.cpp.
#include <algorithm>
#include <chrono>

#include "device_checks.cuh"
#include "timing_session.cuh"

using nlohmann::json;

namespace memlabs::timing_detail {
namespace {

constexpr double kCompareScale = 2.0;  // candidate vs baseline: each within tolerance of the exact answer

// Host arrays (inputs of a lab whose functions take host memory) live in each
// process separately; only device inputs are shared and worth comparing.
bool is_device_memory(const void* p) {
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return a.type == cudaMemoryTypeDevice;
}

// Each output of the first k sets, scanned, until `ok` rejects one.
template <class Ok>
bool every_output(std::vector<std::unique_ptr<Problem>>& sets, std::size_t k, cudaStream_t stream, Ok ok) {
  for (std::size_t i = 0; i < k; ++i)
    for (auto* o : sets[i]->outputs())
      if (!ok(*o, scan_output(*o, stream))) return false;
  return true;
}

// An output whose scan found elements still unwritten.
TimedFailure unwritten_in(TimedFailureKind kind, const Output& o, const OutputScan& scan) {
  TimedFailure f;
  f.kind = kind;
  f.buffer = o.name();
  f.found = scan.unwritten;
  f.count = o.count();
  f.first = format_index(scan.first_unwritten, o.dims());
  return f;
}

}  // namespace

// A slot ends when this process sees the outputs written, not when a server
// says its work is done: right after the reply, a sampled probe of the
// candidate's outputs runs on this process's stream (every slot runs the same
// probe, so each pays the same small cost). Work a program left running when it
// replied either keeps the probe waiting, and so stays inside the time, or is
// still going when the probe reads, and leaves poison at places it drew: a reply
// before the work was done gains nothing (the full scan after the slot looks
// again, outside the time).
void TimingSession::pause_worker() {
  if (worker_.pause()) return;
  if (worker_.pause_failure() == ServerProcess::PauseFailure::by_the_machine)
    throw RunFailure(failure_of(FailureKind::pause_stuck,
                                "your program, one process that started none, would not stop within 5 s: held in "
                                "the kernel (a driver call), the machine's failure"));
  throw RunFailure(
      failure_of(FailureKind::pause, "your program could not be paused: its processes would not all stop"));
}

double TimingSession::flushed(ServerProcess& server, const json& request, ServerRole who) {
  const std::uint64_t probe_seed = rng_();  // drawn before the request: nothing of it is in the slot
  flush_.flush(stream_);
  CUDA_CHECK(cudaStreamSynchronize(stream_));
  const bool untrusted = &server == &worker_;
  if (untrusted) worker_.resume();
  const json reply = expect_reply(server, request, a_.timeout_s, who, case_);
  const auto replied = std::chrono::steady_clock::now();
  // A lab with host steps fills its outputs in the untimed step after this one, often in managed
  // memory the probe's reads would move: no slot of such a lab is probed (lab03's timing, as before it).
  const std::size_t left =
      host_steps_ ? 0 : sampled_unwritten(candidate_outputs(), probe_seed, kCompletionSamples, stream_);
  const double probe_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - replied).count();
  if (untrusted) pause_worker();
  if (untrusted && left && !unfinished_) {
    unfinished_ = true;
    failure_ = {};
    failure_.kind = TimedFailureKind::unfinished;
    failure_.buffer = "its outputs";
    failure_.found = left;
    failure_.count = candidate_outputs().size() * kCompletionSamples;
    failure_.sampled = true;
  }
  return reply.value("seconds", 0.0) + probe_s;
}

std::vector<const Output*> TimingSession::candidate_outputs() const {
  std::vector<const Output*> out;
  for (std::size_t i = 0; i < k_ && i < candidate_sets_.size(); ++i)
    for (const auto* o : candidate_sets_[i]->outputs()) out.push_back(o);
  return out;
}

json TimingSession::sets_json(const std::vector<std::size_t>& sets) const {
  json j = json::array();
  for (auto k : sets) j.push_back(k);
  return j;
}

std::vector<std::size_t> TimingSession::all_sets() const {
  std::vector<std::size_t> v(k_);
  for (std::size_t k = 0; k < k_; ++k) v[k] = k;
  return v;
}

// Host-step labs time only the GPU side: their untimed host steps run around it.
double TimingSession::run_variant(ServerProcess& server, const std::vector<std::size_t>& sets, const char* variant,
                                  ServerRole who) {
  const json s = sets_json(sets);
  if (!host_steps_) return flushed(server, {{"op", Op::run}, {"sets", s}, {"variant", variant}}, who);
  const bool untrusted = &server == &worker_;
  if (untrusted) worker_.resume();
  expect_reply(server, {{"op", Op::before}, {"sets", s}, {"variant", variant}}, a_.timeout_s, who, case_);
  if (untrusted) pause_worker();
  const double t = flushed(server, {{"op", Op::run}, {"sets", s}, {"variant", variant}}, who);
  if (untrusted) worker_.resume();
  expect_reply(server, {{"op", Op::after}, {"sets", s}, {"variant", variant}}, a_.timeout_s, who, case_);
  if (untrusted) pause_worker();
  return t;
}

double TimingSession::slot_baseline(const std::vector<std::size_t>& sets) {
  return run_variant(trusted_, sets, "baseline", ServerRole::trusted);
}
// The candidate, or with --variant baseline the baseline through the same path (a self-test).
double TimingSession::slot_candidate() {
  if (!unfinished_ && !untouched_before_request()) unfinished_ = true;
  const double t = run_variant(worker_, all_sets(), a_.variant.c_str(), ServerRole::worker);
  if (!unfinished_ && !finished_at_reply()) unfinished_ = true;
  return t;
}

// GPU work the paused program queued earlier goes on while it is paused: work
// waiting on the fresh inputs (a stream that waits on a memory value, another
// context) could fill the outputs before the request that is timed. So every
// output must still hold nothing but the poison when the request is sent.
bool TimingSession::untouched_before_request() {
  return every_output(candidate_sets_, k_, stream_, [&](const Output& o, const OutputScan& scan) {
    if (scan.unwritten == o.count()) return true;
    failure_ = {};
    failure_.kind = TimedFailureKind::written_early;
    failure_.buffer = o.name();
    failure_.found = o.count() - scan.unwritten;
    failure_.count = o.count();
    return false;
  });
}

// The program is paused now, but GPU work it queued goes on: work still running
// when the reply came would end in the slots after this one, uncounted. So the
// outputs are scanned at once, on this process's stream, which the GPU serves
// between the program's kernels: anything still poisoned was not done when the
// program said it was. (Work that ends within the time the scan takes to start
// is not seen, and gains no more than that.)
bool TimingSession::finished_at_reply() {
  return every_output(candidate_sets_, k_, stream_, [&](const Output& o, const OutputScan& scan) {
    if (scan.unwritten == 0) return true;
    failure_ = unwritten_in(TimedFailureKind::unfinished, o, scan);
    return false;
  });
}
double TimingSession::slot_copy(std::size_t times) {
  return flushed(trusted_,
                 {{"op", Op::copy},
                  {"bytes", copy_bytes_},
                  {"times", times},
                  {"over_host_link", trusted_sets_[0]->peak_over_host_link()}},
                 ServerRole::trusted);
}
double TimingSession::slot_library() {
  return flushed(trusted_, {{"op", Op::library}, {"sets", sets_json(all_sets_trusted())}}, ServerRole::trusted);
}
double TimingSession::slot_nop() { return flushed(trusted_, {{"op", Op::nop}}, ServerRole::trusted); }

// Every set in use (a slow candidate uses only the first few of those allocated).
std::vector<std::size_t> TimingSession::all_sets_trusted() const {
  std::vector<std::size_t> v(std::min(k_, trusted_sets_.size()));
  for (std::size_t k = 0; k < v.size(); ++k) v[k] = k;
  return v;
}

// `count` distinct sets drawn at random.
std::vector<std::size_t> TimingSession::sample_sets(std::size_t count) {
  std::vector<std::size_t> v = all_sets_trusted();
  std::shuffle(v.begin(), v.end(), rng_);
  v.resize(std::min(count, v.size()));
  std::sort(v.begin(), v.end());
  return v;
}

// New random inputs in every set: one host seed for the batch (host-side
// state exists once per process), a device seed per set. The submission's
// program gets its host-side inputs first, then is paused before any device
// input it could read changes.
void TimingSession::new_inputs(bool candidate) {
  const std::uint64_t host_seed = rng_();
  const auto used = all_sets_trusted();
  std::vector<std::uint64_t> seeds(used.size());
  for (auto& s : seeds) s = rng_();
  expect_reply(trusted_, {{"op", Op::inputs}, {"sets", sets_json(used)}, {"seed", host_seed}}, a_.timeout_s,
               ServerRole::trusted, case_);
  for (std::size_t k : used) {
    trusted_sets_[k]->fill(seeds[k], host_seed);
    for (auto* o : trusted_sets_[k]->outputs()) o->poison(stream_);
  }
  if (candidate) {
    worker_.resume();
    expect_reply(worker_, {{"op", Op::inputs}, {"sets", sets_json(all_sets())}, {"seed", host_seed}}, a_.timeout_s,
                 ServerRole::worker, case_);
    pause_worker();
    input_digests_.assign(k_, {});
    for (std::size_t k = 0; k < k_; ++k) {
      candidate_sets_[k]->fill(seeds[k], host_seed);
      for (auto* o : candidate_sets_[k]->outputs()) o->poison(stream_);
      CUDA_CHECK(cudaDeviceSynchronize());
      for (const auto& in : candidate_sets_[k]->inputs())
        input_digests_[k].push_back(is_device_memory(in.data) ? device_digest(in.data, in.bytes, stream_) : 0);
    }
    ++fresh_input_sets_;
  }
  CUDA_CHECK(cudaDeviceSynchronize());
}

// Every candidate output scanned, the inputs compared, and the sample's
// values against the baseline's. Returns false with failure_ set.
bool TimingSession::verify(const std::vector<std::size_t>& sample) {
  for (std::size_t k = 0; k < k_; ++k) {
    Problem& c = *candidate_sets_[k];
    const auto ins = c.inputs();
    for (std::size_t i = 0; i < ins.size(); ++i)
      if (is_device_memory(ins[i].data) && device_digest(ins[i].data, ins[i].bytes, stream_) != input_digests_[k][i]) {
        failure_ = {};
        failure_.kind = TimedFailureKind::modified_input;
        failure_.buffer = ins[i].name;
        return false;
      }
    for (auto* o : c.outputs()) {
      const OutputScan scan = scan_output(*o, stream_);
      if (scan.unwritten) {
        failure_ = unwritten_in(TimedFailureKind::unwritten, *o, scan);
        return false;
      }
      if (!scan.guard_before_intact || !scan.guard_after_intact) {
        failure_ = {};
        failure_.kind = TimedFailureKind::canary;
        failure_.buffer = o->name();
        failure_.before = !scan.guard_before_intact;
        return false;
      }
    }
  }
  for (std::size_t k : sample) {
    auto want = trusted_sets_[k]->outputs();
    auto got = candidate_sets_[k]->outputs();
    for (std::size_t j = 0; j < want.size() && j < got.size(); ++j) {
      const DeviceComparison cmp = compare_outputs(*want[j], *got[j], kCompareScale, stream_);
      ++verified_outputs_;
      if (cmp.mismatches) {
        failure_ = {};
        failure_.kind = TimedFailureKind::mismatch;
        failure_.buffer = got[j]->name();
        failure_.found = cmp.mismatches;
        failure_.count = got[j]->count();
        failure_.first = format_index(cmp.first, got[j]->dims());
        failure_.expected = value_json(cmp.expected);
        failure_.got = value_json(cmp.got);
        return false;
      }
    }
  }
  verified_launches_ += sample.size();
  return true;
}

}  // namespace memlabs::timing_detail
