#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

#include "compare.hpp"
#include "device_checks.cuh"
#include "l2_flush.cuh"
#include "referee_protocol.hpp"
#include "stats.hpp"
#include "timing.cuh"

using nlohmann::json;

namespace memlabs {
namespace {

constexpr double kTargetBatchMs = 2.0;        // a batch this long makes N a small share of it
constexpr double kMaxBaselineBatchMs = 60;    // a slow baseline is timed on fewer sets
constexpr double kMaxCandidateBatchS = 0.25;  // and so is a slow candidate
constexpr std::size_t kMaxSets = 48;
constexpr double kMemoryShare = 0.6;  // of free device memory, for the buffer sets
// The baseline beside the program, against alone: slower by up to this is noise
// on every lab; beyond it the speedup is scaled down (see report()).
constexpr double kNoiseInterference = 1.10;
constexpr double kCompareScale = 2.0;  // candidate vs baseline: each within tolerance of the exact answer

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

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

double median_of(std::vector<double> v) { return v.empty() ? 0 : median_interval(std::move(v)).median; }

json interval_json(const std::vector<double>& samples) {
  if (samples.empty()) return nullptr;
  const auto i = median_interval(samples);
  return {{"median", i.median}, {"lo", i.lo}, {"hi", i.hi}, {"n", i.n}};
}

// FP32 lanes per SM by compute capability: the peak a kernel cannot pass.
int fp32_lanes(int major, int minor) {
  if (major >= 9 || (major == 8 && minor >= 6)) return 128;
  if (major >= 7 || (major == 6 && minor == 0)) return 64;
  return 128;
}

double peak_gflops() {
  int dev = 0, sms = 0, khz = 0, major = 0, minor = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) return 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, dev);
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
  return 2.0 * sms * fp32_lanes(major, minor) * (khz * 1e3) / 1e9;
}

// The ratio samples of the rounds so far, per-launch times with N taken off.
struct Samples {
  std::vector<double> baseline_ms, candidate_ms, memcpy_ms, library_ms, overhead_ms;
  std::vector<double> speedup, fraction, library_fraction, aa;
  std::size_t rounds = 0;
};

const std::vector<double>& samples_for(const Samples& s, const std::string& what) {
  if (what == "fraction") return s.fraction;
  if (what == "library") return s.library_fraction;
  return s.speedup;
}

// Why the candidate's timed runs cannot be trusted to be real work.
struct TimedFailure {
  std::string kind;  // "mismatch", "unwritten", "canary", "modified_input"
  json detail;
};

class Session {
 public:
  Session(const LabDefinition& lab, const RefereeArgs& a)
      : lab_(lab), a_(a), case_(a.cases.at(0)), rng_(std::random_device{}()) {
    CUDA_CHECK(cudaStreamCreate(&stream_));
  }
  ~Session() {
    worker_.kill_all();
    trusted_.kill_all();
    trusted_sets_.clear();
    candidate_sets_.clear();
    cudaStreamDestroy(stream_);
  }

