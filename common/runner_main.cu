// The runner every lab shares: main() for a student's (or the reference)
// program built from driver.cu + kernel.cu + this file. The grader starts it as
// a child process and reads its verdict from the JSON file named by --result,
// never from stdout, which belongs to the student's code.
//
//   runner list    --result F
//   runner run     --result F --case C [--case C2 ...] --seed S --dump-dir D [--variant candidate|baseline]
//                  (each case also lists the inputs the run changed: "modified_inputs")
//   runner oracle  --result F --case C [--case C2 ...] --seed S
//   runner time    --result F --case C --seed S [--decide speedup:2.5]... [--cap-s 3]
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "lab_api.cuh"
#include "timing.cuh"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr int kProtocol = 1;

// Exit codes: the grader trusts the result file, these only help a human.
enum Exit { kOk = 0, kUsage = 2, kCudaError = 10, kFailure = 11 };

struct Args {
  std::string mode, result, nonce, dump_dir, variant = "candidate";
  std::vector<std::string> cases;  // run and oracle take several; time takes one
  std::uint64_t seed = 1;
  memlabs::TimingOptions timing;
};

class UsageError : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

Args parse_args(int argc, char** argv) {
  Args a;
  if (argc < 2) throw UsageError("missing mode (list, run, oracle, time)");
  a.mode = argv[1];
  for (int i = 2; i < argc; ++i) {
    const std::string key = argv[i];
    if (i + 1 >= argc) throw UsageError("missing value after " + key);
    const std::string value = argv[++i];
    if (key == "--result") a.result = value;
    else if (key == "--nonce") a.nonce = value;
    else if (key == "--case") a.cases.push_back(value);
    else if (key == "--seed") a.seed = std::stoull(value, nullptr, 0);
    else if (key == "--dump-dir") a.dump_dir = value;
    else if (key == "--variant") a.variant = value;
    else if (key == "--cap-s") a.timing.cap_s = std::stod(value);
    else if (key == "--min-rounds") a.timing.min_rounds = std::stoul(value);
    else if (key == "--warmup-ms") a.timing.warmup_ms = std::stod(value);
    else if (key == "--decide") {
      const auto colon = value.find(':');
      if (colon == std::string::npos) throw UsageError("--decide wants what:threshold");
      a.timing.decide.emplace_back(value.substr(0, colon), std::stod(value.substr(colon + 1)));
    } else throw UsageError("unknown option " + key);
  }
  if (a.result.empty()) throw UsageError("--result FILE is required");
  return a;
}

// Written to a temporary name and renamed, so the grader reads a whole result or none.
void write_result(const std::string& path, const json& j) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << j.dump(2) << '\n';
    if (!out) {
      std::fprintf(stderr, "runner: cannot write %s\n", tmp.c_str());
      return;
    }
  }
  fs::rename(tmp, path);
}

// Which part of the work was running when something failed: "your kernel"
// is a very different message from "the baseline".
std::string g_phase = "setup";
std::string g_case;

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

const memlabs::CaseInfo& find_case(const memlabs::LabDefinition& lab, const std::string& name) {
  for (const auto& c : lab.cases)
    if (c.name == name) return c;
  std::string known;
  for (const auto& c : lab.cases) known += (known.empty() ? "" : ", ") + c.name;
  throw UsageError("unknown case \"" + name + "\" (this driver has: " + known + ")");
}

json output_json(memlabs::Output& o, const memlabs::OutputSnapshot& s) {
  return {{"name", o.name()},
          {"dtype", memlabs::dtype_name(o.type())},
          {"count", o.count()},
          {"dims", o.dims()},
          {"rtol", o.tolerance().rtol},
          {"atol", o.tolerance().atol},
          {"unwritten", s.unwritten},
          {"first_unwritten", memlabs::format_index(s.first_unwritten, o.dims())},
          {"guard_before_intact", s.guard_before_intact},
          {"guard_after_intact", s.guard_after_intact}};
}