  void run(json& result) {
    const auto t_start = std::chrono::steady_clock::now();
    trusted_ = start_trusted_server(a_);
    std::size_t set_bytes = 0;
    trusted_sets_.push_back(open_shared(lab_, case_, 0, trusted_, a_.timeout_s, "trusted", &set_bytes));
    Problem& first = *trusted_sets_[0];
    host_steps_ = first.host_steps();
    interference_limit_ = first.interference_limit();
    library_ = !first.library_name().empty();

    // Alone on the GPU: how long the trusted slots take, which sizes the batches.
    k_ = k_baseline_ = 1;
    new_inputs(false);
    // After the first inputs: a lab whose sizes come from its host inputs
    // (lab03's text lengths) knows the bytes it moves only then.
    copy_bytes_ = static_cast<std::size_t>(first.bytes_moved() / 2) / 256 * 256;
    std::vector<double> n0, a0, c0, l0;
    for (int i = 0; i < 4; ++i) {
      n0.push_back(slot_nop());
      a0.push_back(slot_baseline({0}));
      if (copy_bytes_ > 0) c0.push_back(slot_copy(1));
      if (library_) l0.push_back(slot_library());
      warmup_ms_ += 1e3 * (a0.back() + (c0.empty() ? 0 : c0.back()) + (l0.empty() ? 0 : l0.back()));
    }
    const double n = median_of({n0.begin() + 1, n0.end()});
    const double a1 = std::max(1e-6, median_of({a0.begin() + 1, a0.end()}) - n);
    double floor_s = copy_bytes_ > 0 ? std::max(1e-6, median_of({c0.begin() + 1, c0.end()}) - n) : a1;
    if (library_) floor_s = std::min(floor_s, std::max(1e-6, median_of({l0.begin() + 1, l0.end()}) - n));
    for (std::size_t i = 1; i < a0.size(); ++i) solo_baseline_.push_back(1e3 * (a0[i] - n));

    std::size_t free_bytes = 0, total_bytes = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    const std::size_t by_memory =
        set_bytes > 0 ? static_cast<std::size_t>(kMemoryShare * free_bytes / (2.0 * set_bytes)) : kMaxSets;
    k_ = host_steps_ ? 1
                     : std::clamp<std::size_t>(static_cast<std::size_t>(std::ceil(kTargetBatchMs / (1e3 * floor_s))), 1,
                                               std::max<std::size_t>(1, std::min(by_memory, kMaxSets)));
    k_baseline_ =
        std::clamp<std::size_t>(static_cast<std::size_t>(std::ceil(kTargetBatchMs / (1e3 * a1))), 1,
                                std::max<std::size_t>(1, static_cast<std::size_t>(kMaxBaselineBatchMs / (1e3 * a1))));
    k_baseline_ = std::min(k_baseline_, k_);

    for (std::size_t k = 1; k < k_; ++k)
      trusted_sets_.push_back(open_shared(lab_, case_, static_cast<int>(k), trusted_, a_.timeout_s, "trusted"));
    worker_ = start_worker(a_);
    for (std::size_t k = 0; k < k_; ++k)
      candidate_sets_.push_back(open_shared(lab_, case_, static_cast<int>(k), worker_, a_.timeout_s, "worker"));
    if (!worker_.pause()) throw RunFailure({{"kind", "pause"}, {"message", "your program could not be paused"}});

    // Warm-up: clocks ramp, caches and TLBs settle, lazy module loading is done.
    Samples warm;
    do {
      if (!round(warm)) return fail(result);
      warmup_ms_ += 2 * (warm.baseline_ms.back() * k_baseline_ + warm.candidate_ms.back() * k_);
      // A very slow candidate gets fewer launches per batch, so rounds still fit the cap.
      const double batch_s = 1e-3 * warm.candidate_ms.back() * k_;
      if (warm.rounds == 1 && batch_s > kMaxCandidateBatchS) {
        k_ = std::max<std::size_t>(1, static_cast<std::size_t>(kMaxCandidateBatchS / (batch_s / k_)));
        k_baseline_ = std::min(k_baseline_, k_);
      }
    } while (warm.rounds < 2 || warmup_ms_ < a_.warmup_ms);

    const auto t0 = std::chrono::steady_clock::now();
    for (;;) {
      if (!round(s_)) return fail(result);
      const bool over_cap = seconds_since(t0) > a_.cap_s;
      if (s_.rounds < a_.min_rounds && !(over_cap && s_.rounds >= 3)) continue;
      converged_ = all_converged();
      if (converged_ || over_cap) break;
    }
    // A threshold inside the interval: sample more (up to the cap again) before deciding.
    while (any_undecided() && seconds_since(t0) < 2 * a_.cap_s) {
      extended_ = true;
      for (int i = 0; i < 3; ++i)
        if (!round(s_)) return fail(result);
    }
    converged_ = all_converged();
    const double wall = seconds_since(t0);

    // The baseline alone again, with the submission's program and all it started gone.
    worker_.kill_all();
    for (int i = 0; i < 3; ++i) {
      new_inputs(false);
      const double nop = slot_nop();
      solo_baseline_.push_back(1e3 * (slot_baseline(sample_sets(k_baseline_)) - nop) / k_baseline_);
    }
    report(result, wall, seconds_since(t_start));
  }

 private:
  // ---- slots: one timed request each ----

  double flushed(ServerProcess& server, const json& request, const std::string& who) {
    flush_.flush(stream_);
    CUDA_CHECK(cudaStreamSynchronize(stream_));
    const bool untrusted = &server == &worker_;
    if (untrusted) worker_.resume();
    const json reply = expect_reply(server, request, a_.timeout_s, who, case_);
    if (untrusted && !worker_.pause())
      throw RunFailure({{"kind", "pause"}, {"message", "your program could not be paused"}});
    return reply.value("seconds", 0.0);
  }

  json sets_json(const std::vector<std::size_t>& sets) const {
    json j = json::array();
    for (auto k : sets) j.push_back(k);
    return j;
  }

  std::vector<std::size_t> all_sets() const {
    std::vector<std::size_t> v(k_);
    for (std::size_t k = 0; k < k_; ++k) v[k] = k;
    return v;
  }

  // Host-step labs time only the GPU side: their untimed host steps run around it.
  double run_variant(ServerProcess& server, const std::vector<std::size_t>& sets, const char* variant,
                     const std::string& who) {
    const json s = sets_json(sets);
    if (!host_steps_) return flushed(server, {{"op", "run"}, {"sets", s}, {"variant", variant}}, who);
    const bool untrusted = &server == &worker_;
    if (untrusted) worker_.resume();
    expect_reply(server, {{"op", "before"}, {"sets", s}, {"variant", variant}}, a_.timeout_s, who, case_);
    if (untrusted && !worker_.pause())
      throw RunFailure({{"kind", "pause"}, {"message", "your program could not be paused"}});
    const double t = flushed(server, {{"op", "run"}, {"sets", s}, {"variant", variant}}, who);
    if (untrusted) worker_.resume();
    expect_reply(server, {{"op", "after"}, {"sets", s}, {"variant", variant}}, a_.timeout_s, who, case_);
    if (untrusted && !worker_.pause())
      throw RunFailure({{"kind", "pause"}, {"message", "your program could not be paused"}});
    return t;
  }

  double slot_baseline(const std::vector<std::size_t>& sets) {
    return run_variant(trusted_, sets, "baseline", "trusted");
  }
  // The candidate, or with --variant baseline the baseline through the same path (a self-test).
  double slot_candidate() { return run_variant(worker_, all_sets(), a_.variant.c_str(), "worker"); }
  double slot_copy(std::size_t times) {
    return flushed(trusted_, {{"op", "copy"}, {"bytes", copy_bytes_}, {"times", times}}, "trusted");
  }
  double slot_library() {
    return flushed(trusted_, {{"op", "library"}, {"sets", sets_json(all_sets_trusted())}}, "trusted");
  }
  double slot_nop() { return flushed(trusted_, {{"op", "nop"}}, "trusted"); }

  // Every set in use (a slow candidate uses only the first few of those allocated).
  std::vector<std::size_t> all_sets_trusted() const {
    std::vector<std::size_t> v(std::min(k_, trusted_sets_.size()));
    for (std::size_t k = 0; k < v.size(); ++k) v[k] = k;
    return v;
  }

  // `count` distinct sets drawn at random.
  std::vector<std::size_t> sample_sets(std::size_t count) {
    std::vector<std::size_t> v = all_sets_trusted();
    std::shuffle(v.begin(), v.end(), rng_);
    v.resize(std::min(count, v.size()));
    std::sort(v.begin(), v.end());
    return v;
  }

  // ---- inputs ----