bool snapshot_is_clean(const memlabs::OutputSnapshot& s) {
  return s.unwritten == 0 && s.guard_before_intact && s.guard_after_intact;
}

// Poisons, runs one variant once, and checks what it wrote.
std::vector<memlabs::OutputSnapshot> run_once(memlabs::Problem& p, memlabs::Variant v, cudaStream_t s,
                                           json& result) {
  for (auto* o : p.outputs()) o->poison(s);
  CUDA_CHECK(cudaStreamSynchronize(s));
  g_phase = v == memlabs::Variant::candidate ? "candidate" : "baseline";
  p.prepare(v);
  p.run(v, s);
  CUDA_CHECK_LAUNCH();
  p.finish(v, s);  // the host's reads right after run() returns, before any wait of ours
  CUDA_CHECK(cudaStreamSynchronize(s));
  g_phase = "check";
  std::vector<memlabs::OutputSnapshot> snaps;
  result["outputs"] = json::array();
  for (auto* o : p.outputs()) {
    snaps.push_back(o->snapshot());
    result["outputs"].push_back(output_json(*o, snaps.back()));
  }
  return snaps;
}

bool all_clean(const std::vector<memlabs::OutputSnapshot>& snaps) {
  for (const auto& s : snaps)
    if (!snapshot_is_clean(s)) return false;
  return true;
}

json interval_json(const std::vector<double>& samples) {
  if (samples.empty()) return nullptr;
  const auto i = memlabs::median_interval(samples);
  return {{"median", i.median}, {"lo", i.lo}, {"hi", i.hi}, {"n", i.n}};
}

double median_of(const std::vector<double>& v) { return memlabs::median_interval(v).median; }

int mode_list(const memlabs::LabDefinition& lab, json& result) {
  result["status"] = "ok";
  result["cases"] = json::array();
  for (const auto& c : lab.cases)
    result["cases"].push_back({{"name", c.name}, {"description", c.description}});
  return kOk;
}

// Each case's record is appended before the case runs, so a crash part-way
// still tells the grader which case was running.
json& begin_case(json& result, const std::string& name) {
  result["cases"].push_back({{"case", name}, {"status", "running"}});
  g_case = name;
  g_phase = "setup";
  return result["cases"].back();
}

// The bytes of every input, read with cudaMemcpyDefault so that device and
// host inputs go the same way.
std::vector<std::vector<unsigned char>> read_inputs(const memlabs::Problem& p) {
  std::vector<std::vector<unsigned char>> copies;
  for (const auto& in : p.inputs()) {
    copies.emplace_back(in.bytes);
    if (in.bytes > 0) CUDA_CHECK(cudaMemcpy(copies.back().data(), in.data, in.bytes, cudaMemcpyDefault));
  }
  return copies;
}

// The names of the inputs whose bytes differ from `before`.
json changed_inputs(const memlabs::Problem& p, const std::vector<std::vector<unsigned char>>& before) {
  const auto after = read_inputs(p);
  const auto inputs = p.inputs();
  json names = json::array();
  for (std::size_t k = 0; k < inputs.size() && k < before.size(); ++k)
    if (after[k] != before[k]) names.push_back(inputs[k].name);
  return names;
}