  // New random inputs in every set: one host seed for the batch (host-side
  // state exists once per process), a device seed per set. The submission's
  // program gets its host-side inputs first, then is paused before any device
  // input it could read changes.
  void new_inputs(bool candidate) {
    const std::uint64_t host_seed = rng_();
    const auto used = all_sets_trusted();
    std::vector<std::uint64_t> seeds(used.size());
    for (auto& s : seeds) s = rng_();
    expect_reply(trusted_, {{"op", "inputs"}, {"sets", sets_json(used)}, {"seed", host_seed}}, a_.timeout_s, "trusted",
                 case_);
    for (std::size_t k : used) {
      trusted_sets_[k]->fill(seeds[k], host_seed);
      for (auto* o : trusted_sets_[k]->outputs()) o->poison(stream_);
    }
    if (candidate) {
      worker_.resume();
      expect_reply(worker_, {{"op", "inputs"}, {"sets", sets_json(all_sets())}, {"seed", host_seed}}, a_.timeout_s,
                   "worker", case_);
      if (!worker_.pause()) throw RunFailure({{"kind", "pause"}, {"message", "your program could not be paused"}});
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
  bool verify(const std::vector<std::size_t>& sample) {
    for (std::size_t k = 0; k < k_; ++k) {
      Problem& c = *candidate_sets_[k];
      const auto ins = c.inputs();
      for (std::size_t i = 0; i < ins.size(); ++i)
        if (is_device_memory(ins[i].data) &&
            device_digest(ins[i].data, ins[i].bytes, stream_) != input_digests_[k][i]) {
          failure_ = {"modified_input", {{"input", ins[i].name}}};
          return false;
        }
      for (auto* o : c.outputs()) {
        const OutputScan scan = scan_output(*o, stream_);
        if (scan.unwritten) {
          failure_ = {"unwritten",
                      {{"output", o->name()},
                       {"unwritten", scan.unwritten},
                       {"count", o->count()},
                       {"first", format_index(scan.first_unwritten, o->dims())}}};
          return false;
        }
        if (!scan.guard_before_intact || !scan.guard_after_intact) {
          failure_ = {"canary", {{"output", o->name()}, {"before", !scan.guard_before_intact}}};
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
          failure_ = {"mismatch",
                      {{"output", got[j]->name()},
                       {"mismatches", cmp.mismatches},
                       {"count", got[j]->count()},
                       {"where", format_index(cmp.first, got[j]->dims())},
                       {"expected", value_json(cmp.expected)},
                       {"got", value_json(cmp.got)}}};
          return false;
        }
      }
    }
    verified_launches_ += sample.size();
    return true;
  }

  // ---- rounds ----

  bool round(Samples& s) {
    double t[2][5] = {};  // per half: A, B, C, L, N
    for (int half = 0; half < 2; ++half) {
      new_inputs(true);
      // The baseline's sample: before the candidate ran in the first half
      // (the paused worker cannot learn it), after it in the second.
      std::vector<std::size_t> sample;
      const auto A = [&] { t[half][0] = slot_baseline(sample); };
      const auto B = [&] { t[half][1] = slot_candidate(); };
      const auto C = [&] { t[half][2] = copy_bytes_ > 0 ? slot_copy(k_) : 0; };
      const auto L = [&] { t[half][3] = library_ ? slot_library() : 0; };
      const auto N = [&] { t[half][4] = slot_nop(); };
      if (half == 0) {
        sample = sample_sets(k_baseline_);
        A(), B(), C(), L(), N();
      } else {
        N(), L(), C(), B();
        sample = sample_sets(k_baseline_);
        A();
      }
      ++candidate_batches_;
      if (!verify(sample)) {
        failure_.detail["round"] = s.rounds + 1;
        failure_.detail["batches_before"] = candidate_batches_ - 1;
        return false;
      }
    }
    const double n = 0.5 * (t[0][4] + t[1][4]);
    const auto per = [&](int slot, std::size_t launches, int half) {
      return std::max(1e-9, (t[half][slot] - n) / static_cast<double>(launches));
    };
    const double a = 0.5 * (per(0, k_baseline_, 0) + per(0, k_baseline_, 1));
    const double b = 0.5 * (per(1, k_, 0) + per(1, k_, 1));
    s.overhead_ms.push_back(1e3 * n);
    s.baseline_ms.push_back(1e3 * a);
    s.candidate_ms.push_back(1e3 * b);
    s.speedup.push_back(a / b);
    s.aa.push_back(per(0, k_baseline_, 0) / per(0, k_baseline_, 1));
    if (copy_bytes_ > 0) {
      const double c = 0.5 * (per(2, k_, 0) + per(2, k_, 1));
      s.memcpy_ms.push_back(1e3 * c);
      s.fraction.push_back(c / b);
    }
    if (library_) {
      const double l = 0.5 * (per(3, k_, 0) + per(3, k_, 1));
      s.library_ms.push_back(1e3 * l);
      s.library_fraction.push_back(l / b);
    }
    ++s.rounds;
    return true;
  }

  bool all_converged() const {
    const double target = 0.02;
    if (median_interval(s_.speedup).relative_half_width() > target) return false;
    if (!s_.fraction.empty() && median_interval(s_.fraction).relative_half_width() > target) return false;
    if (!s_.library_fraction.empty() && median_interval(s_.library_fraction).relative_half_width() > target)
      return false;
    return true;
  }

  bool any_undecided() const {
    for (const auto& [what, threshold] : a_.decide) {
      const auto& v = samples_for(s_, what);
      if (!v.empty() && decide(median_interval(v), threshold) == Decision::undecided) return true;
    }
    return false;
  }

  // ---- the result ----

  void fail(json& result) {
    result["status"] = "timed_failure";
    result["timed_failure"] = {
        {"kind", failure_.kind}, {"detail", failure_.detail}, {"verified_batches", candidate_batches_ - 1}};
  }

  void report(json& result, double wall, double total) {
    const Problem& p = *trusted_sets_[0];
    const double bytes = p.bytes_moved();
    const double base = median_of(s_.baseline_ms), cand = median_of(s_.candidate_ms);
    const double solo = median_of(solo_baseline_);
    const double slowdown = solo > 0 ? base / solo : 0.0;
    // Beyond what any lab allows for noise, the baseline's slowdown beside the
    // program does not count in the program's favour: the speedup is taken
    // against the baseline as fast as it ran alone.
    double speedup_scale = 1.0;
    if (slowdown > kNoiseInterference) {
      speedup_scale = kNoiseInterference / slowdown;
      for (double& x : s_.speedup) x *= speedup_scale;
    }
    json t = {{"rounds", s_.rounds},
              {"warmup_ms", warmup_ms_},
              {"wall_s", wall},
              {"total_s", total},
              {"converged", converged_},
              {"extended", extended_},
              {"bytes_moved", bytes},
              {"flops", p.flops()},
              {"batch", k_},
              {"baseline_batch", k_baseline_},
              {"overhead_ms", median_of(s_.overhead_ms)},
              {"fresh_input_batches", fresh_input_sets_},
              {"verified_launches", verified_launches_},
              {"baseline_ms", base},
              {"candidate_ms", cand},
              {"speedup", interval_json(s_.speedup)},
              {"aa", interval_json(s_.aa)},
              {"fraction", interval_json(s_.fraction)},
              {"peak_gflops", peak_gflops()},
              {"samples", {{"speedup", s_.speedup}, {"fraction", s_.fraction}, {"aa", s_.aa}}}};
    if (copy_bytes_ > 0) {
      const double m = median_of(s_.memcpy_ms);
      t["memcpy_ms"] = m;
      t["memcpy_gbps"] = 2.0 * copy_bytes_ / (m * 1e6);
    }
    if (library_) {
      t["library"] = p.library_name();
      t["library_ms"] = median_of(s_.library_ms);
      t["library_fraction"] = interval_json(s_.library_fraction);
    }
    if (p.flops() > 0) {
      t["baseline_gflops"] = p.flops() / (base * 1e6);
      t["candidate_gflops"] = p.flops() / (cand * 1e6);
      if (library_) t["library_gflops"] = p.flops() / (median_of(s_.library_ms) * 1e6);
    }
    t["baseline_gbps"] = bytes / (base * 1e6);
    t["candidate_gbps"] = bytes / (cand * 1e6);
    t["interference"] = {{"solo_baseline_ms", solo},
                         {"baseline_ms", base},
                         {"ratio", slowdown},
                         {"limit", interference_limit_},
                         {"speedup_scale", speedup_scale}};
    result["timing"] = t;
    result["status"] = slowdown > interference_limit_ ? "interference" : "ok";
  }

  const LabDefinition& lab_;
  const RefereeArgs& a_;
  const std::string case_;
  std::mt19937_64 rng_;
  cudaStream_t stream_ = nullptr;
  L2Flush flush_;
  ServerProcess trusted_, worker_;
  std::vector<std::unique_ptr<Problem>> trusted_sets_, candidate_sets_;
  std::vector<std::vector<std::uint64_t>> input_digests_;
  std::size_t k_ = 1, k_baseline_ = 1, copy_bytes_ = 0;
  bool host_steps_ = false, library_ = false, converged_ = false, extended_ = false;
  double interference_limit_ = 1.10;  // the lab's: baseline slower by this beside the submission, not trusted
  double warmup_ms_ = 0;
  std::vector<double> solo_baseline_;
  Samples s_;
  std::size_t candidate_batches_ = 0, verified_launches_ = 0, verified_outputs_ = 0, fresh_input_sets_ = 0;
  TimedFailure failure_;
};

}  // namespace

void time_mode(const LabDefinition& lab, const RefereeArgs& a, json& result) {
  try {
    Session(lab, a).run(result);
  } catch (const RunFailure& f) {
    result["status"] = "failed";
    result["failure"] = f.failure();
  }
}

}  // namespace memlabs