int mode_run(const memlabs::LabDefinition& lab, const Args& a, cudaStream_t s, json& result) {
  if (a.dump_dir.empty()) throw UsageError("run needs --dump-dir");
  if (a.variant != "candidate" && a.variant != "baseline")
    throw UsageError("--variant is candidate or baseline");
  const auto variant =
      a.variant == "candidate" ? memlabs::Variant::candidate : memlabs::Variant::baseline;
  result["cases"] = json::array();
  bool all_ok = true;
  for (const auto& name : a.cases) {
    json& c = begin_case(result, name);
    auto p = lab.make(name, a.seed);
    // Inputs are read-only: a kernel that writes into one (through a cast)
    // may still produce the right output, so they are compared, not trusted.
    const auto inputs_before = read_inputs(*p);
    const auto snaps = run_once(*p, variant, s, c);
    c["modified_inputs"] = changed_inputs(*p, inputs_before);
    const auto dir = fs::path(a.dump_dir) / name;
    fs::create_directories(dir);
    auto outputs = p->outputs();
    for (std::size_t k = 0; k < outputs.size(); ++k) {
      const auto file = dir / (outputs[k]->name() + ".bin");
      std::ofstream out(file, std::ios::binary | std::ios::trunc);
      out.write(reinterpret_cast<const char*>(snaps[k].bytes.data()),
                static_cast<std::streamsize>(snaps[k].bytes.size()));
      if (!out) throw std::runtime_error("cannot write " + file.string());
      c["outputs"][k]["file"] = file.string();
    }
    if (variant == memlabs::Variant::candidate) {
      c["facts"] = json::array();
      for (const auto& f : p->facts()) c["facts"].push_back({{"name", f.name}, {"ok", f.ok}, {"detail", f.detail}});
    }
    c["status"] = all_clean(snaps) ? "ok" : "bad_output";
    all_ok = all_ok && all_clean(snaps);
  }
  result["status"] = all_ok ? "ok" : "bad_output";
  return kOk;
}

int mode_oracle(const memlabs::LabDefinition& lab, const Args& a, cudaStream_t s, json& result) {
  result["cases"] = json::array();
  bool all_ok = true;
  for (const auto& name : a.cases) {
    json& c = begin_case(result, name);
    auto p = lab.make(name, a.seed);
    const auto snaps = run_once(*p, memlabs::Variant::candidate, s, c);
    const auto expected = p->oracle();
    auto outputs = p->outputs();
    bool ok = all_clean(snaps) && expected.size() == outputs.size();
    for (std::size_t k = 0; k < outputs.size() && k < expected.size(); ++k) {
      auto* o = outputs[k];
      const auto cmp = memlabs::compare_values(memlabs::DType::f64, expected[k].data(), o->type(),
                                               snaps[k].bytes.data(), o->count(), o->dims(),
                                               o->tolerance());
      c["outputs"][k]["oracle"] = {{"ok", cmp.ok()},
                                   {"mismatches", cmp.mismatches},
                                   {"max_abs_error", cmp.max_abs_error},
                                   {"max_rel_error", cmp.max_rel_error},
                                   {"detail", memlabs::describe_mismatches(cmp)}};
      ok = ok && cmp.ok();
    }
    c["status"] = ok ? "ok" : "mismatch";
    all_ok = all_ok && ok;
  }
  result["status"] = all_ok ? "ok" : "mismatch";
  return kOk;
}

int mode_time(const memlabs::LabDefinition& lab, const Args& a, cudaStream_t s, json& result) {
  if (a.cases.size() != 1) throw UsageError("time takes exactly one --case");
  g_case = a.cases[0];
  result["case"] = g_case;
  auto p = lab.make(g_case, a.seed);
  // The candidate must compute the right answer at the timing size too: a
  // kernel that is only correct on the small cases does not get timed.
  json check;
  const auto want = run_once(*p, memlabs::Variant::baseline, s, check);
  const auto got = run_once(*p, memlabs::Variant::candidate, s, check);
  result["outputs"] = check["outputs"];
  auto outputs = p->outputs();
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    auto* o = outputs[k];
    const auto cmp = memlabs::compare_values(o->type(), want[k].bytes.data(), o->type(),
                                          got[k].bytes.data(), o->count(), o->dims(),
                                          o->tolerance());
    result["outputs"][k]["vs_baseline"] = {{"ok", cmp.ok()}, {"detail", memlabs::describe_mismatches(cmp)}};
    if (!snapshot_is_clean(got[k]) || !cmp.ok()) {
      result["status"] = "mismatch";
      return kOk;
    }
  }
  g_phase = "timing";
  const auto r = memlabs::time_interleaved(*p, a.timing, s);
  const double bytes = p->bytes_moved();
  json t = {{"rounds", r.rounds},
            {"warmup_ms", r.warmup_ms},
            {"wall_s", r.wall_s},
            {"converged", r.converged},
            {"extended", r.extended},
            {"bytes_moved", bytes},
            {"flops", p->flops()},
            {"baseline_ms", median_of(r.baseline_ms)},
            {"candidate_ms", median_of(r.candidate_ms)},
            {"speedup", interval_json(r.speedup)},
            {"aa", interval_json(r.aa)},
            {"fraction", interval_json(r.fraction)},
            {"samples", {{"speedup", r.speedup}, {"fraction", r.fraction}, {"aa", r.aa}}}};
  if (r.memcpy_available) {
    const double memcpy_ms = median_of(r.memcpy_ms);
    t["memcpy_ms"] = memcpy_ms;
    t["memcpy_gbps"] = 2 * r.copy_bytes / (memcpy_ms * 1e6);
  }
  if (!r.library.empty()) {
    t["library"] = r.library;
    t["library_ms"] = median_of(r.library_ms);
    t["library_fraction"] = interval_json(r.library_fraction);
  }
  if (p->flops() > 0) {
    t["baseline_gflops"] = p->flops() / (median_of(r.baseline_ms) * 1e6);
    t["candidate_gflops"] = p->flops() / (median_of(r.candidate_ms) * 1e6);
    if (!r.library.empty()) t["library_gflops"] = p->flops() / (median_of(r.library_ms) * 1e6);
  }
  t["baseline_gbps"] = bytes / (median_of(r.baseline_ms) * 1e6);
  t["candidate_gbps"] = bytes / (median_of(r.candidate_ms) * 1e6);
  result["timing"] = t;
  result["status"] = "ok";
  return kOk;
}

}  // namespace

int main(int argc, char** argv) {
  json result = {{"protocol", kProtocol}, {"status", "error"}};
  Args a;
  int code = kOk;
  try {
    a = parse_args(argc, argv);
    result["nonce"] = a.nonce;
    result["mode"] = a.mode;
    const memlabs::LabDefinition lab = memlabs::define_lab();
    if (a.mode == "list") {
      code = mode_list(lab, result);
    } else {
      if (a.cases.empty()) throw UsageError("--case is required");
      for (const auto& c : a.cases) find_case(lab, c);
      result["seed"] = a.seed;
      cudaStream_t stream = nullptr;
      CUDA_CHECK(cudaStreamCreate(&stream));
      result["device"] = device_json();
      if (a.mode == "run") code = mode_run(lab, a, stream, result);
      else if (a.mode == "oracle") code = mode_oracle(lab, a, stream, result);
      else if (a.mode == "time") code = mode_time(lab, a, stream, result);
      else throw UsageError("unknown mode \"" + a.mode + "\"");
      cudaStreamDestroy(stream);
    }
  } catch (const UsageError& e) {
    result["status"] = "usage";
    result["error"] = {{"kind", "usage"}, {"message", e.what()}};
    code = kUsage;
  } catch (const memlabs::CudaError& e) {
    result["status"] = "cuda_error";
    result["error"] = {{"kind", "cuda"},
                       {"name", cudaGetErrorName(e.code())},
                       {"message", cudaGetErrorString(e.code())},
                       {"call", e.call()},
                       {"where", fs::path(e.file()).filename().string() + ":" + std::to_string(e.line())},
                       {"phase", g_phase},
                       {"case", g_case}};
    code = kCudaError;
  } catch (const std::exception& e) {
    result["status"] = "error";
    result["error"] = {{"kind", "exception"}, {"message", e.what()}, {"phase", g_phase}, {"case", g_case}};
    code = kFailure;
  }
  if (!a.result.empty()) write_result(a.result, result);
  else std::fprintf(stderr, "runner: %s\n", result.dump().c_str());
  return code;
}
